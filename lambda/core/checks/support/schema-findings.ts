// Shared by nodeclass-schema-valid and nodepool-schema-valid: one failing finding per violated
// rule or per field that did not parse, located at the field's path.
import type { AdmissionVerdict } from '../../admission/types.js';
import type { FindingDraft } from '../../check.js';
import { UNKNOWN_FIELD_OUTCOME, type UnknownField } from '../../crd-fields.js';
import type { CrdRuleRelease } from '../../crd-releases.js';
import type { CrdViolation } from '../../crd-rules.js';
import type { ResourceRef } from '../../model.js';
import type { SchemaIssue } from '../../schema.js';

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
