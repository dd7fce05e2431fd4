import type { AdmissionVerdict } from '../admission/types.js';
import {
  contextOverridesOf,
  defineCheck,
  effectiveCluster,
  type FindingDraft,
  invalidOverrideOutcome,
  KARPENTER_VERSION_ANNOTATION,
  nodeClassRef,
} from '../check.js';
import { unknownNodeClassFields } from '../crd-fields.js';
import { crdRuleRelease } from '../crd-releases.js';
import { type CrdViolation, crdViolations, objectNameViolations } from '../crd-rules.js';
import { clusterOf, type NodeClassEntry } from '../inventory.js';
import type { ResourceRef } from '../model.js';
import { type EC2NodeClass, formatPath } from '../schema.js';
import {
  admissionDrafts,
  admissionEvidence,
  releaseEvidence,
  structuralDrafts,
  unknownFieldDraft,
  violationDraft,
  withRules,
} from './support/schema-findings.js';
import { CEL_RESTRICTED_TAG_RULES } from './tags-not-restricted.js';

const SERVED_API_VERSION = 'karpenter.k8s.aws/v1';

const MIGRATION_GUIDE = 'https://karpenter.sh/docs/upgrading/v1-migration/';

function unservedApiVersion(entry: NodeClassEntry, resource: ResourceRef): FindingDraft {
  const legacy = entry.apiVersion === 'karpenter.k8s.aws/v1beta1';
  return {
    ...violationDraft(
      resource,
      'apiVersion',
      'api-version',
      legacy
        ? `${entry.apiVersion} is no longer served by Karpenter v1; migrate this EC2NodeClass to ${SERVED_API_VERSION}.`
        : `${entry.apiVersion} is not served by Karpenter v1; use ${SERVED_API_VERSION}.`,
      { apiVersion: entry.apiVersion }
    ),
    remediation: legacy
      ? `Rewrite the object as ${SERVED_API_VERSION} (${MIGRATION_GUIDE}): amiSelectorTerms is required (use an alias such as al2023@<version> instead of amiFamily alone), kubelet settings move from the NodePool to the EC2NodeClass, and exactly one of role/instanceProfile is set.`
      : `Set apiVersion: ${SERVED_API_VERSION} and check the spec against the v1 CRD.`,
  };
}

/** Restricted spec.tags keys: tags-not-restricted reports them, with the runtime context. */
function reportedByTagsCheck(violation: CrdViolation): boolean {
  return (
    violation.path.startsWith('spec.tags') &&
    CEL_RESTRICTED_TAG_RULES.some((rule) => rule.message === violation.message)
  );
}

function contextAnnotationDrafts(resource: ResourceRef, nodeClass: EC2NodeClass): FindingDraft[] {
  return contextOverridesOf(nodeClass)
    .filter((override) => !override.valid)
    .map((override) => {
      const path = formatPath(['metadata', 'annotations', override.annotation]);
      const expected =
        override.annotation === KARPENTER_VERSION_ANNOTATION
          ? 'a version such as 1.7.0 or v1.2.1'
          : 'a region name such as us-east-1';
      return {
        ...violationDraft(
          resource,
          path,
          'context-annotation',
          `"${override.value}" is not ${expected}; the annotation is ignored and the cluster's value is used.`,
          { annotation: override.annotation, value: override.value }
        ),
        ...invalidOverrideOutcome(override),
        remediation: `Set ${override.annotation} to ${expected}, or remove it.`,
      };
    });
}

/** The installed CRD decided: its verdict, and the scanner's own structural findings if it admits. */
function byAdmission(
  entry: NodeClassEntry,
  resource: ResourceRef,
  admission: AdmissionVerdict
): FindingDraft[] {
  const drafts = admissionDrafts(
    resource,
    admission,
    SERVED_API_VERSION,
    'EC2NodeClass',
    reportedByTagsCheck
  );
  if (!entry.parsed.ok) {
    // The other checks skip an object that does not parse and point here: never pass it.
    if (drafts.length === 0) drafts.push(...structuralDrafts(resource, entry.parsed.issues));
    return drafts;
  }
  drafts.push(...contextAnnotationDrafts(resource, entry.parsed.value));
  if (drafts.length > 0) return drafts;
  const skipped =
    admission.skippedTransitionRules > 0
      ? ` (${admission.skippedTransitionRules} transition rules on oldSelf skipped: they apply to updates only)`
      : '';
  return [
    {
      status: 'pass',
      resource,
      message: `Valid karpenter.k8s.aws/v1 EC2NodeClass: the installed CRD admits it${skipped}.`,
      evidence: admissionEvidence(admission),
    },
  ];
}

/**
 * The object is a valid `karpenter.k8s.aws/v1` EC2NodeClass. With the installed CRD at hand
 * (`entry.admission`), the CRD's verdict; otherwise the built-in rules of the cluster's Karpenter
 * release (`crd-rules.ts`, `crd-fields.ts`, release table in `crd-releases.ts`). `spec.kubelet` is
 * kubelet-config-valid's unless the installed CRD validated it. Also reports scanner context
 * annotations whose value is unusable (they are ignored by the other checks).
 */
export const nodeClassSchemaValid = defineCheck({
  id: 'nodeclass-schema-valid',
  title: 'EC2NodeClass is a valid karpenter.k8s.aws/v1 object (types and CRD rules)',
  group: 'spec',
  severity: 'high',
  inputs: ['spec'],
  rationale:
    "The API server rejects an EC2NodeClass that breaks the v1 CRD's types or validation rules, so kubectl apply or a GitOps sync fails and the change never reaches Karpenter; Karpenter v1 does not serve v1beta1 objects at all. Fields the CRD lacks are rejected by kubectl or dropped silently.",
  remediation:
    'Fix each reported field as the message says; the API server would reject the object (or did not validate it).',
  references: [
    'https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/apis/v1/ec2nodeclass.go',
    'https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml',
    'https://github.com/aws/karpenter-provider-aws/blob/v1.0.0/pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml',
    'docs/admission-by-release.md',
    MIGRATION_GUIDE,
    'https://kubernetes.io/docs/reference/using-api/api-concepts/#field-validation',
  ],
  material: ['path', 'rule', 'apiVersion'],
  evaluate: (inventory) =>
    inventory.nodeClasses.flatMap((entry): readonly FindingDraft[] => {
      const resource = nodeClassRef(entry);
      if (entry.apiVersion !== SERVED_API_VERSION) return [unservedApiVersion(entry, resource)];
      if (entry.admission !== undefined) return byAdmission(entry, resource, entry.admission);
      if (!entry.parsed.ok) return structuralDrafts(resource, entry.parsed.issues);
      const nodeClass = entry.parsed.value;
      const cluster = clusterOf(inventory, entry.cluster) ?? {
        name: entry.cluster,
        partition: 'aws' as const,
      };
      const version = effectiveCluster(cluster, nodeClass).cluster.karpenterVersion;
      const release = crdRuleRelease(version);
      const evidence = releaseEvidence(release);
      const drafts: FindingDraft[] = [
        ...objectNameViolations(nodeClass.metadata.name),
        ...crdViolations(nodeClass.spec, release),
      ].map((violation) =>
        violationDraft(resource, violation.path, violation.rule, violation.message, evidence)
      );
      const stored = entry.source === undefined;
      // The object as written: a field the release lacks is unknown even when set to null.
      for (const field of unknownNodeClassFields(entry.raw ?? nodeClass, { version, stored })) {
        const draft = unknownFieldDraft(resource, field, SERVED_API_VERSION, 'EC2NodeClass');
        drafts.push(withRules(draft, evidence));
      }
      drafts.push(...contextAnnotationDrafts(resource, nodeClass));
      if (drafts.length > 0) return drafts;
      return [
        {
          status: 'pass',
          resource,
          message: 'Valid karpenter.k8s.aws/v1 EC2NodeClass: types and every CRD rule hold.',
          evidence,
        },
      ];
    }),
});
