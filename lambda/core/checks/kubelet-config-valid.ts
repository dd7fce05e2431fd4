import { effectiveAmiFamily } from '../ami-family.js';
import {
  defineCheck,
  type FindingDraft,
  forEachNodeClass,
  versionReadFault,
  versionUnreadDraft,
} from '../check.js';
import { UNKNOWN_FIELD_OUTCOME } from '../crd-fields.js';
import { type CrdRuleRelease, crdRuleRelease } from '../crd-releases.js';
import {
  KUBELET_CRD_FIELDS,
  KUBELET_EVICTION_SIGNALS,
  KUBELET_RESERVED_RESOURCES,
  kubeletCrdViolations,
} from '../crd-rules.js';
import type { ResourceRef } from '../model.js';
import { type EC2NodeClass, formatPath } from '../schema.js';
import { didYouMean } from '../suggest.js';

// Who validates `spec.kubelet` depends on the release. Every Karpenter release up to v1.14.1 types
// it in the EC2NodeClass CRD: the API server refuses a breaking object at apply
// (crd-rules.ts `kubeletCrdViolations`). Karpenter's main branch after v1.14.1 (#9461) makes it an
// open map and validates it in the nodeclass controller, which sets ValidationSucceeded=False (the
// class is not Ready, nothing launches); the rules below are those, from
// https://github.com/aws/karpenter-provider-aws/blob/main/pkg/apis/v1/kubeletconfiguration_validation.go
// and pkg/controllers/nodeclass/validation.go. Unknown upstream kubelet field names are not
// reported there: that needs the upstream KubeletConfiguration field list of the Karpenter build.
// With the installed CRD at hand its schema decides: nodeclass-schema-valid reports its verdict
// unless the CRD leaves spec.kubelet open.

const THRESHOLD_MAPS = ['evictionHard', 'evictionSoft', 'evictionMinimumReclaim'];
/** Fields Karpenter reads and renders itself; every AMI family applies them. */
const MANAGED_FIELDS = [
  'clusterDNS',
  'maxPods',
  'podsPerCore',
  'systemReserved',
  'kubeReserved',
  'evictionHard',
  'evictionSoft',
  'evictionSoftGracePeriod',
  'evictionMaxPodGracePeriod',
  'imageGCHighThresholdPercent',
  'imageGCLowThresholdPercent',
  'cpuCFSQuota',
];
const INTEGER_FIELDS = [
  'podsPerCore',
  'evictionMaxPodGracePeriod',
  'imageGCHighThresholdPercent',
  'imageGCLowThresholdPercent',
];
const STRING_MAP_FIELDS = [
  'systemReserved',
  'kubeReserved',
  'evictionHard',
  'evictionSoft',
  'evictionSoftGracePeriod',
  'evictionMinimumReclaim',
];
const QUANTITY =
  /^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$/;
const GO_DURATION = /^[-+]?(0|((([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(ns|us|µs|μs|ms|s|m|h))+)$/;
const DECIMAL = /^[-+]?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))([eE][-+]?[0-9]+)?$/;
/** Where a NodeClass sets an AMI family whose bootstrap has no podsPerCore setting. */
const NO_PODS_PER_CORE = ['Bottlerocket'];

interface Violation {
  readonly path: string;
  readonly rule: string;
  readonly message: string;
}

type Kubelet = Readonly<Record<string, unknown>>;

function isStringMap(value: unknown): value is Record<string, string> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.values(value).every((entry) => typeof entry === 'string')
  );
}

function isInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value);
}

function sorted(record: Readonly<Record<string, string>>): string[] {
  return Object.keys(record).sort();
}

/** Type errors against the upstream kubelet configuration type, for the fields Karpenter reads. */
function typeViolations(kubelet: Kubelet, at: (...p: PropertyKey[]) => string): Violation[] {
  const out: Violation[] = [];
  const add = (field: string, expected: string) =>
    out.push({ path: at(field), rule: 'type', message: `must be ${expected}` });
  for (const field of INTEGER_FIELDS) {
    if (kubelet[field] !== undefined && !isInteger(kubelet[field])) add(field, 'an integer');
  }
  // maxPods: an integer, or a CEL expression evaluated per instance type (e.g. "vcpus * 10").
  const maxPods = kubelet.maxPods;
  if (maxPods !== undefined && !isInteger(maxPods) && typeof maxPods !== 'string') {
    add('maxPods', 'an integer or a CEL expression string');
  }
  for (const field of STRING_MAP_FIELDS) {
    if (kubelet[field] !== undefined && !isStringMap(kubelet[field])) {
      add(field, 'a map of strings');
    }
  }
  const dns = kubelet.clusterDNS;
  if (dns !== undefined && !(Array.isArray(dns) && dns.every((ip) => typeof ip === 'string'))) {
    add('clusterDNS', 'a list of strings');
  }
  if (kubelet.cpuCFSQuota !== undefined && typeof kubelet.cpuCFSQuota !== 'boolean') {
    add('cpuCFSQuota', 'a boolean');
  }
  return out;
}

function thresholdProblem(value: string): string | undefined {
  if (value.endsWith('%')) {
    const number = value.slice(0, -1);
    const parsed = Number(number);
    return DECIMAL.test(number) && parsed >= 0 && parsed <= 100
      ? undefined
      : 'must be a percentage or a resource quantity';
  }
  if (!QUANTITY.test(value)) return 'must be a percentage or a resource quantity';
  return value.startsWith('-') && Number.parseFloat(value) !== 0
    ? "can't be a negative resource quantity"
    : undefined;
}

function durationProblem(value: string): string | undefined {
  if (!GO_DURATION.test(value)) return 'must be a duration (e.g. "30s", "2m")';
  return value.startsWith('-') && /[1-9]/.test(value) ? "can't be a negative duration" : undefined;
}

/** Semantic rules: map keys, value forms, ranges and field relations. */
function semanticViolations(kubelet: Kubelet, at: (...p: PropertyKey[]) => string): Violation[] {
  const out: Violation[] = [];
  if (kubelet.registerWithTaints !== undefined) {
    out.push({
      path: at('registerWithTaints'),
      rule: 'karpenter-owned',
      message:
        "can't be set, Karpenter sets it from the NodeClaim's taints so the node registers unschedulable until it's ready",
    });
  }
  const maps: Record<string, Record<string, string>> = {};
  for (const field of STRING_MAP_FIELDS) {
    const value = kubelet[field];
    if (isStringMap(value)) maps[field] = value;
  }
  for (const field of [...THRESHOLD_MAPS, 'evictionSoftGracePeriod']) {
    const signals = maps[field];
    if (signals === undefined) continue;
    for (const key of sorted(signals)) {
      if (!KUBELET_EVICTION_SIGNALS.includes(key)) {
        out.push({
          path: at(field, key),
          rule: 'eviction-signal',
          message: `"${key}" isn't a valid eviction signal, must be one of ${KUBELET_EVICTION_SIGNALS.join(', ')}`,
        });
      }
      const value = signals[key] ?? '';
      const problem =
        field === 'evictionSoftGracePeriod' ? durationProblem(value) : thresholdProblem(value);
      if (problem !== undefined) {
        out.push({ path: at(field, key), rule: 'value', message: `"${value}" ${problem}` });
      }
    }
  }
  const soft = maps.evictionSoft ?? {};
  const grace = maps.evictionSoftGracePeriod ?? {};
  for (const signal of sorted(soft).filter((key) => !Object.hasOwn(grace, key))) {
    out.push({
      path: at('evictionSoft', signal),
      rule: 'eviction-soft-grace-period',
      message: 'has no matching evictionSoftGracePeriod (the kubelet ignores the threshold)',
    });
  }
  for (const signal of sorted(grace).filter((key) => !Object.hasOwn(soft, key))) {
    out.push({
      path: at('evictionSoftGracePeriod', signal),
      rule: 'eviction-grace-period-soft',
      message: 'has no matching evictionSoft',
    });
  }
  for (const field of ['kubeReserved', 'systemReserved']) {
    const reserved = maps[field];
    if (reserved === undefined) continue;
    for (const key of sorted(reserved)) {
      if (!KUBELET_RESERVED_RESOURCES.includes(key)) {
        out.push({
          path: at(field, key),
          rule: 'reservable-resource',
          message: `"${key}" isn't a reservable resource, must be one of ${KUBELET_RESERVED_RESOURCES.join(', ')}`,
        });
      }
      // Values may be CEL expressions, so only a negative sign is rejected.
      if (reserved[key]?.startsWith('-')) {
        out.push({
          path: at(field, key),
          rule: 'not-negative',
          message: `"${reserved[key]}" can't be a negative resource quantity`,
        });
      }
    }
  }
  for (const field of ['imageGCHighThresholdPercent', 'imageGCLowThresholdPercent']) {
    const value = kubelet[field];
    if (isInteger(value) && (value < 0 || value > 100)) {
      out.push({ path: at(field), rule: 'range', message: `${value} must be between 0 and 100` });
    }
  }
  // An expression maxPods is bounds-checked per instance type, so only integers are checked here.
  for (const field of ['podsPerCore', 'evictionMaxPodGracePeriod', 'maxPods']) {
    const value = kubelet[field];
    if (isInteger(value) && value < 0) {
      out.push({ path: at(field), rule: 'not-negative', message: `${value} can't be negative` });
    }
  }
  const high = kubelet.imageGCHighThresholdPercent;
  const low = kubelet.imageGCLowThresholdPercent;
  if (isInteger(high) && isInteger(low) && high <= low) {
    out.push({
      path: at(),
      rule: 'image-gc-thresholds',
      message: `imageGCHighThresholdPercent (${high}) must be greater than imageGCLowThresholdPercent (${low})`,
    });
  }
  return out;
}

/** Fields the class's AMI family would drop: only AL2023 renders the whole config; Custom is exempt. */
function familyViolations(
  nodeClass: EC2NodeClass,
  kubelet: Kubelet,
  at: (...p: PropertyKey[]) => string
): Violation[] {
  const family = effectiveAmiFamily(nodeClass.spec);
  if (family === undefined || family === 'Custom' || family === 'AL2023') return [];
  const out: Violation[] = [];
  const unsupported = Object.keys(kubelet).filter((key) => !MANAGED_FIELDS.includes(key));
  if (kubelet.podsPerCore !== undefined && NO_PODS_PER_CORE.includes(family)) {
    unsupported.push('podsPerCore');
  }
  if (unsupported.length > 0) {
    out.push({
      path: at(),
      rule: 'ami-family-fields',
      message: `has fields not applied by the ${family} AMI family that would be silently dropped: ${unsupported.sort().join(', ')}`,
    });
  }
  const dns = kubelet.clusterDNS;
  if (Array.isArray(dns) && dns.length > 1) {
    out.push({
      path: at('clusterDNS'),
      rule: 'ami-family-cluster-dns',
      message: `the ${family} AMI family doesn't accept multiple entries, only one, but ${dns.length} were set`,
    });
  }
  return out;
}

const CONTROLLER_OUTCOME =
  "Karpenter's controller rejects this kubelet configuration (ValidationSucceeded=False): the EC2NodeClass is not Ready and launches no nodes.";

/** Who decides: the release's CRD at apply, or the controller after admission. */
type Mechanism =
  | { readonly kind: 'api-server'; readonly release: CrdRuleRelease }
  | { readonly kind: 'controller'; readonly why: string };

function mechanismEvidence(mechanism: Mechanism): Record<string, unknown> {
  return mechanism.kind === 'api-server'
    ? { mechanism: 'api-server', rules: mechanism.release.note }
    : { mechanism: 'controller', rules: mechanism.why };
}

function draft(resource: ResourceRef, violation: Violation, mechanism: Mechanism): FindingDraft {
  const located = {
    resource,
    discriminator: `${violation.path}#${violation.rule}`,
    location: { path: violation.path },
    evidence: { path: violation.path, rule: violation.rule, ...mechanismEvidence(mechanism) },
  };
  if (mechanism.kind === 'controller') {
    return {
      ...located,
      status: 'fail',
      message: `${violation.path}: ${violation.message}. ${CONTROLLER_OUTCOME}`,
    };
  }
  const { label } = mechanism.release;
  if (violation.rule === 'unknown-field') {
    const key = violation.path.slice('spec.kubelet.'.length);
    const near = didYouMean(key, KUBELET_CRD_FIELDS);
    return {
      ...located,
      status: 'fail',
      severity: 'high',
      message: `${violation.path}: unknown field: ${label}'s CRD types spec.kubelet and has no field "${key}"${near}. ${UNKNOWN_FIELD_OUTCOME}`,
      remediation: `Remove ${violation.path}${near === '' ? '' : `, or correct its name${near}`}; ${label} sets only ${KUBELET_CRD_FIELDS.join(', ')}.`,
    };
  }
  return {
    ...located,
    status: 'fail',
    severity: 'high',
    message: `${violation.path}: ${violation.message}. The API server refuses this EC2NodeClass at apply: ${label}'s CRD validates spec.kubelet.`,
    remediation: `Fix ${violation.path} as the message says; until then kubectl apply (or the GitOps sync) fails and Karpenter keeps the EC2NodeClass it had.`,
  };
}

/** A setting the release admits but the AMI family's bootstrap does not apply. */
function ignoredDraft(resource: ResourceRef, violation: Violation, release: CrdRuleRelease) {
  return {
    status: 'notice' as const,
    resource,
    message: `${violation.path}: ${violation.message}. ${release.label} admits it and launches the nodes without the setting (it does not validate this).`,
    evidence: {
      path: violation.path,
      rule: violation.rule,
      ...mechanismEvidence({ kind: 'api-server', release }),
    },
    discriminator: `${violation.path}#${violation.rule}`,
    location: { path: violation.path },
  };
}

/** Karpenter's main-branch controller rules (spec.kubelet open in the CRD). */
function controllerViolations(
  nodeClass: EC2NodeClass,
  kubelet: Kubelet,
  at: (...p: PropertyKey[]) => string
): Violation[] {
  // Wrong-typed fields are reported once, as type errors; the other rules skip them.
  return [
    ...typeViolations(kubelet, at),
    ...semanticViolations(kubelet, at),
    ...familyViolations(nodeClass, kubelet, at),
  ];
}

/**
 * `spec.kubelet` passes the validation of the cluster's Karpenter release: the EC2NodeClass CRD's
 * schema up to v1.14.1 (the API server refuses the object), the controller's after it (the class
 * is not Ready). With the installed CRD at hand, its schema decides (nodeclass-schema-valid).
 */
export const kubeletConfigValid = defineCheck({
  id: 'kubelet-config-valid',
  title: 'EC2NodeClass kubelet configuration passes Karpenter’s validation',
  group: 'spec',
  severity: 'critical',
  inputs: ['spec'],
  rationale:
    "Every Karpenter release up to v1.14.1 validates spec.kubelet in the EC2NodeClass CRD, so the API server refuses a bad object and kubectl apply or the GitOps sync fails; where the CRD leaves spec.kubelet open (Karpenter's main branch after v1.14.1), the controller rejects it later with ValidationSucceeded=False, the EC2NodeClass never becomes Ready and no node launches from it.",
  remediation:
    'Fix each reported spec.kubelet field as the message says; the finding names who rejects it for your release: the API server at apply, or the controller (the EC2NodeClass is not Ready).',
  references: [
    'https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml',
    'https://github.com/aws/karpenter-provider-aws/blob/main/pkg/apis/v1/kubeletconfiguration_validation.go',
    'https://karpenter.sh/docs/concepts/nodeclasses/#speckubelet',
    'docs/admission-by-release.md',
  ],
  material: ['path', 'rule'],
  evaluate: (inventory) =>
    forEachNodeClass(inventory, (nodeClass, { resource, cluster, entry }) => {
      const kubelet = nodeClass.spec.kubelet;
      if (kubelet === undefined || Object.keys(kubelet).length === 0) return [];
      const at = (...path: PropertyKey[]) => formatPath(['spec', 'kubelet', ...path]);
      const admission = entry.admission;
      // Without the installed CRD, the rules are the release's: unknown on a read fault.
      const faulted = admission === undefined ? versionReadFault(cluster) : undefined;
      if (faulted) return [versionUnreadDraft(resource, faulted, cluster)];
      const release = crdRuleRelease(cluster.karpenterVersion);
      let mechanism: Mechanism;
      if (admission !== undefined) {
        // The installed CRD validated spec.kubelet: nodeclass-schema-valid reports its verdict.
        if (!admission.openPaths.includes('spec.kubelet')) return [];
        mechanism = {
          kind: 'controller',
          why: `the installed CRD (${admission.crd}) leaves spec.kubelet open: Karpenter's controller validates it`,
        };
      } else if (release.kubeletInCrd) {
        mechanism = { kind: 'api-server', release };
      } else {
        mechanism = { kind: 'controller', why: release.note };
      }
      const drafts: FindingDraft[] = [];
      if (mechanism.kind === 'api-server') {
        drafts.push(...kubeletCrdViolations(kubelet).map((v) => draft(resource, v, mechanism)));
        // Admitted, but the AMI family's bootstrap drops the setting (no validation rejects it).
        const known: readonly string[] = KUBELET_CRD_FIELDS;
        const typed = Object.fromEntries(
          Object.entries(kubelet).filter(([k]) => known.includes(k))
        );
        for (const ignored of familyViolations(nodeClass, typed, at)) {
          drafts.push(ignoredDraft(resource, ignored, release));
        }
      } else {
        for (const violation of controllerViolations(nodeClass, kubelet, at)) {
          drafts.push(draft(resource, violation, mechanism));
        }
      }
      if (drafts.length > 0) return drafts;
      return [
        {
          status: 'pass',
          resource,
          message:
            mechanism.kind === 'api-server'
              ? `spec.kubelet passes the kubelet rules of ${release.label}'s CRD.`
              : 'spec.kubelet passes Karpenter’s kubelet validation.',
          evidence: mechanismEvidence(mechanism),
        },
      ];
    }),
});
