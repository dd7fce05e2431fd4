// Fewer SimulatePrincipalPolicy calls with the same verdicts: requests of one principal whose
// contexts are equal as the policies see them (policy-conditions.ts) are sent as one simulation of
// every action on every resource they name; each request then takes its own action/resource pairs.
// IAM evaluates each pair on its own, so the extra pairs of the cross product change nothing.
import type { SimulationRequest, SimulationResult } from '../facts/permissions.js';
import { stableHash } from '../model.js';
import { type ContextKeyUsage, relevantContext } from './policy-conditions.js';
import { simulationKey } from './request-context.js';

export interface SimulationBatch {
  /** What is sent: the first member's context, every member's actions and resources. */
  readonly request: SimulationRequest;
  /** The requests it answers, each with the context it would have been simulated with. */
  readonly members: readonly SimulationRequest[];
}

function contextFingerprint(request: SimulationRequest, usage: ContextKeyUsage): string {
  return stableHash(
    JSON.stringify([
      request.principalArn,
      relevantContext(request.context, usage)
        .map((entry) => [entry.key, entry.type, entry.values] as const)
        .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)),
    ])
  );
}

function unionOf(lists: readonly (readonly string[])[]): string[] {
  return [...new Set(lists.flat())];
}

/**
 * Groups requests by principal and policy-relevant context (`usageOf` per principal; `unknown`
 * keeps every value). Batches and members keep the order of first appearance.
 */
export function batchSimulations(
  requests: readonly SimulationRequest[],
  usageOf: (principalArn: string) => ContextKeyUsage
): SimulationBatch[] {
  const groups = new Map<string, Map<string, SimulationRequest>>();
  for (const request of requests) {
    const fingerprint = contextFingerprint(request, usageOf(request.principalArn));
    const members = groups.get(fingerprint) ?? new Map<string, SimulationRequest>();
    if (!members.has(request.key)) members.set(request.key, request);
    groups.set(fingerprint, members);
  }
  return [...groups.values()].map((byKey) => {
    const members = [...byKey.values()];
    const first = members[0] as SimulationRequest;
    const body = {
      principalArn: first.principalArn,
      actions: unionOf(members.map((member) => member.actions)),
      resourceArns: unionOf(members.map((member) => member.resourceArns)),
      context: first.context,
    };
    return {
      request: { ...first, ...body, key: simulationKey(body) },
      members,
    };
  });
}

const pairKey = (action: string, resource: string) => `${action.toLowerCase()}\u0000${resource}`;

/**
 * A member's results in the order its own simulation returns them (action, then resource), or the
 * first pair the batch did not answer.
 */
export function memberResults(
  member: SimulationRequest,
  results: readonly SimulationResult[]
): { ok: true; results: SimulationResult[] } | { ok: false; missing: string } {
  const byPair = new Map<string, SimulationResult>();
  for (const result of results) {
    const key = pairKey(result.action, result.resource);
    if (!byPair.has(key)) byPair.set(key, result);
  }
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

/** The member was simulated with another member's values for presence-only keys. */
export function usesRepresentative(batch: SimulationBatch, member: SimulationRequest): boolean {
  const sent = JSON.stringify(batch.request.context);
  return JSON.stringify(member.context) !== sent;
}
