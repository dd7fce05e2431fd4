import { describe, expect, it } from 'vitest';
import { securityGroupNameUnique } from '../../../lambda/core/checks/security-group-name-unique.js';
import { ok } from '../../../lambda/core/facts/slice.js';
import {
  anAwsInventory,
  aSecurityGroup,
  SCAN_TIME,
  someAwsFacts,
  throttled,
} from '../../support/aws-builders.js';
import { aNodeClassObject } from '../../support/builders.js';

const now = SCAN_TIME;
const byName = aNodeClassObject({ spec: { securityGroupSelectorTerms: [{ name: 'demo-nodes' }] } });

describe('security-group-name-unique', () => {
  it('passes when the name matches groups in one VPC', () => {
    const [finding] = securityGroupNameUnique.evaluate(anAwsInventory([byName], someAwsFacts()), {
      now,
    });
    expect(finding?.status).toBe('pass');
  });

  it('fails when the name matches groups in two VPCs', () => {
    const facts = someAwsFacts({
      securityGroups: ok({
        queries: [],
        securityGroups: [aSecurityGroup(), aSecurityGroup({ id: 'sg-0b', vpcId: 'vpc-0other' })],
      }),
    });
    const [finding] = securityGroupNameUnique.evaluate(anAwsInventory([byName], facts), { now });
    expect(finding?.status).toBe('fail');
    expect(finding?.location).toEqual({ path: 'spec.securityGroupSelectorTerms[0].name' });
    expect(finding?.message).toContain('sg-0b in vpc-0other');
  });

  it('is not applicable without name terms', () => {
    const [finding] = securityGroupNameUnique.evaluate(
      anAwsInventory([aNodeClassObject()], someAwsFacts()),
      { now }
    );
    expect(finding?.status).toBe('not-applicable');
  });

  it('reports an error when security groups could not be read', () => {
    const facts = someAwsFacts({ securityGroups: throttled('ec2:DescribeSecurityGroups') });
    expect(
      securityGroupNameUnique.evaluate(anAwsInventory([byName], facts), { now })[0]?.status
    ).toBe('error');
  });
});
