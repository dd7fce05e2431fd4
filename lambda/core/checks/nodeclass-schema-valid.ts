import type { AdmissionVerdict } from '../admission/types.js';
import {
  contextOverridesOf,
  defineCheck,
  effectiveCluster,
  type FindingDraft,
  invalidOverrideOutcome,
  KARPENTER_VERSION_ANNOTATION,
  nodeClassRef,
  versionReadFault,
  versionUnreadDraft,
} from '../check.js';
import { unknownNodeClassFields } from '../crd-fields.js';
import { crdRuleRelease } from '../crd-releases.js';
import { type CrdViolation, crdViolations, objectNameViolations } from '../crd-rules.js';
import { clusterOf, type Inventory, type NodeClassEntry } from '../inventory.js';
import type { ResourceRef } from '../model.js';
import { type EC2NodeClass, formatPath, type SchemaIssue } from '../schema.js';
import { parseKarpenterVersion } from '../version.js';
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
import { CEL_RESTRICTED_TAG_RULES } from './tags-not-restricted.js';

const SERVED_API_VERSION = 'karpenter.k8s.aws/v1';

const MIGRATION_GUIDE = 'https://karpenter.sh/docs/upgrading/v1-migration/';

function legacyOf(entry: NodeClassEntry, resource: ResourceRef): LegacyApiVersion {
  return {
    resource,
    kind: 'EC2NodeClass',
    apiVersion: entry.apiVersion,
    served: SERVED_API_VERSION,
    migration:
      'amiSelectorTerms is required (use an alias such as al2023@<version> instead of amiFamily alone), kubelet settings move from the NodePool to the EC2NodeClass, and exactly one of role/instanceProfile is set.',
  };
}

/** The object's own nodeclass-scanner/karpenter-version annotation, else the cluster's version. */
function karpenterVersionOf(inventory: Inventory, entry: NodeClassEntry) {
  return (
    parseKarpenterVersion(annotatedKarpenterVersion(entry.raw)) ??
    clusterOf(inventory, entry.cluster)?.karpenterVersion
  );
}

/** No `spec` at all (or `spec: null`, which the API server drops): the CRD does not require one. */
function hasNoSpec(entry: NodeClassEntry): boolean {
  return isRecord(entry.raw) && (entry.raw.spec === undefined || entry.raw.spec === null);
}

/**
 * An EC2NodeClass without spec, as it happens: the API server admits it (the CRD requires no spec,
 * only the fields inside one), but Karpenter's controller resolves no AMI, subnet or security group
 * from empty selectors and has no role, so the class never becomes Ready and NodePools using it
 * launch nothing. A fail with its own rule: not a refusal at apply.
 */
function noSpecDraft(resource: ResourceRef, evidence: Readonly<Record<string, unknown>>) {
  return {
    ...violationDraft(
      resource,
      'spec',
      'spec-missing',
      'no spec. The API server admits the object (the CRD does not require spec), but Karpenter cannot use it: with no amiSelectorTerms, subnetSelectorTerms or securityGroupSelectorTerms and neither role nor instanceProfile, the EC2NodeClass never becomes Ready (AMIsReady, SubnetsReady and SecurityGroupsReady stay False) and NodePools that use it launch no nodes.',
      { ...evidence, admitted: true }
    ),
    remediation:
      'Add a spec with role (or instanceProfile), amiSelectorTerms, subnetSelectorTerms and securityGroupSelectorTerms.',
  };
}

/** The parse issues, with a missing spec reported as what happens rather than as a type error. */
function unparsedDrafts(
  entry: NodeClassEntry,
  resource: ResourceRef,
  issues: readonly SchemaIssue[],
  evidence: Readonly<Record<string, unknown>>
): FindingDraft[] {
  if (!hasNoSpec(entry)) return [...structuralDrafts(resource, issues)];
  const others = issues.filter((issue) => issue.path !== 'spec');
  return [...structuralDrafts(resource, others), noSpecDraft(resource, evidence)];
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
  const legacy = legacyOf(entry, resource);
  const servedV1beta1 = v1beta1ServedByCrd(legacy, admission);
  const drafts = admissionDrafts(
    resource,
    admission,
    servedV1beta1 ? entry.apiVersion : SERVED_API_VERSION,
    'EC2NodeClass',
    // tags-not-restricted reads v1 objects only.
    servedV1beta1 ? undefined : reportedByTagsCheck
  );
  // The CRD of a v1.0.x release still serves v1beta1: its verdict, and that v1.1 drops the version.
  if (servedV1beta1) {
    const notice = servedV1beta1Draft(legacy, `the installed CRD ${admission.crd}`);
    return [...drafts, withRules(notice, admissionEvidence(admission))];
  }
  if (!entry.parsed.ok) {
    // The other checks skip an object that does not parse and point here: never pass it.
    if (drafts.length === 0) {
      drafts.push(
        ...unparsedDrafts(entry, resource, entry.parsed.issues, admissionEvidence(admission))
      );
    }
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
    "The API server rejects an EC2NodeClass that breaks the v1 CRD's types or validation rules, so kubectl apply or a GitOps sync fails and the change never reaches Karpenter; from Karpenter v1.1 the API server serves v1 only (v1.0.x still admitted v1beta1 objects, for the migration). Fields the CRD lacks are rejected by kubectl or dropped silently.",
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
      if (entry.admission !== undefined) return byAdmission(entry, resource, entry.admission);
      if (entry.apiVersion !== SERVED_API_VERSION) {
        const release = crdRuleRelease(karpenterVersionOf(inventory, entry));
        return [legacyApiVersionDraft(legacyOf(entry, resource), release)];
      }
      if (!entry.parsed.ok) {
        const release = crdRuleRelease(karpenterVersionOf(inventory, entry));
        return unparsedDrafts(entry, resource, entry.parsed.issues, releaseEvidence(release));
      }
      const nodeClass = entry.parsed.value;
      const cluster = clusterOf(inventory, entry.cluster) ?? {
        name: entry.cluster,
        partition: 'aws' as const,
      };
      const effective = effectiveCluster(cluster, nodeClass).cluster;
      // Without the installed CRD the rules are the release's: unknown on a read fault.
      const faulted = versionReadFault(effective);
      if (faulted) {
        return [
          ...objectNameViolations(nodeClass.metadata.name).map((violation) =>
            violationDraft(resource, violation.path, violation.rule, violation.message, {})
          ),
          versionUnreadDraft(resource, faulted, effective),
          ...contextAnnotationDrafts(resource, nodeClass),
        ];
      }
      const version = effective.karpenterVersion;
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
