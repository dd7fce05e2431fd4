// Verdicts kept across scans. A cached verdict is valid while the principal's policies and the
// request are unchanged, so both are in the key: an IAM edit (the IAM-event rescan reads the
// policies afresh) makes a new key. What the key cannot see (SCPs, a resource's own policy) is
// bounded by the entry's time to live.
import type { SimulationRequest, SimulationResult } from '../facts/permissions.js';
import { stableHash } from '../model.js';

/** A role's policies as read: identity policies (inline, then attached) and its boundary. */
export interface RolePolicySet {
  readonly identity: readonly string[];
  readonly boundary?: string;
  /** The name of each identity policy, as IAM reports it in `SourcePolicyId` (same order). */
  readonly identityNames?: readonly string[];
  readonly boundaryName?: string;
}

export interface SimulationCacheKey {
  /** Hash of the principal ARN: every verdict of one role shares it. */
  readonly principal: string;
  /** Hash of the principal, its policies and the request. */
  readonly fingerprint: string;
}

export interface SimulationCacheEntry {
  readonly key: SimulationCacheKey;
  readonly results: readonly SimulationResult[];
}

/** Port over the store; entries found are returned by `cacheKeyId`. */
export interface SimulationCachePort {
  get(
    keys: readonly SimulationCacheKey[]
  ): Promise<ReadonlyMap<string, readonly SimulationResult[]>>;
  /** Writes the entries, each expiring `ttlSeconds` after now. */
  put(entries: readonly SimulationCacheEntry[], ttlSeconds: number): Promise<void>;
}

export const cacheKeyId = (key: SimulationCacheKey): string =>
  `${key.principal}/${key.fingerprint}`;

/**
 * The key of `request` under `policies`. Identity policies keep their order and the boundary its
 * own slot: the same document as an identity policy or as a boundary means different verdicts.
 * Actions, resources and context are compared as sets (IAM evaluates each pair on its own).
 */
export function simulationCacheKey(
  request: Pick<SimulationRequest, 'principalArn' | 'actions' | 'resourceArns' | 'context'>,
  policies: RolePolicySet
): SimulationCacheKey {
  const sorted = (values: readonly string[]) => [...new Set(values)].sort();
  const context = request.context
    .map((entry) => [entry.key.toLowerCase(), entry.type, sorted(entry.values)] as const)
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const fingerprint = stableHash(
    JSON.stringify([
      request.principalArn,
      policies.identity,
      policies.boundary ?? null,
      sorted(request.actions.map((action) => action.toLowerCase())),
      sorted(request.resourceArns),
      context,
    ])
  );
  return { principal: stableHash(request.principalArn), fingerprint };
}
