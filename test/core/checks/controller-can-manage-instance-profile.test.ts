import { describe, expect, it } from 'vitest';
import { controllerCanManageInstanceProfile } from '../../../lambda/core/checks/controller-can-manage-instance-profile.js';
import type { ClusterState } from '../../../lambda/core/facts/cluster.js';
import type { ReadPolicies } from '../../../lambda/core/facts/permissions.js';
import { unavailable } from '../../../lambda/core/facts/slice.js';
import {
  aCluster,
  aClusterState,
  aControllerRole,
  aPermissionsInventory,
  CONTROLLER_ROLE,
  withSimulations,
} from '../../support/permission-builders.js';
import { aControllerUnreadState, CONTROLLER_UNREAD } from '../../support/read-faults.js';

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

describe('controller-can-manage-instance-profile: --controller-role while the controller is unread', () => {
  /**
   * As the collector simulates a role given by --controller-role (with --karpenter-version): the
   * EKS cluster name stands in for Karpenter's CLUSTER_NAME. `state` is the scan's cluster state.
   */
  function overrideScan(state: ClusterState | undefined, controllerPolicies?: ReadPolicies) {
    const simulated = withSimulations(aPermissionsInventory(), () => ({}), {
      controllerRole: aControllerRole({ source: 'override' }),
      ...(controllerPolicies === undefined ? {} : { controllerPolicies }),
    });
    const { state: _read, ...manifestCluster } = aCluster();
    const cluster = state === undefined ? manifestCluster : { ...manifestCluster, state };
    return { ...simulated, clusters: [cluster] };
  }
  const evaluateDefault = (inventory: ReturnType<typeof overrideScan>) =>
    controllerCanManageInstanceProfile
      .evaluate(inventory, { now })
      .find((finding) => finding.resource.name === 'default');
  /** Policies that name instance profiles by a wildcard and test no cluster tag. */
  const nameBlind: ReadPolicies = {
    identity: [
      {
        name: 'Controller',
        document: JSON.stringify({
          Version: '2012-10-17',
          Statement: [{ Effect: 'Allow', Action: 'iam:*', Resource: '*' }],
        }),
      },
    ],
  };

  it('reports an error with a read fault when the policies may test the cluster name', () => {
    const finding = evaluateDefault(overrideScan(aControllerUnreadState()));
    expect(finding?.status).toBe('error');
    expect(finding?.readFault).toEqual(CONTROLLER_UNREAD);
    expect(finding?.message).toContain('EKS cluster name "demo" for Karpenter\'s CLUSTER_NAME');
    expect(finding?.evidence).toMatchObject({ assumedClusterName: 'demo' });
  });

  it('gives the verdict when the policies cannot tell one cluster name from another', () => {
    const finding = evaluateDefault(overrideScan(aControllerUnreadState(), nameBlind));
    expect(finding?.status).toBe('pass');
  });

  it('gives the verdict, as before, when the controller was simply not looked at', () => {
    const finding = evaluateDefault(overrideScan(undefined));
    expect(finding?.status).toBe('pass');
    expect(finding?.readFault).toBeUndefined();
  });
});
