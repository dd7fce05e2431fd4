import { describe, expect, it } from 'vitest';
import { subnetsResolve } from '../../../lambda/core/checks/subnets-resolve.js';
import { ok } from '../../../lambda/core/facts/slice.js';
import { anAwsInventory, SCAN_TIME, someAwsFacts, throttled } from '../../support/aws-builders.js';
import { aNodeClassObject } from '../../support/builders.js';

const now = SCAN_TIME;
const nodeClass = aNodeClassObject();

describe('subnets-resolve', () => {
  it('passes and lists the matched subnets', () => {
    const [finding] = subnetsResolve.evaluate(anAwsInventory([nodeClass], someAwsFacts()), { now });
    expect(finding?.status).toBe('pass');
    expect(finding?.evidence).toEqual({ subnets: ['subnet-0a1'] });
  });

  it('fails when no subnet matches', () => {
    const facts = someAwsFacts({ subnets: ok({ queries: [], subnets: [] }) });
    const [finding] = subnetsResolve.evaluate(anAwsInventory([nodeClass], facts), { now });
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('SubnetsNotFound');
  });

  it('reports an error when DescribeSubnets was throttled', () => {
    const facts = someAwsFacts({ subnets: throttled('ec2:DescribeSubnets') });
    const [finding] = subnetsResolve.evaluate(anAwsInventory([nodeClass], facts), { now });
    expect(finding?.status).toBe('error');
    expect(finding?.message).toContain('throttled');
  });

  it('reports an error when subnets were not collected', () => {
    const [finding] = subnetsResolve.evaluate(anAwsInventory([nodeClass], {}), { now });
    expect(finding?.status).toBe('error');
    expect(finding?.evidence).toEqual({ reason: 'not-collected' });
  });
});
