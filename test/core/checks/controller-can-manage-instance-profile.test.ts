import { describe, expect, it } from 'vitest';
import { controllerCanManageInstanceProfile } from '../../../lambda/core/checks/controller-can-manage-instance-profile.js';
import { unavailable } from '../../../lambda/core/facts/slice.js';
import {
  aCluster,
  aClusterState,
  aPermissionsInventory,
  CONTROLLER_ROLE,
  withSimulations,
} from '../../support/permission-builders.js';

const now = new Date('2026-11-01T00:00:00Z');

/** The cluster's NodePools could not be listed (HTTP 403 from the Kubernetes API). */
function nodePoolsForbidden() {
  const state = {
    ...aClusterState({ irsaRoleArn: CONTROLLER_ROLE }),
    nodePools: unavailable<never>('access-denied', 'HTTP 403 on /apis/karpenter.sh/v1/nodepools'),
  };
  return aPermissionsInventory({ clusters: [aCluster({ state })], nodePools: [] });
}

describe('controller-can-manage-instance-profile', () => {
  it('passes in role mode and is not applicable in instanceProfile mode', () => {
    const findings = controllerCanManageInstanceProfile.evaluate(
      withSimulations(aPermissionsInventory()),
      { now }
    );

    expect(findings.map((finding) => [finding.resource.name, finding.status])).toEqual([
      ['default', 'pass'],
      ['gpu', 'not-applicable'],
    ]);
  });

  it('is not applicable in instanceProfile mode even when nothing was simulated', () => {
    // Prepare: permissions never collected for either NodeClass.
    const inventory = aPermissionsInventory();
    // Act
    const findings = controllerCanManageInstanceProfile.evaluate(inventory, { now });
    // Assess
    expect(findings.map((finding) => [finding.resource.name, finding.status])).toEqual([
      ['default', 'error'],
      ['gpu', 'not-applicable'],
    ]);
  });

  it('fails when an identity-policy Deny blocks AddRoleToInstanceProfile', () => {
    const inventory = withSimulations(aPermissionsInventory(), (_request, action) =>
      action === 'iam:AddRoleToInstanceProfile'
        ? { decision: 'explicitDeny', matchedStatements: [{ sourcePolicyId: 'DenyProfileEdits' }] }
        : {}
    );

    const [finding] = controllerCanManageInstanceProfile.evaluate(inventory, { now });

    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('matched: DenyProfileEdits');
    expect(finding?.remediation).toContain(
      'Remove or narrow the Deny statement in DenyProfileEdits'
    );
  });

  it('keeps its verdict when the cluster’s NodePools could not be read (no NodePool in its requests)', () => {
    const findings = controllerCanManageInstanceProfile.evaluate(
      withSimulations(nodePoolsForbidden()),
      { now }
    );

    expect(findings.map((finding) => finding.status)).toEqual(
      controllerCanManageInstanceProfile
        .evaluate(withSimulations(aPermissionsInventory()), { now })
        .map((f) => f.status)
    );
    expect(findings.map((finding) => finding.status)).not.toContain('error');
  });
});
