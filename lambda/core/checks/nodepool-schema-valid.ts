import type { AdmissionVerdict } from '../admission/types.js';
import {
  defineCheck,
  type FindingDraft,
  KARPENTER_VERSION_ANNOTATION,
  nodePoolRef,
} from '../check.js';
import { type FieldScanOptions, unknownNodePoolFields } from '../crd-fields.js';
import { type CrdRuleRelease, crdRuleRelease } from '../crd-releases.js';
import { nodePoolCrdViolations, objectNameViolations } from '../crd-rules.js';
import { clusterOf, type NodePoolEntry } from '../inventory.js';
import type { ResourceRef } from '../model.js';
import { type NodeSelectorRequirement, nodePoolRequirements } from '../nodepool-requirements.js';
import { NODEPOOL_API_VERSION, type NodePool } from '../schema.js';
import { type KarpenterVersion, parseKarpenterVersion } from '../version.js';
import {
  admissionDrafts,
  admissionEvidence,
  releaseEvidence,
  structuralDrafts,
  unknownFieldDraft,
  violationDraft,
  withRules,
} from './support/schema-findings.js';

const MIGRATION_GUIDE = 'https://karpenter.sh/docs/upgrading/v1-migration/';

function unservedApiVersion(resource: ResourceRef, apiVersion: string): FindingDraft {
  const legacy = apiVersion === 'karpenter.sh/v1beta1';
  return {
    ...violationDraft(
      resource,
      'apiVersion',
      'api-version',
      legacy
        ? `${apiVersion} is no longer served by Karpenter v1; migrate this NodePool to ${NODEPOOL_API_VERSION}.`
        : `${apiVersion} is not served by Karpenter v1; use ${NODEPOOL_API_VERSION}.`,
      { apiVersion }
    ),
    remediation: legacy
      ? `Rewrite the object as ${NODEPOOL_API_VERSION} (${MIGRATION_GUIDE}): nodeClassRef takes group/kind/name, disruption.consolidateAfter is required, expireAfter moves to spec.template.spec, and kubelet settings move to the EC2NodeClass.`
      : `Set apiVersion: ${NODEPOOL_API_VERSION} and check the spec against the v1 CRD.`,
  };
}

/** Exists/DoesNotExist with values: admitted, but the values are ignored, which hides a mistake. */
function ignoredValues(
  resource: ResourceRef,
  requirements: readonly NodeSelectorRequirement[]
): FindingDraft[] {
  return requirements.flatMap((requirement, index) => {
    const takesNoValues =
      requirement.operator === 'Exists' || requirement.operator === 'DoesNotExist';
    if (!takesNoValues || (requirement.values ?? []).length === 0) return [];
    return [
      {
        ...violationDraft(
          resource,
          `spec.template.spec.requirements[${index}].values`,
          'values-ignored',
          `operator ${requirement.operator} takes no values; the API server admits them but they restrict nothing (did you mean In or NotIn?).`
        ),
        severity: 'low' as const,
        remediation: `Remove the values, or use In/NotIn to restrict ${requirement.key} to (or away from) them.`,
      },
    ];
  });
}

function evaluateParsed(
  resource: ResourceRef,
  nodePool: NodePool,
  raw: unknown,
  fields: FieldScanOptions,
  release: CrdRuleRelease
): FindingDraft[] {
  const evidence = releaseEvidence(release);
  const drafts: FindingDraft[] = [
    ...objectNameViolations(nodePool.metadata.name),
    ...nodePoolCrdViolations(nodePool, release),
  ].map((violation) =>
    violationDraft(resource, violation.path, violation.rule, violation.message, evidence)
  );
  const nodeClass = nodePool.spec.template.spec.nodeClassRef.name;
  // The object as written: a field the release lacks is unknown even when set to null.
  for (const field of unknownNodePoolFields(raw ?? nodePool, { ...fields, nodeClass })) {
    const draft = unknownFieldDraft(resource, field, NODEPOOL_API_VERSION, 'NodePool');
    drafts.push(withRules(draft, evidence));
  }
  drafts.push(...ignoredValues(resource, nodePoolRequirements(nodePool)));
  return drafts;
}

/** The NodePool's own nodeclass-scanner/karpenter-version annotation, else the cluster's version. */
function versionOf(
  cluster: KarpenterVersion | undefined,
  nodePool: NodePool
): KarpenterVersion | undefined {
  const annotated = nodePool.metadata.annotations?.[KARPENTER_VERSION_ANNOTATION];
  return parseKarpenterVersion(annotated) ?? cluster;
}

/** The installed CRD decided: its verdict (the object's structure as the scanner reads it aside). */
function byAdmission(
  entry: NodePoolEntry,
  resource: ResourceRef,
  admission: AdmissionVerdict
): FindingDraft[] {
  const drafts = admissionDrafts(resource, admission, NODEPOOL_API_VERSION, 'NodePool');
  if (!entry.parsed.ok) {
    // The other NodePool checks skip an object that does not parse and point here: never pass it.
    if (drafts.length === 0) drafts.push(...structuralDrafts(resource, entry.parsed.issues));
    return drafts;
  }
  drafts.push(...ignoredValues(resource, nodePoolRequirements(entry.parsed.value)));
  if (drafts.length > 0) return drafts;
  const skipped =
    admission.skippedTransitionRules > 0
      ? ` (${admission.skippedTransitionRules} transition rules on oldSelf skipped: they apply to updates only)`
      : '';
  return [
    {
      status: 'pass',
      resource,
      message: `Valid ${NODEPOOL_API_VERSION} NodePool: the installed CRD admits it${skipped}.`,
      evidence: admissionEvidence(admission),
    },
  ];
}

/**
 * The object is a valid `karpenter.sh/v1` NodePool: it parses structurally and meets the rules of
 * Karpenter's NodePool CRD (requirement operators and restricted label keys, minValues, disruption
 * budgets, durations, nodeClassRef). The API server rejects an object breaking any of them. With
 * the installed CRD at hand (`entry.admission`), the CRD's verdict; otherwise the built-in rules of
 * the Karpenter release (release table in `crd-releases.ts`).
 */
export const nodePoolSchemaValid = defineCheck({
  id: 'nodepool-schema-valid',
  title: 'NodePool is a valid karpenter.sh/v1 object (types and CRD rules)',
  group: 'spec',
  severity: 'critical',
  inputs: ['spec'],
  scope: ['NodePool'],
  rationale:
    'The API server rejects a NodePool that breaks the karpenter.sh/v1 CRD (requirement operators, restricted label keys, minValues, budgets, durations, nodeClassRef): the apply fails and Karpenter keeps the old NodePool or has none. Fields the CRD lacks (the v1beta1 kubelet) are rejected by kubectl or silently dropped; Exists requirements with values restrict nothing.',
  remediation:
    'Fix each reported field as the message says; the API server rejects the NodePool (or it was stored without validation) and Karpenter launches nothing from it.',
  references: [
    'https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/apis/crds/karpenter.sh_nodepools.yaml',
    'https://github.com/aws/karpenter-provider-aws/blob/v1.0.0/pkg/apis/crds/karpenter.sh_nodepools.yaml',
    'docs/admission-by-release.md',
    'https://karpenter.sh/docs/concepts/nodepools/',
    MIGRATION_GUIDE,
    'https://kubernetes.io/docs/reference/using-api/api-concepts/#field-validation',
  ],
  material: ['path', 'rule', 'apiVersion'],
  evaluate: (inventory) =>
    inventory.nodePools.flatMap((entry): readonly FindingDraft[] => {
      const resource = nodePoolRef(entry);
      const apiVersion = entry.parsed.ok ? entry.parsed.value.apiVersion : undefined;
      if (apiVersion !== undefined && apiVersion !== NODEPOOL_API_VERSION) {
        return [unservedApiVersion(resource, apiVersion)];
      }
      if (entry.admission !== undefined) return byAdmission(entry, resource, entry.admission);
      if (!entry.parsed.ok) return structuralDrafts(resource, entry.parsed.issues);
      const nodePool = entry.parsed.value;
      const version = versionOf(clusterOf(inventory, entry.cluster)?.karpenterVersion, nodePool);
      const release = crdRuleRelease(version);
      const stored = entry.source === undefined;
      const drafts = evaluateParsed(resource, nodePool, entry.raw, { version, stored }, release);
      if (drafts.length > 0) return drafts;
      return [
        {
          status: 'pass',
          resource,
          message: `Valid ${NODEPOOL_API_VERSION} NodePool: types and every CRD rule hold.`,
          evidence: releaseEvidence(release),
        },
      ];
    }),
});
