// What SimulatePrincipalPolicy results mean for a controller-* check (https://docs.aws.amazon.com/IAM/latest/APIReference/API_SimulatePrincipalPolicy.html).
// IAM lists as missing every condition key the role's policies reference that the request did not
// supply, whichever statement uses it; a missing key leaves the verdict open only when AWS sets it
// at launch and a statement that applies to the pair, of the effect that could reverse the
// decision, uses it (docs/permission-semantics.md).
import type {
  MatchedStatement,
  PermissionFacts,
  PermissionGroup,
  SimulationDecision,
  SimulationGap,
  SimulationKind,
  SimulationRequest,
  SimulationResult,
} from '../facts/permissions.js';
import type { UnavailableReason } from '../facts/slice.js';
import type { ReadFault } from '../model.js';
import { launchSupplyOf } from './launch-context.js';
import {
  describeStatement,
  mayApply,
  type ParsedStatement,
  type PolicyStatementRef,
  parseStatements,
} from './policy-statements.js';

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
  /** The permissions boundary's name, when it denied and the scan read it. */
  readonly boundary?: string;
}

/** A missing key that can change the verdict, and the statements that use it. */
export interface OpenKey {
  readonly key: string;
  /** Empty when the policies could not be read (which statements use it is unknown). */
  readonly statements: readonly PolicyStatementRef[];
}

/** The verdict depends on keys AWS sets at launch that the scanner cannot know: not a pass. */
export interface Inconclusive {
  readonly kind: SimulationKind;
  readonly action: string;
  readonly resource: string;
  readonly decision: SimulationDecision;
  readonly missingContextValues: readonly string[];
  readonly openKeys: readonly OpenKey[];
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

const refOf = (statement: ParsedStatement): PolicyStatementRef => ({
  policy: statement.policy,
  place: statement.place,
  ...(statement.sid === undefined ? {} : { sid: statement.sid }),
});

/**
 * The missing keys that can change this result: set by AWS at launch, and used by a statement that
 * may apply to the pair and could reverse it: a Deny for an allowed or explicitly denied pair, an
 * Allow for an implicit deny, and for an allowed pair also an Allow whose condition held only
 * because the key was missing (`…IfExists`, negated operators, `Null`, `ForAllValues:`). Without the policies every such key leaves an
 * allowed pair open. An SCP denial stands: IAM does not list the keys SCPs use, and they cannot be read.
 */
function openKeysOf(
  result: SimulationResult,
  request: Pick<SimulationRequest, 'resourceTagsKnown'>,
  statements: readonly ParsedStatement[] | undefined
): OpenKey[] {
  if (result.allowedByOrganizations === false) return [];
  const missing = result.missingContextValues.filter(
    (key) => launchSupplyOf(key, request, result.resource) === 'set-by-aws'
  );
  if (missing.length === 0) return [];
  // Unread policies: an allowed pair may still be denied at launch; a denial stands as simulated.
  if (statements === undefined)
    return result.decision === 'allowed' ? missing.map((key) => ({ key, statements: [] })) : [];
  const applying = statements.filter((statement) =>
    mayApply(statement, result.action, result.resource)
  );
  return missing.flatMap((key) => {
    const lower = key.toLowerCase();
    const using = applying.filter((statement) =>
      result.decision === 'implicitDeny'
        ? statement.effect === 'Allow' && statement.conditionKeys.has(lower)
        : statement.effect === 'Deny'
          ? statement.conditionKeys.has(lower)
          : // An Allow that matched only because the key was missing may stop matching at launch.
            result.decision === 'allowed' && statement.absenceKeys.has(lower)
    );
    return using.length === 0 ? [] : [{ key, statements: using.map(refOf) }];
  });
}

/**
 * The read fault behind an `error` verdict: every open question is a simulation or an input that
 * could not be read. `not-found` gaps (no image, no node role) follow from another check's
 * failure, and inconclusive keys are the scanner's limit: both are conclusions, not faults.
 */
export function verdictReadFault(verdict: GroupVerdict): ReadFault | undefined {
  return verdict.inconclusive.length > 0 ? undefined : unsimulatedReadFault(verdict.unsimulated);
}

/** The read fault behind simulations that did not run, unless one follows from a `not-found`. */
export function unsimulatedReadFault(unsimulated: readonly Unsimulated[]): ReadFault | undefined {
  const [first] = unsimulated;
  if (first === undefined) return undefined;
  if (unsimulated.some((item) => item.reason === 'not-found')) return undefined;
  return { reason: first.reason, input: `IAM policy simulation (${first.kind})` };
}

/** Interprets every simulation of one group for one NodeClass. */
export function interpretGroup(facts: PermissionFacts, group: PermissionGroup): GroupVerdict {
  const statements =
    facts.controllerPolicies === undefined ? undefined : parseStatements(facts.controllerPolicies);
  const boundary = facts.controllerPolicies?.boundary?.name;
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
      const openKeys = openKeysOf(result, request, statements);
      const deniedBy = denialSource(result);
      if (openKeys.length > 0) {
        inconclusive.push({
          kind: request.kind,
          action: result.action,
          resource: result.resource,
          decision: result.decision,
          missingContextValues: result.missingContextValues,
          openKeys,
        });
      } else if (deniedBy !== undefined && result.decision !== 'allowed') {
        denials.push({
          kind: request.kind,
          action: result.action,
          resource: result.resource,
          decision: result.decision,
          deniedBy,
          matchedStatements: result.matchedStatements,
          missingContextValues: result.missingContextValues,
          ...(deniedBy === 'permissions-boundary' && boundary !== undefined ? { boundary } : {}),
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
  const boundary = denial.boundary === undefined ? '' : ` ${denial.boundary}`;
  return `${denial.action} on ${denial.resource}: ${SOURCE_TEXT[denial.deniedBy]}${boundary}${via}`;
}

const DECISION_TEXT: Readonly<Record<SimulationDecision, string>> = {
  allowed: 'allowed',
  implicitDeny: 'not allowed',
  explicitDeny: 'explicitly denied',
};

/** Why an inconclusive pair cannot be decided: each key and the statements using it. */
export function describeInconclusive(item: Inconclusive): string {
  const keys = item.openKeys.map((open) =>
    open.statements.length === 0
      ? open.key
      : `${open.key} (used by ${open.statements.map(describeStatement).join(', ')})`
  );
  const unread = item.openKeys.some((open) => open.statements.length === 0)
    ? "; the controller role's policies could not be read, so whether they use it is unknown"
    : '';
  return `${item.action} on ${item.resource} is ${DECISION_TEXT[item.decision]} in simulation, but the decision depends on ${keys.join(', ')}, which AWS sets when Karpenter calls and the scanner cannot know${unread}`;
}

/** Distinct values, in first-seen order. */
export function distinct<T>(values: readonly T[]): T[] {
  return [...new Set(values)];
}
