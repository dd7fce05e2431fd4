import { describe, expect, it } from 'vitest';
import { controllerRoleFound } from '../../../lambda/core/checks/controller-role-found.js';
import { ok, unavailable } from '../../../lambda/core/facts/slice.js';
import {
  aCluster,
  aClusterState,
  aPermissionsInventory,
  CONTROLLER_ROLE,
  withSimulations,
} from '../../support/permission-builders.js';

const now = new Date('2026-11-01T00:00:00Z');

describe('controller-role-found', () => {
  it('passes once per cluster, naming the role and where it came from', () => {
    const findings = controllerRoleFound.evaluate(withSimulations(aPermissionsInventory()), {
      now,
    });

    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({
      status: 'pass',
      resource: { cluster: 'demo', kind: 'Cluster', name: 'demo' },
      evidence: { roleArn: CONTROLLER_ROLE, source: 'irsa' },
    });
  });

  it('fails with what was looked at when there is neither IRSA nor Pod Identity', () => {
    const cluster = aCluster({ state: aClusterState({ associations: ok([]) }) });

    const [finding] = controllerRoleFound.evaluate(
      withSimulations(aPermissionsInventory({ clusters: [cluster] })),
      { now }
    );

    expect(finding?.status).toBe('fail');
    expect(finding?.evidence?.lookedAt).toEqual([
      'ServiceAccount kube-system/karpenter annotation eks.amazonaws.com/role-arn: absent',
      'Pod Identity associations for kube-system/karpenter: none',
    ]);
  });

  it('reports an error naming the reason when the cluster could not be read', () => {
    const cluster = aCluster({
      state: {
        read: unavailable('access-denied', '403'),
        controller: unavailable('access-denied', '403'),
      },
    });

    const [finding] = controllerRoleFound.evaluate(
      withSimulations(aPermissionsInventory({ clusters: [cluster] })),
      { now }
    );

    expect(finding?.status).toBe('error');
    expect(finding?.message).toContain('access-denied');
  });

  it('reports an error when the role was not looked up', () => {
    const [finding] = controllerRoleFound.evaluate(aPermissionsInventory(), { now });

    expect(finding?.status).toBe('error');
  });
});
