// Shared by nodeclass-schema-valid and nodepool-schema-valid: one failing finding per violated
// rule or per field that did not parse, located at the field's path.
import type { AdmissionVerdict } from '../../admission/types.js';
import { type FindingDraft, KARPENTER_VERSION_ANNOTATION } from '../../check.js';
import { UNKNOWN_FIELD_OUTCOME, type UnknownField } from '../../crd-fields.js';
import { type CrdRuleRelease, SINCE } from '../../crd-releases.js';
import type { CrdViolation } from '../../crd-rules.js';
import type { ResourceRef } from '../../model.js';
import type { SchemaIssue } from '../../schema.js';

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The nodeclass-scanner/karpenter-version annotation as written, of an object that may not parse. */
export function annotatedKarpenterVersion(object: unknown): string | undefined {
  const metadata = isRecord(object) && isRecord(object.metadata) ? object.metadata : {};
  const annotations = isRecord(metadata.annotations) ? metadata.annotations : {};
  const value = annotations[KARPENTER_VERSION_ANNOTATION];
  return typeof value === 'string' ? value : undefined;
}

/** A failing finding for one violation of `rule` at `path` (the id is unique per path and rule). */
export function violationDraft(
  resource: ResourceRef,
  path: string,
  rule: string,
  message: string,
  evidence: Readonly<Record<string, unknown>> = {}
): FindingDraft {
  return {
    status: 'fail',
    resource,
    message: `${path}: ${message}`,
    evidence: { path, rule, ...evidence },
    discriminator: `${path}#${rule}`,
    location: { path },
  };
}

/** Zod's wording for an absent field ("expected array, received undefined") → "required". */
function describeIssue(issue: SchemaIssue): string {
  const missing = /expected (\w+), received undefined/.exec(issue.message);
  return missing ? `Required value (expected ${missing[1]})` : issue.message;
}

/** The parse issues as `type` violations: one finding per path (a union can report several). */
export function structuralDrafts(
  resource: ResourceRef,
  issues: readonly SchemaIssue[]
): readonly FindingDraft[] {
  const byPath = new Map<string, string[]>();
  for (const issue of issues) {
    const messages = byPath.get(issue.path) ?? [];
    messages.push(describeIssue(issue));
    byPath.set(issue.path, messages);
  }
  return [...byPath].map(([path, messages]) =>
    violationDraft(resource, path || '(object)', 'type', messages.join('; '))
  );
}

/**
 * A field the object's CRD does not declare: a failure of its own severity (high), since the
 * outcome depends on the client. kubectl rejects the object; others get it stored without the
 * field. The message names both, and where the field belongs when it moved in v1.
 */
export function unknownFieldDraft(
  resource: ResourceRef,
  field: UnknownField,
  apiVersion: string,
  kind: string
): FindingDraft {
  const draft = violationDraft(
    resource,
    field.path,
    field.rule,
    `unknown field in the ${apiVersion} ${kind} CRD: ${field.message}. ${UNKNOWN_FIELD_OUTCOME}`,
    field.since === undefined ? {} : { since: field.since }
  );
  return { ...draft, severity: 'high', remediation: field.remediation };
}

/** Finding detail: the built-in rules of which release decided, and that no CRD was at hand. */
export function releaseEvidence(release: CrdRuleRelease): Readonly<Record<string, unknown>> {
  return { rules: release.note, rulesRelease: release.label };
}

/** Finding detail: the installed CRD decided. */
export function admissionEvidence(admission: AdmissionVerdict): Readonly<Record<string, unknown>> {
  return {
    rules: `the installed CRD: ${admission.crd} (served version ${admission.version})`,
    crd: admission.crd,
  };
}

/** Adds the rules detail to a finding's evidence. */
export function withRules(
  draft: FindingDraft,
  evidence: Readonly<Record<string, unknown>>
): FindingDraft {
  return { ...draft, evidence: { ...draft.evidence, ...evidence } };
}

/**
 * The installed CRD's verdict as findings: its violations with the CRD's own messages, and the
 * fields its structural schema prunes as unknown fields. `skip` drops violations another check
 * reports (restricted tags).
 */
export function admissionDrafts(
  resource: ResourceRef,
  admission: AdmissionVerdict,
  apiVersion: string,
  kind: string,
  skip: (violation: CrdViolation) => boolean = () => false
): FindingDraft[] {
  const evidence = admissionEvidence(admission);
  const drafts = admission.violations
    .filter((violation) => !skip(violation))
    .map((violation) =>
      violationDraft(resource, violation.path, violation.rule, violation.message, evidence)
    );
  for (const path of admission.pruned) {
    const field: UnknownField = {
      path,
      rule: 'unknown-field',
      message: `not a field of the installed CRD (${admission.crd})`,
      remediation: `Remove ${path}, or upgrade Karpenter's CRDs to a release that has the field.`,
    };
    drafts.push(withRules(unknownFieldDraft(resource, field, apiVersion, kind), evidence));
  }
  return drafts;
}

const MIGRATION_GUIDE = 'https://karpenter.sh/docs/upgrading/v1-migration/';
const V1BETA1_REMOVED = `v${SINCE.v1beta1Unserved}`;

/** What the object's apiVersion is and what is served instead, for an object not of `served`. */
export interface LegacyApiVersion {
  readonly resource: ResourceRef;
  readonly kind: 'EC2NodeClass' | 'NodePool';
  /** The object's apiVersion, e.g. `karpenter.sh/v1beta1`. */
  readonly apiVersion: string;
  /** `karpenter.sh/v1`. */
  readonly served: string;
  /** What the migration changes in this kind. */
  readonly migration: string;
}

function isV1beta1({ apiVersion, served }: LegacyApiVersion): boolean {
  return apiVersion === served.replace(/\/v1$/, '/v1beta1');
}

function migrationRemediation(legacy: LegacyApiVersion): string {
  return `Rewrite the object as ${legacy.served} (${MIGRATION_GUIDE}): ${legacy.migration}`;
}

/**
 * A `v1beta1` object the release (or its installed CRD) still serves: Karpenter v1.0.x converts it
 * with its conversion webhook, so the API server admits it, but v1.1.0 serves `v1` only, and the
 * migration guide requires moving the manifests to `v1` before that upgrade. A notice: nothing
 * fails today (`decidedBy` says which rules admitted it).
 */
export function servedV1beta1Draft(legacy: LegacyApiVersion, decidedBy: string): FindingDraft {
  return {
    status: 'notice',
    resource: legacy.resource,
    severity: 'medium',
    message: `apiVersion: ${legacy.apiVersion} is still served by ${decidedBy} (its conversion webhook converts the object to ${legacy.served}), but Karpenter ${V1BETA1_REMOVED} and later serve ${legacy.served} only: migrate this ${legacy.kind} before upgrading. The scanner's other checks read ${legacy.served} objects only.`,
    evidence: {
      path: 'apiVersion',
      rule: 'api-version-deprecated',
      apiVersion: legacy.apiVersion,
      removedIn: V1BETA1_REMOVED,
    },
    discriminator: 'apiVersion#api-version-deprecated',
    location: { path: 'apiVersion' },
    remediation: migrationRemediation(legacy),
  };
}

/**
 * An apiVersion the release does not serve: `v1beta1` after v1.0.x (with the migration guide), or
 * any other version. The built-in rules' verdict; an installed CRD says it in its own words.
 */
export function legacyApiVersionDraft(
  legacy: LegacyApiVersion,
  release: CrdRuleRelease
): FindingDraft {
  const v1beta1 = isV1beta1(legacy);
  if (v1beta1 && !release.has(SINCE.v1beta1Unserved)) {
    const served = release.requested?.raw ?? release.version.raw;
    return withRules(
      servedV1beta1Draft(legacy, `Karpenter v${served.replace(/^v/, '')}`),
      releaseEvidence(release)
    );
  }
  return {
    ...violationDraft(
      legacy.resource,
      'apiVersion',
      'api-version',
      v1beta1
        ? `${legacy.apiVersion} is no longer served since Karpenter ${V1BETA1_REMOVED}; migrate this ${legacy.kind} to ${legacy.served}.`
        : `${legacy.apiVersion} is not served by Karpenter v1; use ${legacy.served}.`,
      { apiVersion: legacy.apiVersion, ...releaseEvidence(release) }
    ),
    remediation: v1beta1
      ? migrationRemediation(legacy)
      : `Set apiVersion: ${legacy.served} and check the spec against the v1 CRD.`,
  };
}

/** Whether the installed CRD still serves `v1beta1` and evaluated the object as such. */
export function v1beta1ServedByCrd(legacy: LegacyApiVersion, admission: AdmissionVerdict): boolean {
  return (
    isV1beta1(legacy) &&
    admission.version === 'v1beta1' &&
    !admission.violations.some((violation) => violation.path === 'apiVersion')
  );
}
