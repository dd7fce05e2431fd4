// What SimulatePrincipalPolicy results mean for a controller-* check (https://docs.aws.amazon.com/IAM/latest/APIReference/API_SimulatePrincipalPolicy.html).
import type {
  MatchedStatement,
  PermissionFacts,
  PermissionGroup,
  SimulationDecision,
  SimulationGap,
  SimulationKind,
  SimulationResult,
} from '../facts/permissions.js';
import type { UnavailableReason } from '../facts/slice.js';

/**
 * Who said no: an SCP (`AllowedByOrganizations=false`), the permissions boundary, an identity-policy
 * Deny statement, or nothing allowed it (implicit deny: a statement is missing).
 */
export type DenialSource = 'scp' | 'permissions-boundary' | 'identity-policy' | 'no-allow';

export interface Denial {
  readonly kind: SimulationKind;
  readonly action: string;
  readonly resource: string;
  readonly decision: Exclude<SimulationDecision, 'allowed'>;
  readonly deniedBy: DenialSource;
  readonly matchedStatements: readonly MatchedStatement[];
  readonly missingContextValues: readonly string[];
}

/** Allowed, but only because keys the policies use were not in the context: not a pass. */
export interface Inconclusive {
  readonly kind: SimulationKind;
  readonly action: string;
  readonly resource: string;
  readonly missingContextValues: readonly string[];
}

export interface Unsimulated {
  readonly kind: SimulationKind | PermissionGroup;
  readonly reason: UnavailableReason;
  readonly message: string;
}

export interface GroupVerdict {
  /** `fail` on any denial; `error` when something could not be simulated or was inconclusive. */
  readonly status: 'pass' | 'fail' | 'error';
  readonly denials: readonly Denial[];
  readonly inconclusive: readonly Inconclusive[];
  readonly unsimulated: readonly Unsimulated[];
  /** Action × resource pairs evaluated. */
  readonly evaluated: number;
}

function denialSource(result: SimulationResult): DenialSource | undefined {
  if (result.decision === 'allowed') return undefined;
  if (result.allowedByOrganizations === false) return 'scp';
  if (result.allowedByPermissionsBoundary === false) return 'permissions-boundary';
  return result.decision === 'explicitDeny' ? 'identity-policy' : 'no-allow';
}

/** Interprets every simulation of one group for one NodeClass. */
export function interpretGroup(facts: PermissionFacts, group: PermissionGroup): GroupVerdict {
  const denials: Denial[] = [];
  const inconclusive: Inconclusive[] = [];
  const unsimulated: Unsimulated[] = facts.gaps
    .filter((gap: SimulationGap) => gap.group === group)
    .map((gap) => ({ kind: gap.group, reason: gap.reason, message: gap.message }));
  let evaluated = 0;
  for (const outcome of facts.simulations) {
    const { request, results } = outcome;
    if (request.group !== group) continue;
    if (results.status === 'unavailable') {
      unsimulated.push({ kind: request.kind, reason: results.reason, message: results.message });
      continue;
    }
    for (const result of results.value) {
      evaluated++;
      const deniedBy = denialSource(result);
      if (deniedBy !== undefined && result.decision !== 'allowed') {
        denials.push({
          kind: request.kind,
          action: result.action,
          resource: result.resource,
          decision: result.decision,
          deniedBy,
          matchedStatements: result.matchedStatements,
          missingContextValues: result.missingContextValues,
        });
      } else if (result.missingContextValues.length > 0) {
        inconclusive.push({
          kind: request.kind,
          action: result.action,
          resource: result.resource,
          missingContextValues: result.missingContextValues,
        });
      }
    }
  }
  const status =
    denials.length > 0
      ? 'fail'
      : inconclusive.length > 0 || unsimulated.length > 0 || evaluated === 0
        ? 'error'
        : 'pass';
  return { status, denials, inconclusive, unsimulated, evaluated };
}

const SOURCE_TEXT: Readonly<Record<DenialSource, string>> = {
  scp: 'explicitly denied by a service control policy (AllowedByOrganizations=false)',
  'permissions-boundary': "denied by the role's permissions boundary",
  'identity-policy': 'explicitly denied by an identity policy',
  'no-allow': 'not allowed by any policy (implicit deny)',
};

export function describeDenial(denial: Denial): string {
  const statements = denial.matchedStatements
    .map((statement) => statement.sourcePolicyId)
    .filter((id) => id !== undefined);
  const via = statements.length > 0 ? ` (matched: ${[...new Set(statements)].join(', ')})` : '';
  const missing =
    denial.missingContextValues.length > 0
      ? `; the policies also use context keys Karpenter's request does not carry: ${denial.missingContextValues.join(', ')}`
      : '';
  return `${denial.action} on ${denial.resource}: ${SOURCE_TEXT[denial.deniedBy]}${via}${missing}`;
}

/** Distinct values, in first-seen order. */
export function distinct<T>(values: readonly T[]): T[] {
  return [...new Set(values)];
}
