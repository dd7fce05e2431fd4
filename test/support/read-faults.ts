import type { ClusterState } from '../../lambda/core/facts/cluster.js';
import { ok, unavailable } from '../../lambda/core/facts/slice.js';
import type { ReadFault } from '../../lambda/core/model.js';

/** The read fault of a controller Deployment list that timed out (`aControllerUnreadState`). */
export const CONTROLLER_UNREAD: ReadFault = {
  reason: 'timeout',
  input: 'the Karpenter controller Deployment',
};

/**
 * A cluster scan that listed the NodeClasses but whose controller Deployment list timed out: the
 * Karpenter version, the controller's env and its role are unknown in this scan.
 */
export function aControllerUnreadState(overrides: Partial<ClusterState> = {}): ClusterState {
  return {
    read: ok({ nodeClassCount: 1 }),
    controller: unavailable('timeout', 'listing deployments timed out'),
    ...overrides,
  };
}
