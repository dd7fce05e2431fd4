import { describe, expect, it } from 'vitest';
import { nodePoolZonesHaveSubnets } from '../../../lambda/core/checks/nodepool-zones-have-subnets.js';
import { ok } from '../../../lambda/core/facts/slice.js';
import { anAwsInventory, aSubnet, SCAN_TIME, someAwsFacts } from '../../support/aws-builders.js';
import { aNodeClassObject } from '../../support/builders.js';
import { aNodePoolObject, requirement, withNodePools } from '../../support/nodepool-builders.js';

const now = SCAN_TIME;
const subnetA = aSubnet();
const subnetB = aSubnet({
  id: 'subnet-0b2',
  availabilityZone: 'us-east-1b',
  availabilityZoneId: 'use1-az2',
});

function evaluate(subnets: (typeof subnetA)[], requirements: unknown[]) {
  const facts = someAwsFacts({ subnets: ok({ queries: [], subnets }) });
  const inventory = withNodePools(anAwsInventory([aNodeClassObject()], facts), [
    aNodePoolObject({ requirements }),
  ]);
  return nodePoolZonesHaveSubnets.evaluate(inventory, { now });
}

describe('nodepool-zones-have-subnets', () => {
  it('fails critical naming the zones when no allowed zone has a subnet', () => {
    const [finding] = evaluate(
      [subnetA, subnetB],
      [requirement('topology.kubernetes.io/zone', 'In', ['us-east-1c', 'us-east-1d'])]
    );
    expect(finding?.status).toBe('fail');
    expect(finding?.severity).toBeUndefined();
    expect(finding?.message).toContain('us-east-1c, us-east-1d');
    expect(finding?.message).toContain('us-east-1a (use1-az1)');
    expect(finding?.evidence).toMatchObject({ zonesWithoutSubnet: ['us-east-1c', 'us-east-1d'] });
  });

  it('is low when some allowed zones have no subnet', () => {
    const [finding] = evaluate(
      [subnetA, subnetB],
      [requirement('topology.kubernetes.io/zone', 'In', ['us-east-1a', 'us-east-1c'])]
    );
    expect(finding).toMatchObject({ status: 'fail', severity: 'low' });
    expect(finding?.evidence).toMatchObject({ zonesWithoutSubnet: ['us-east-1c'] });
  });

  it('matches zone ids too', () => {
    expect(
      evaluate([subnetA], [requirement('topology.k8s.aws/zone-id', 'In', ['use1-az9'])])[0]?.status
    ).toBe('fail');
    expect(
      evaluate([subnetA], [requirement('topology.k8s.aws/zone-id', 'In', ['use1-az1'])])[0]?.status
    ).toBe('pass');
  });

  it('fails when NotIn excludes every subnet zone', () => {
    const [finding] = evaluate(
      [subnetA],
      [requirement('topology.kubernetes.io/zone', 'NotIn', ['us-east-1a'])]
    );
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('none of the subnet zones');
  });

  it('passes without a zone requirement and when every named zone has a subnet', () => {
    expect(evaluate([subnetA], [])[0]?.status).toBe('pass');
    expect(
      evaluate(
        [subnetA, subnetB],
        [requirement('topology.kubernetes.io/zone', 'In', ['us-east-1b'])]
      )[0]?.status
    ).toBe('pass');
  });

  it('is not applicable, a follow-on of subnets-resolve, when the class selects no subnet', () => {
    const [finding] = evaluate(
      [],
      [requirement('topology.kubernetes.io/zone', 'In', ['us-east-1a'])]
    );
    expect(finding).toMatchObject({
      status: 'not-applicable',
      causedBy: { checkId: 'subnets-resolve' },
    });
  });
});
