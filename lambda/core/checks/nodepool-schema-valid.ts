import { defineCheck, type FindingDraft, nodePoolRef } from '../check.js';
import { type FieldScanOptions, unknownNodePoolFields } from '../crd-fields.js';
import { nodePoolCrdViolations } from '../crd-rules.js';
import { clusterOf } from '../inventory.js';
import type { ResourceRef } from '../model.js';
import { type NodeSelectorRequirement, nodePoolRequirements } from '../nodepool-requirements.js';
import { NODEPOOL_API_VERSION, type NodePool } from '../schema.js';
import { structuralDrafts, unknownFieldDraft, violationDraft } from './support/schema-findings.js';

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
  fields: FieldScanOptions
): FindingDraft[] {
  const drafts: FindingDraft[] = nodePoolCrdViolations(nodePool).map((violation) =>
    violationDraft(resource, violation.path, violation.rule, violation.message)
  );
  const nodeClass = nodePool.spec.template.spec.nodeClassRef.name;
  for (const field of unknownNodePoolFields(nodePool, { ...fields, nodeClass })) {
    drafts.push(unknownFieldDraft(resource, field, NODEPOOL_API_VERSION, 'NodePool'));
  }
  drafts.push(...ignoredValues(resource, nodePoolRequirements(nodePool)));
  return drafts;
}

/**
 * The object is a valid `karpenter.sh/v1` NodePool: it parses structurally and meets the rules of
 * Karpenter's NodePool CRD (requirement operators and restricted label keys, minValues, disruption
 * budgets, durations, nodeClassRef). The API server rejects an object breaking any of them.
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
    'https://github.com/aws/karpenter-provider-aws/blob/main/pkg/apis/crds/karpenter.sh_nodepools.yaml',
    'https://karpenter.sh/docs/concepts/nodepools/',
    MIGRATION_GUIDE,
    'https://kubernetes.io/docs/reference/using-api/api-concepts/#field-validation',
  ],
  material: ['path', 'rule', 'apiVersion'],
  evaluate: (inventory) =>
    inventory.nodePools.flatMap((entry): readonly FindingDraft[] => {
      const resource = nodePoolRef(entry);
      if (!entry.parsed.ok) return structuralDrafts(resource, entry.parsed.issues);
      const nodePool = entry.parsed.value;
      if (nodePool.apiVersion !== NODEPOOL_API_VERSION) {
        return [unservedApiVersion(resource, nodePool.apiVersion)];
      }
      const version = clusterOf(inventory, entry.cluster)?.karpenterVersion;
      const stored = entry.source === undefined;
      const drafts = evaluateParsed(resource, nodePool, { version, stored });
      if (drafts.length > 0) return drafts;
      return [
        {
          status: 'pass',
          resource,
          message: `Valid ${NODEPOOL_API_VERSION} NodePool: types and every CRD rule hold.`,
        },
      ];
    }),
});
