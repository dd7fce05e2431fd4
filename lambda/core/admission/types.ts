import type { CrdViolation } from '../crd-rules.js';

// The contract between reading Karpenter's installed CRDs (cluster, world file, manifests, --crd)
// and the checks that report what the API server would admit.

/** Where a CRD document came from, for messages ("validated with <location>"). */
export interface CrdOrigin {
  readonly kind: 'cluster' | 'world' | 'manifest' | 'file';
  /** Human-readable: "cluster prod@eu-west-1", "crds/karpenter.k8s.aws_ec2nodeclasses.yaml". */
  readonly location: string;
}

/** One CustomResourceDefinition document as read, not yet trusted. */
export interface CrdDocument {
  /** metadata.name, e.g. `ec2nodeclasses.karpenter.k8s.aws`. */
  readonly name: string;
  readonly document: unknown;
  readonly origin: CrdOrigin;
}

/** What the API server decides for one object under one installed CRD. */
export interface AdmissionVerdict {
  /** Which CRD decided: "ec2nodeclasses.karpenter.k8s.aws from cluster prod@eu-west-1". */
  readonly crd: string;
  /** Served version evaluated, e.g. `v1`. */
  readonly version: string;
  /** Schema, enum, pattern, CEL … violations; messages are the CRD's own where it gives one. */
  readonly violations: readonly CrdViolation[];
  /** Paths of fields the structural schema does not know (the API server prunes or rejects them). */
  readonly pruned: readonly string[];
  /** The object after the CRD's defaults were applied (what the other checks should read). */
  readonly defaulted: unknown;
  /** Paths (dotted, e.g. `spec.kubelet`) whose schema keeps unknown fields (open maps the CRD does not validate). */
  readonly openPaths: readonly string[];
  /** Transition rules (`oldSelf`) skipped: they apply only to updates, never to one object. */
  readonly skippedTransitionRules: number;
}

/** The CRD-driven admission state of one cluster (or of a manifest scan). */
export interface ClusterCrds {
  readonly nodeClass?: CrdDocument;
  readonly nodePool?: CrdDocument;
  /** Why a CRD could not be read or used (the built-in rules of the release decide instead). */
  readonly unavailable?: string;
  /** Set when the API server forbade reading a CRD (HTTP 403): the scanner's RBAC lacks it. */
  readonly denied?: boolean;
}

/** One installed CRD compiled for admission (patterns and CEL rules compiled once). */
export interface CrdAdmission {
  /** "ec2nodeclasses.karpenter.k8s.aws from cluster prod@eu-west-1". */
  readonly crd: string;
  review(object: unknown): AdmissionVerdict;
}
