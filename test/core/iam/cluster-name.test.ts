import { describe, expect, it } from 'vitest';
import type { PermissionFacts } from '../../../lambda/core/facts/permissions.js';
import { clusterNameMayMatter } from '../../../lambda/core/iam/cluster-name.js';
import { nodeClassKey } from '../../../lambda/core/inventory.js';
import { referenceControllerPolicies } from '../../support/karpenter-controller-policy.js';
import { aPermissionsInventory, withSimulations } from '../../support/permission-builders.js';

const ACCOUNT = '111122223333';

/** The simulations core builds for NodeClass `default` of cluster `demo` (role mode). */
function simulatedFacts(): PermissionFacts {
  const facts = withSimulations(aPermissionsInventory()).permissions.get(
    nodeClassKey('demo', 'default')
  );
  if (facts === undefined) throw new Error('no permission facts for demo/default');
  return facts;
}

/** The facts with the controller role's policies: one document with `statements`. */
function withPolicy(statements: readonly object[]): PermissionFacts {
  const document = JSON.stringify({ Version: '2012-10-17', Statement: statements });
  return {
    ...simulatedFacts(),
    controllerPolicies: { identity: [{ name: 'Controller', document }] },
  };
}

const allowAll = (overrides: object = {}) => ({
  Effect: 'Allow',
  Action: '*',
  Resource: '*',
  ...overrides,
});

describe('clusterNameMayMatter', () => {
  it('may matter when the policies were not read', () => {
    expect(clusterNameMayMatter(simulatedFacts(), 'launch', 'demo')).toBe(true);
  });

  it('does not matter to policies that test neither the cluster tags nor profile paths', () => {
    const facts = withPolicy([
      allowAll({ Condition: { StringLike: { 'aws:RequestTag/karpenter.sh/nodepool': '*' } } }),
    ]);
    for (const group of ['launch', 'manage-instance-profile', 'discover'] as const) {
      expect(clusterNameMayMatter(facts, group, 'demo'), group).toBe(false);
    }
  });

  it.each([
    [
      'the kubernetes.io/cluster tag key, another name in it',
      'aws:RequestTag/kubernetes.io/cluster/prod',
      'owned',
    ],
    ['the eks:eks-cluster-name tag value', 'aws:RequestTag/eks:eks-cluster-name', 'demo'],
    ['the tag keys of the request', 'aws:TagKeys', 'kubernetes.io/cluster/demo'],
  ])('matters to a launch when a condition tests %s', (_label, key, value) => {
    const operator = key === 'aws:TagKeys' ? 'ForAnyValue:StringEquals' : 'StringEquals';
    const facts = withPolicy([allowAll({ Condition: { [operator]: { [key]: value } } })]);
    expect(clusterNameMayMatter(facts, 'launch', 'demo')).toBe(true);
  });

  it('matters to instance profiles named by a path holding a cluster name, not by a wildcard', () => {
    const profiles = (resource: string) =>
      withPolicy([
        allowAll({
          Action: ['iam:*InstanceProfile*', 'iam:TagInstanceProfile'],
          Resource: resource,
        }),
      ]);
    const byPath = profiles(`arn:aws:iam::${ACCOUNT}:instance-profile/karpenter/us-east-1/prod/*`);
    const byWildcard = profiles(`arn:aws:iam::${ACCOUNT}:instance-profile/*`);
    const elsewhere = profiles(`arn:aws:iam::${ACCOUNT}:role/KarpenterNodeRole-demo`);
    expect(clusterNameMayMatter(byPath, 'manage-instance-profile', 'demo')).toBe(true);
    expect(clusterNameMayMatter(byWildcard, 'manage-instance-profile', 'demo')).toBe(false);
    expect(clusterNameMayMatter(elsewhere, 'manage-instance-profile', 'demo')).toBe(false);
  });

  it("matters to Karpenter's reference policy for launches, not for its describe calls", () => {
    const identity = referenceControllerPolicies('v1.14.1', {
      partition: 'aws',
      region: 'us-east-1',
      accountId: ACCOUNT,
      clusterName: 'demo',
    });
    const facts = { ...simulatedFacts(), controllerPolicies: { identity } };
    expect(clusterNameMayMatter(facts, 'launch', 'demo')).toBe(true);
    expect(clusterNameMayMatter(facts, 'manage-instance-profile', 'demo')).toBe(true);
    expect(clusterNameMayMatter(facts, 'discover', 'demo')).toBe(false);
  });
});
