import { describe, expect, it } from 'vitest';
import { ok, unavailable } from '../../lambda/core/facts/slice.js';
import { emptyInventory, unavailableSources } from '../../lambda/core/inventory.js';

describe('unavailableSources', () => {
  it('lists each unreadable source once, however many NodeClasses needed it', () => {
    // Prepare
    const throttled = unavailable('throttled', 'ec2:DescribeImages failed (RequestLimitExceeded)');
    const inventory = emptyInventory({
      clusters: [
        {
          name: 'prod',
          partition: 'aws',
          state: { read: unavailable('access-denied', 'GET ec2nodeclasses: 403') },
          aws: ok({ accessEntries: ok([]) }),
        },
      ],
      awsFacts: new Map([
        ['prod/a', { amis: throttled, subnets: ok([]) }],
        ['prod/b', { amis: throttled }],
      ]) as never,
      permissions: new Map([
        ['prod/a', { nested: [{ result: unavailable('unknown', 'boom') }] }],
      ]) as never,
    });

    // Act
    const sources = unavailableSources(inventory);

    // Assess
    expect(sources).toEqual([
      'access-denied: GET ec2nodeclasses: 403',
      'throttled: ec2:DescribeImages failed (RequestLimitExceeded)',
      'unknown: boom',
    ]);
  });

  it('is empty when every source was read', () => {
    expect(unavailableSources(emptyInventory())).toEqual([]);
  });
});
