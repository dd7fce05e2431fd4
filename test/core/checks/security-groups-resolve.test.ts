import { describe, expect, it } from 'vitest';
import { securityGroupsResolve } from '../../../lambda/core/checks/security-groups-resolve.js';
import { ok } from '../../../lambda/core/facts/slice.js';
import { anAwsInventory, SCAN_TIME, someAwsFacts, throttled } from '../../support/aws-builders.js';
import { aNodeClassObject } from '../../support/builders.js';

const now = SCAN_TIME;
const nodeClass = aNodeClassObject();

describe('security-groups-resolve', () => {
  it('passes when a group matches', () => {
    const [finding] = securityGroupsResolve.evaluate(anAwsInventory([nodeClass], someAwsFacts()), {
      now,
    });
    expect(finding?.status).toBe('pass');
  });

  it('fails when no group matches', () => {
    const facts = someAwsFacts({ securityGroups: ok({ queries: [], securityGroups: [] }) });
    const [finding] = securityGroupsResolve.evaluate(anAwsInventory([nodeClass], facts), { now });
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('SecurityGroupsNotFound');
  });

  it('reports an error when DescribeSecurityGroups failed', () => {
    const facts = someAwsFacts({ securityGroups: throttled('ec2:DescribeSecurityGroups') });
    const [finding] = securityGroupsResolve.evaluate(anAwsInventory([nodeClass], facts), { now });
    expect(finding?.status).toBe('error');
    expect(finding?.message).toContain('throttled');
  });
});
