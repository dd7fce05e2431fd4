import type { Check, CheckContext, CheckMeta, FindingDraft } from './check.js';
import type { Inventory } from './inventory.js';
import { materialHash } from './material.js';
import { type Finding, findingId, type ResourceRef, resourceKey, severityRank } from './model.js';
import { boundFindingText } from './text-budget.js';

export interface Evaluation {
  readonly findings: readonly Finding[];
  /** Checks not run because an input they need was not collected. */
  readonly notRun: readonly { checkId: string; missingInputs: string[] }[];
}

/** What making a finding reads of its check. */
export type FindingMaker = Pick<CheckMeta, 'id' | 'severity' | 'remediation' | 'material'>;

/**
 * The one place findings are made: ids, defaults, and every text within `FINDING_TEXT_BUDGET`
 * (text-budget.ts), so the CLI, SNS, DynamoDB, Security Hub and the logs all get bounded text. The
 * material hash is taken from the bounded evidence, which is cut deterministically: an unchanged
 * finding keeps its hash.
 */
export function toFinding(check: FindingMaker, draft: FindingDraft): Finding {
  const severity = draft.severity ?? check.severity;
  const text = boundFindingText({
    message: draft.message,
    remediation: draft.remediation ?? check.remediation,
    evidence: draft.evidence ?? {},
    location: draft.location,
  });
  const { evidence } = text;
  return {
    id: findingId(check.id, draft.resource, draft.discriminator),
    checkId: check.id,
    severity,
    status: draft.status,
    resource: draft.resource,
    message: text.message,
    remediation: text.remediation,
    evidence,
    ...(text.location ? { location: text.location } : {}),
    ...(draft.readFault === undefined || draft.status !== 'error'
      ? {}
      : { readFault: draft.readFault }),
    materialHash: materialHash({ status: draft.status, severity, evidence }, check.material),
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

function rootKey(checkId: string, resource: ResourceRef): string {
  return `${checkId}\u0000${resourceKey(resource)}`;
}

/**
 * Points each `fail`/`error` follow-on at its root: a `fail`/`error` finding of the named check on
 * the resource (one that is not a follow-on itself if there is one, then the most severe). When
 * that root is a follow-on too, the chain is followed, so every follow-on sits under the thing to
 * fix. A follow-on whose root passed (or was not run), a `fail` whose root is less severe, and a
 * chain that loops stay findings of their own.
 */
function linkRootCauses(
  findings: readonly Finding[],
  causes: ReadonlyMap<Finding, NonNullable<FindingDraft['causedBy']>>
): Finding[] {
  const betterRoot = (candidate: Finding, known: Finding): boolean => {
    const candidateFollows = causes.has(candidate);
    if (candidateFollows !== causes.has(known)) return !candidateFollows;
    return severityRank(candidate.severity) < severityRank(known.severity);
  };
  const roots = new Map<string, Finding>();
  for (const finding of findings) {
    if (finding.status !== 'fail' && finding.status !== 'error') continue;
    const key = rootKey(finding.checkId, finding.resource);
    const known = roots.get(key);
    if (known === undefined || betterRoot(finding, known)) roots.set(key, finding);
  }
  const directRoot = (finding: Finding): Finding | undefined => {
    const cause = causes.get(finding);
    if (cause === undefined) return undefined;
    const root = roots.get(rootKey(cause.checkId, cause.resource ?? finding.resource));
    return root === finding ? undefined : root;
  };
  // An `error` ("could not verify") always sits under its root. A `fail` was evaluated and found
  // broken on its own: it is linked only under a root at least as severe, so a critical "resolves
  // to no image" never hides under a high root (and passes `--fail-on critical`).
  const linkedRoot = (finding: Finding): Finding | undefined => {
    if (finding.status !== 'fail' && finding.status !== 'error') return undefined;
    const seen = new Set<Finding>([finding]);
    let current = finding;
    let result: Finding | undefined;
    for (;;) {
      const root = directRoot(current);
      if (root === undefined) return result;
      if (seen.has(root)) return undefined;
      if (current.status === 'fail' && severityRank(root.severity) > severityRank(current.severity))
        return result;
      seen.add(root);
      result = root;
      current = root;
    }
  };
  // An `error` that could not be evaluated because its root could not read an input could not
  // read it either: it inherits the root's read fault, along a chain of `error`s.
  const inheritedFault = (finding: Finding): Finding['readFault'] => {
    const seen = new Set<Finding>([finding]);
    let current = finding;
    for (;;) {
      const root = directRoot(current);
      if (root === undefined || seen.has(root)) return undefined;
      if (root.readFault !== undefined) return root.readFault;
      if (root.status !== 'error') return undefined;
      seen.add(root);
      current = root;
    }
  };
  return findings.map((finding) => {
    const root = linkedRoot(finding);
    if (root === undefined) return finding;
    const fault =
      finding.status === 'error' && finding.readFault === undefined
        ? inheritedFault(finding)
        : undefined;
    return { ...finding, causedBy: root.id, ...(fault === undefined ? {} : { readFault: fault }) };
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
  const causes = new Map<Finding, NonNullable<FindingDraft['causedBy']>>();
  const notRun: { checkId: string; missingInputs: string[] }[] = [];
  for (const check of checks) {
    const missingInputs = check.inputs.filter((input) => !inventory.inputs.has(input));
    if (missingInputs.length > 0) {
      notRun.push({ checkId: check.id, missingInputs });
      continue;
    }
    try {
      for (const draft of check.evaluate(inventory, context)) {
        const finding = toFinding(check, draft);
        if (draft.causedBy !== undefined) causes.set(finding, draft.causedBy);
        findings.push(finding);
      }
    } catch (error) {
      findings.push(crashFinding(check, { cluster: '', kind: 'Cluster', name: '*' }, error));
    }
  }
  return { findings: linkRootCauses(findings, causes), notRun };
}
