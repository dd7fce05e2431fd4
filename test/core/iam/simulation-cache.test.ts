import { describe, expect, it } from 'vitest';
import type { SimulationRequest } from '../../../lambda/core/facts/permissions.js';
import { cacheKeyId, simulationCacheKey } from '../../../lambda/core/iam/simulation-cache.js';

const ROLE = 'arn:aws:iam::111122223333:role/KarpenterController';
const ALLOW_RUN = JSON.stringify({
  Version: '2012-10-17',
  Statement: [{ Effect: 'Allow', Action: 'ec2:RunInstances', Resource: '*' }],
});
const ALLOW_ALL_EC2 = JSON.stringify({
  Version: '2012-10-17',
  Statement: [{ Effect: 'Allow', Action: 'ec2:*', Resource: '*' }],
});

const request: Pick<SimulationRequest, 'principalArn' | 'actions' | 'resourceArns' | 'context'> = {
  principalArn: ROLE,
  actions: ['ec2:RunInstances', 'ec2:CreateFleet'],
  resourceArns: ['arn:aws:ec2:eu-west-1::image/ami-1', 'arn:aws:ec2:eu-west-1:*:subnet/subnet-1'],
  context: [
    { key: 'aws:RequestTag/karpenter.sh/nodepool', type: 'string', values: ['default'] },
    { key: 'aws:TagKeys', type: 'stringList', values: ['a', 'b'] },
  ],
};

const id = (
  policies: Parameters<typeof simulationCacheKey>[1],
  changed: Partial<typeof request> = {}
) => cacheKeyId(simulationCacheKey({ ...request, ...changed }, policies));

describe('simulation cache key', () => {
  it('is the same for the same principal, policies and request, in any order of its sets', () => {
    const policies = { identity: [ALLOW_RUN] };
    expect(id(policies)).toBe(id({ identity: [ALLOW_RUN] }));
    expect(
      id(policies, {
        actions: [...request.actions].reverse(),
        resourceArns: [...request.resourceArns].reverse(),
        context: [...request.context].reverse(),
      })
    ).toBe(id(policies));
  });

  it('changes when a policy document, the boundary or where a document sits changes', () => {
    const base = id({ identity: [ALLOW_RUN] });
    expect(id({ identity: [ALLOW_ALL_EC2] })).not.toBe(base);
    expect(id({ identity: [ALLOW_RUN, ALLOW_ALL_EC2] })).not.toBe(base);
    expect(id({ identity: [ALLOW_RUN], boundary: ALLOW_ALL_EC2 })).not.toBe(base);
    // The same documents, one moved from the identity policies to the boundary.
    expect(id({ identity: [ALLOW_RUN, ALLOW_ALL_EC2] })).not.toBe(
      id({ identity: [ALLOW_RUN], boundary: ALLOW_ALL_EC2 })
    );
  });

  it('changes when the principal, an action, a resource or a context value changes', () => {
    const policies = { identity: [ALLOW_RUN] };
    const base = id(policies);
    const variants = [
      id(policies, { principalArn: `${ROLE}2` }),
      id(policies, { actions: ['ec2:RunInstances'] }),
      id(policies, { resourceArns: ['arn:aws:ec2:eu-west-1::image/ami-2'] }),
      id(policies, {
        context: [
          { key: 'aws:RequestTag/karpenter.sh/nodepool', type: 'string', values: ['gpu'] },
          { key: 'aws:TagKeys', type: 'stringList', values: ['a', 'b'] },
        ],
      }),
      id(policies, { context: [] }),
    ];
    expect(new Set([base, ...variants]).size).toBe(variants.length + 1);
  });

  it('partitions by principal: every request of a role shares the partition', () => {
    const policies = { identity: [ALLOW_RUN] };
    const one = simulationCacheKey(request, policies);
    const other = simulationCacheKey({ ...request, actions: ['iam:PassRole'] }, policies);
    expect(one.principal).toBe(other.principal);
    expect(one.fingerprint).not.toBe(other.fingerprint);
    expect(
      simulationCacheKey({ ...request, principalArn: `${ROLE}2` }, policies).principal
    ).not.toBe(one.principal);
  });
});
