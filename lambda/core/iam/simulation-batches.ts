// Fewer SimulatePrincipalPolicy calls with the same verdicts: requests of one principal whose
// contexts are equal as the policies see them (policy-conditions.ts) share calls, and their
// action/resource pairs are packed into as few calls as fit one page of results each. IAM
// evaluates each pair on its own, so the extra pairs a call's cross product adds change nothing.
import type { ContextEntry, SimulationRequest, SimulationResult } from '../facts/permissions.js';
import { type ContextKeyUsage, comparesValue } from './policy-conditions.js';
import { simulationKey } from './request-context.js';

/**
 * Results of one call: one per action and resource. IAM returns 100 to a page unless MaxItems asks
 * for more, up to 1,000 (MaxItems' valid range,
 * https://docs.aws.amazon.com/IAM/latest/APIReference/API_SimulatePrincipalPolicy.html); the
 * simulator asks for this many, so a call that fits is one request to IAM (IAM may still return
 * fewer, and the simulator then follows `Marker`).
 */
export const RESULTS_PER_CALL = 1000;

export interface SimulationBatch {
  /** What is sent: one member's context, the packed actions and resources. */
  readonly request: SimulationRequest;
  /**
   * The requests it answers (in part when a request has more pairs than a call holds: it is then
   * answered by every batch that names it), each with the context it would have been simulated with.
   */
  readonly members: readonly SimulationRequest[];
}

/** Principal and context as the policies see them: presence-only values blanked, keys sorted. */
function contextFingerprint(request: SimulationRequest, usage: ContextKeyUsage): string {
  const entries = request.context.map((entry) => {
    const values = comparesValue(usage, entry.key)
      ? entry.values
      : entry.values.map((value) => (value === '' ? '' : '\u0000'));
    return `${entry.key}\u0001${entry.type}\u0001${values.join('\u0002')}`;
  });
  return `${request.principalArn}\u0003${entries.sort().join('\u0003')}`;
}

/** A set of actions on a set of resources: what one call (or part of one) asks. */
interface Rectangle {
  readonly actions: Set<string>;
  readonly resources: Set<string>;
  readonly members: Set<SimulationRequest>;
}

const resultsOf = (actions: number, resources: number) => actions * Math.max(1, resources);

/** The size of `into` with `piece` added to it. */
function mergedResults(into: Rectangle, piece: Rectangle): number {
  let actions = into.actions.size;
  for (const action of piece.actions) if (!into.actions.has(action)) actions++;
  let resources = into.resources.size;
  for (const resource of piece.resources) if (!into.resources.has(resource)) resources++;
  return resultsOf(actions, resources);
}

/**
 * One context's requests as calls of at most `perCall` results: requests with the same actions
 * share a rectangle (their resources merged); a rectangle larger than a call is cut into full
 * calls; then pieces are packed first-fit, largest first, into calls whose cross product fits.
 */
function packGroup(members: readonly SimulationRequest[], perCall: number): Rectangle[] {
  const byActions = new Map<string, Rectangle>();
  for (const member of members) {
    const actions = [...new Set(member.actions)].sort();
    const key = actions.join('\u0000');
    const rectangle = byActions.get(key) ?? {
      actions: new Set(actions),
      resources: new Set<string>(),
      members: new Set<SimulationRequest>(),
    };
    for (const resource of member.resourceArns) rectangle.resources.add(resource);
    rectangle.members.add(member);
    byActions.set(key, rectangle);
  }
  const pieces: Rectangle[] = [];
  for (const rectangle of byActions.values()) {
    const actions = [...rectangle.actions];
    const resources = [...rectangle.resources];
    if (resultsOf(actions.length, resources.length) <= perCall) {
      pieces.push(rectangle);
      continue;
    }
    // More actions than a call holds: a call per `perCall` actions and resource.
    const actionStep = Math.min(actions.length, perCall);
    const resourceStep = Math.max(1, Math.floor(perCall / actionStep));
    const resourceList = resources.length === 0 ? [undefined] : resources;
    for (let a = 0; a < actions.length; a += actionStep) {
      for (let r = 0; r < resourceList.length; r += resourceStep) {
        const part = resourceList.slice(r, r + resourceStep).filter((item) => item !== undefined);
        const partSet = new Set(part);
        pieces.push({
          actions: new Set(actions.slice(a, a + actionStep)),
          resources: partSet,
          members: new Set(
            [...rectangle.members].filter(
              (member) => partSet.size === 0 || member.resourceArns.some((arn) => partSet.has(arn))
            )
          ),
        });
      }
    }
  }
  pieces.sort(
    (a, b) =>
      resultsOf(b.actions.size, b.resources.size) - resultsOf(a.actions.size, a.resources.size)
  );
  const calls: Rectangle[] = [];
  for (const piece of pieces) {
    // A request without resources is simulated against `*` by IAM: it never joins one with some.
    const call = calls.find(
      (open) =>
        open.resources.size > 0 === piece.resources.size > 0 &&
        mergedResults(open, piece) <= perCall
    );
    if (call === undefined) {
      calls.push({
        actions: new Set(piece.actions),
        resources: new Set(piece.resources),
        members: new Set(piece.members),
      });
      continue;
    }
    for (const action of piece.actions) call.actions.add(action);
    for (const resource of piece.resources) call.resources.add(resource);
    for (const member of piece.members) call.members.add(member);
  }
  return calls;
}

/** Whether the call's actions and resources are the request's, each listed once in it. */
function asksExactly(request: SimulationRequest, call: Rectangle): boolean {
  return (
    call.actions.size === request.actions.length &&
    call.resources.size === request.resourceArns.length &&
    request.actions.every((action) => call.actions.has(action)) &&
    request.resourceArns.every((resource) => call.resources.has(resource))
  );
}

/**
 * Groups requests by principal and policy-relevant context (`usageOf` per principal; `unknown`
 * keeps every value) and packs each group into calls of at most `perCall` results. Groups keep
 * the order of first appearance.
 */
export function batchSimulations(
  requests: readonly SimulationRequest[],
  usageOf: (principalArn: string) => ContextKeyUsage,
  perCall = RESULTS_PER_CALL
): SimulationBatch[] {
  const usages = new Map<string, ContextKeyUsage>();
  const groups = new Map<string, Map<string, SimulationRequest>>();
  for (const request of requests) {
    let usage = usages.get(request.principalArn);
    if (usage === undefined) {
      usage = usageOf(request.principalArn);
      usages.set(request.principalArn, usage);
    }
    const fingerprint = contextFingerprint(request, usage);
    let members = groups.get(fingerprint);
    if (members === undefined) {
      members = new Map<string, SimulationRequest>();
      groups.set(fingerprint, members);
    }
    if (!members.has(request.key)) members.set(request.key, request);
  }
  return [...groups.values()].flatMap((byKey) => {
    const members = [...byKey.values()];
    const first = members[0] as SimulationRequest;
    // Actions and resources in order of first appearance, calls in order of their first member.
    const order = new Map<string, number>();
    const memberIndex = new Map<SimulationRequest, number>();
    members.forEach((member, index) => {
      memberIndex.set(member, index);
      for (const value of [...member.actions, ...member.resourceArns])
        if (!order.has(value)) order.set(value, order.size);
    });
    const inOrder = (values: Set<string>) =>
      [...values].sort((a, b) => (order.get(a) ?? 0) - (order.get(b) ?? 0));
    const firstMember = (call: Rectangle) =>
      Math.min(...[...call.members].map((member) => memberIndex.get(member) ?? 0));
    const calls = packGroup(members, perCall)
      .map((call) => ({ call, first: firstMember(call) }))
      .sort((a, b) => a.first - b.first);
    return calls.map(({ call }) => {
      const body = {
        principalArn: first.principalArn,
        actions: inOrder(call.actions),
        resourceArns: inOrder(call.resources),
        context: first.context,
      };
      // A key depends on the sets of actions and resources only (simulationKey): a call asking
      // exactly what its group's first request asks has that request's key, without hashing.
      const key = asksExactly(first, call) ? first.key : simulationKey(body);
      return {
        request: { ...first, ...body, key },
        members: members.filter((member) => call.members.has(member)),
      };
    });
  });
}

const pairKey = (action: string, resource: string) => `${action.toLowerCase()}\u0000${resource}`;

/** Results by action (case-insensitive) and resource, the first of each pair kept. */
export function resultsByPair(
  results: readonly SimulationResult[],
  into = new Map<string, SimulationResult>()
): Map<string, SimulationResult> {
  for (const result of results) {
    const key = pairKey(result.action, result.resource);
    if (!into.has(key)) into.set(key, result);
  }
  return into;
}

/**
 * A member's results in the order its own simulation returns them (action, then resource), or the
 * first pair the results do not answer (those of every batch that names the member).
 */
export function memberResults(
  member: SimulationRequest,
  results: readonly SimulationResult[] | ReadonlyMap<string, SimulationResult>
): { ok: true; results: SimulationResult[] } | { ok: false; missing: string } {
  const byPair = results instanceof Map ? results : resultsByPair(results as SimulationResult[]);
  const out: SimulationResult[] = [];
  for (const action of member.actions) {
    for (const resource of member.resourceArns) {
      const result = byPair.get(pairKey(action, resource));
      if (result === undefined) return { ok: false, missing: `${action} on ${resource}` };
      out.push(result);
    }
  }
  return { ok: true, results: out };
}

function sameEntries(a: readonly ContextEntry[], b: readonly ContextEntry[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  return a.every((entry, index) => {
    const other = b[index];
    return (
      other !== undefined &&
      entry.key === other.key &&
      entry.type === other.type &&
      entry.values.length === other.values.length &&
      entry.values.every((value, position) => value === other.values[position])
    );
  });
}

/** The member was simulated with another member's values for presence-only keys. */
export function usesRepresentative(batch: SimulationBatch, member: SimulationRequest): boolean {
  return !sameEntries(member.context, batch.request.context);
}
