import type { AdmissionVerdict } from '../admission/types.js';
import {
  controllerReadFault,
  defineCheck,
  type FindingDraft,
  KARPENTER_VERSION_ANNOTATION,
  nodePoolRef,
  versionUnreadDraft,
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
  annotatedKarpenterVersion,
  isRecord,
  type LegacyApiVersion,
  legacyApiVersionDraft,
  releaseEvidence,
  servedV1beta1Draft,
  structuralDrafts,
  unknownFieldDraft,
  v1beta1ServedByCrd,
  violationDraft,
  withRules,
} from './support/schema-findings.js';

const MIGRATION_GUIDE = 'https://karpenter.sh/docs/upgrading/v1-migration/';

function legacyOf(resource: ResourceRef, apiVersion: string): LegacyApiVersion {
  return {
    resource,
    kind: 'NodePool',
    apiVersion,
    served: NODEPOOL_API_VERSION,
    migration:
      'nodeClassRef takes group/kind/name, disruption.consolidateAfter is required, expireAfter moves to spec.template.spec, and kubelet settings move to the EC2NodeClass.',
  };
}

/** The apiVersion as written, also of an object that does not parse (a v1beta1 nodeClassRef). */
function apiVersionOf(entry: NodePoolEntry): string | undefined {
  if (entry.parsed.ok) return entry.parsed.value.apiVersion;
  return isRecord(entry.raw) && typeof entry.raw.apiVersion === 'string'
    ? entry.raw.apiVersion
    : undefined;
}

/** The annotation of an object that may not parse: the raw object's, else the parsed one's. */
function annotatedVersion(entry: NodePoolEntry): string | undefined {
  return annotatedKarpenterVersion(entry.raw ?? (entry.parsed.ok ? entry.parsed.value : undefined));
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
  const legacy = legacyOf(resource, apiVersionOf(entry) ?? '');
  const servedV1beta1 = v1beta1ServedByCrd(legacy, admission);
  const drafts = admissionDrafts(
    resource,
    admission,
    servedV1beta1 ? legacy.apiVersion : NODEPOOL_API_VERSION,
    'NodePool'
  );
  // The CRD of a v1.0.x release still serves v1beta1: its verdict, and that v1.1 drops the version.
  if (servedV1beta1) {
    const notice = servedV1beta1Draft(legacy, `the installed CRD ${admission.crd}`);
    return [...drafts, withRules(notice, admissionEvidence(admission))];
  }
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
 * the Karpenter release (release table in `crd-releases.ts`), or an `error` with a read fault for
 * the release's rules when the controller Deployment, hence the version, could not be read.
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
      if (entry.admission !== undefined) return byAdmission(entry, resource, entry.admission);
      const apiVersion = apiVersionOf(entry);
      if (apiVersion !== undefined && apiVersion !== NODEPOOL_API_VERSION) {
        const cluster = clusterOf(inventory, entry.cluster)?.karpenterVersion;
        const release = crdRuleRelease(parseKarpenterVersion(annotatedVersion(entry)) ?? cluster);
        return [legacyApiVersionDraft(legacyOf(resource, apiVersion), release)];
      }
      if (!entry.parsed.ok) return structuralDrafts(resource, entry.parsed.issues);
      const nodePool = entry.parsed.value;
      const cluster = clusterOf(inventory, entry.cluster);
      const version = versionOf(cluster?.karpenterVersion, nodePool);
      // Without the installed CRD the rules are the release's: unknown on a read fault. The
      // object name and values-ignored rules hold in every release, so they still get a verdict.
      const faulted =
        version === undefined && cluster !== undefined ? controllerReadFault(cluster) : undefined;
      if (faulted && cluster) {
        return [
          ...objectNameViolations(nodePool.metadata.name).map((violation) =>
            violationDraft(resource, violation.path, violation.rule, violation.message)
          ),
          ...ignoredValues(resource, nodePoolRequirements(nodePool)),
          versionUnreadDraft(resource, faulted, cluster),
        ];
      }
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
