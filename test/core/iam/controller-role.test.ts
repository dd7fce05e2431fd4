import { describe, expect, it } from 'vitest';
import { ok, unavailable } from '../../../lambda/core/facts/slice.js';
import { resolveControllerRole } from '../../../lambda/core/iam/controller-role.js';
import { aCluster, aClusterState, CONTROLLER_ROLE } from '../../support/permission-builders.js';

const PI_ROLE = 'arn:aws:iam::111122223333:role/demo-karpenter';
const TARGET_ROLE = 'arn:aws:iam::444455556666:role/karpenter-target';

function association(overrides: Record<string, unknown> = {}) {
  return { namespace: 'kube-system', serviceAccount: 'karpenter', roleArn: PI_ROLE, ...overrides };
}

describe('resolveControllerRole', () => {
  it('uses the IRSA annotation', () => {
    const role = resolveControllerRole(aCluster());

    expect(role).toMatchObject({
      status: 'found',
      roleArn: CONTROLLER_ROLE,
      source: 'irsa',
      sessionTags: {},
    });
    expect(role.lookedAt[0]).toContain('eks.amazonaws.com/role-arn');
  });

  it('prefers IRSA over a Pod Identity association and says so', () => {
    const cluster = aCluster({
      state: aClusterState({ irsaRoleArn: CONTROLLER_ROLE, associations: ok([association()]) }),
    });

    const role = resolveControllerRole(cluster);

    expect(role).toMatchObject({ status: 'found', roleArn: CONTROLLER_ROLE, source: 'irsa' });
    expect(role.notes.join(' ')).toContain('IRSA wins');
  });

  it('uses the Pod Identity role with its session tags', () => {
    const cluster = aCluster({ state: aClusterState({ associations: ok([association()]) }) });

    const role = resolveControllerRole(cluster);

    expect(role).toEqual(
      expect.objectContaining({
        status: 'found',
        roleArn: PI_ROLE,
        source: 'pod-identity',
        sessionTags: {
          'eks-cluster-arn': 'arn:aws:eks:us-east-1:111122223333:cluster/demo',
          'eks-cluster-name': 'demo',
          'kubernetes-namespace': 'kube-system',
          'kubernetes-service-account': 'karpenter',
        },
      })
    );
  });

  it('simulates targetRoleArn when set, without session tags when disabled', () => {
    const cluster = aCluster({
      state: aClusterState({
        associations: ok([association({ targetRoleArn: TARGET_ROLE, disableSessionTags: true })]),
      }),
    });

    const role = resolveControllerRole(cluster);

    expect(role).toMatchObject({ status: 'found', roleArn: TARGET_ROLE, sessionTags: {} });
  });

  it('ignores associations of other ServiceAccounts', () => {
    const cluster = aCluster({
      state: aClusterState({ associations: ok([association({ serviceAccount: 'other' })]) }),
    });

    expect(resolveControllerRole(cluster).status).toBe('not-found');
  });

  it('lets the per-cluster override win', () => {
    const role = resolveControllerRole(aCluster(), 'arn:aws:iam::111122223333:role/Override');

    expect(role).toMatchObject({
      status: 'found',
      source: 'override',
      roleArn: 'arn:aws:iam::111122223333:role/Override',
    });
  });

  it('is unavailable when the controller could not be read, naming the reason', () => {
    const cluster = aCluster({
      state: {
        read: unavailable('access-denied', '403'),
        controller: unavailable('access-denied', '403 forbidden'),
      },
    });

    expect(resolveControllerRole(cluster)).toMatchObject({
      status: 'unavailable',
      reason: 'access-denied',
    });
  });

  it('is unavailable when there is no IRSA and associations could not be listed', () => {
    const cluster = aCluster({
      state: aClusterState({
        associations: unavailable('access-denied', 'eks:ListPodIdentityAssociations denied'),
      }),
    });

    expect(resolveControllerRole(cluster)).toMatchObject({
      status: 'unavailable',
      reason: 'access-denied',
    });
  });

  it('is unavailable without cluster state, and not found without a controller', () => {
    const { state: _state, ...stateless } = aCluster();
    expect(resolveControllerRole(stateless).status).toBe('unavailable');
    const noController = aCluster({
      state: { read: ok({ nodeClassCount: 0 }), controller: ok(undefined) },
    });
    expect(resolveControllerRole(noController).status).toBe('not-found');
  });
});
