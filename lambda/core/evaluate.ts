import type { Check, CheckContext, FindingDraft } from './check.js';
import type { Inventory } from './inventory.js';
import { type Finding, findingId, type ResourceRef } from './model.js';

export interface Evaluation {
  readonly findings: readonly Finding[];
  /** Checks not run because an input they need was not collected. */
  readonly notRun: readonly { checkId: string; missingInputs: string[] }[];
}

function toFinding(check: Check, draft: FindingDraft): Finding {
  return {
    id: findingId(check.id, draft.resource, draft.discriminator),
    checkId: check.id,
    severity: draft.severity ?? check.severity,
    status: draft.status,
    resource: draft.resource,
    message: draft.message,
    remediation: draft.remediation ?? check.remediation,
    evidence: draft.evidence ?? {},
    ...(draft.location ? { location: draft.location } : {}),
  };
}

function crashFinding(check: Check, resource: ResourceRef, error: unknown): Finding {
  const reason = error instanceof Error ? error.message : String(error);
  return toFinding(check, {
    status: 'error',
    resource,
    message: `Check failed to evaluate: ${reason}`,
    evidence: { reason },
  });
}

/**
 * Runs every check over the inventory. A check that throws yields one `error` finding instead of
 * aborting the scan, so one bug never hides the other findings.
 */
export function runChecks(
  inventory: Inventory,
  checks: readonly Check[],
  context: CheckContext
): Evaluation {
  const findings: Finding[] = [];
  const notRun: { checkId: string; missingInputs: string[] }[] = [];
  for (const check of checks) {
    const missingInputs = check.inputs.filter((input) => !inventory.inputs.has(input));
    if (missingInputs.length > 0) {
      notRun.push({ checkId: check.id, missingInputs });
      continue;
    }
    try {
      for (const draft of check.evaluate(inventory, context)) {
        findings.push(toFinding(check, draft));
      }
    } catch (error) {
      findings.push(crashFinding(check, { cluster: '', kind: 'Cluster', name: '*' }, error));
    }
  }
  return { findings, notRun };
}
