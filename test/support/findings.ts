import type { FindingState } from '../../lambda/core/lifecycle.js';
import { type Finding, findingId, type ResourceRef } from '../../lambda/core/model.js';

/** A finding of `checkId` on an EC2NodeClass, failing unless overridden. */
export function aFinding(
  overrides: Partial<Omit<Finding, 'resource'>> & { resource?: Partial<ResourceRef> } = {}
): Finding {
  const resource: ResourceRef = {
    cluster: 'prod',
    kind: 'EC2NodeClass',
    name: 'default',
    ...overrides.resource,
  };
  const checkId = overrides.checkId ?? 'instance-profile-is-name';
  return {
    id: overrides.id ?? findingId(checkId, resource),
    checkId,
    severity: 'critical',
    status: 'fail',
    message: 'spec.instanceProfile is an ARN.',
    remediation: 'Set spec.instanceProfile to the bare name.',
    evidence: {},
    materialHash: `material-of-${checkId}`,
    ...overrides,
    resource,
  };
}

/** The stored state of `finding`, opened at `at` (ISO) and notified then. */
export function aStoredState(
  finding: Finding,
  at: string,
  overrides: Partial<FindingState> = {}
): FindingState {
  return {
    id: finding.id,
    checkId: finding.checkId,
    resource: finding.resource,
    status: 'open',
    findingStatus: finding.status === 'error' ? 'error' : 'fail',
    severity: finding.severity,
    message: finding.message,
    firstSeen: at,
    lastSeen: at,
    lastNotified: at,
    revision: 1,
    ...overrides,
  };
}
