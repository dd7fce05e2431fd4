import { describe, expect, it } from 'vitest';
import { networkSingleVpc } from '../../../lambda/core/checks/network-single-vpc.js';
import { ok, unavailable } from '../../../lambda/core/facts/slice.js';
import {
  aClusterFacts,
  anAwsInventory,
  aSecurityGroup,
  aSubnet,
  SCAN_TIME,
  someAwsFacts,
  throttled,
} from '../../support/aws-builders.js';
import { aNodeClassObject } from '../../support/builders.js';

const now = SCAN_TIME;
const nodeClass = aNodeClassObject();

describe('network-single-vpc', () => {
  it('passes when everything is in the cluster VPC', () => {
    const [finding] = networkSingleVpc.evaluate(anAwsInventory([nodeClass], someAwsFacts()), {
      now,
    });
    expect(finding?.status).toBe('pass');
    expect(finding?.message).toContain('cluster VPC vpc-0main');
  });

  it('fails when a security group is in another VPC', () => {
    const facts = someAwsFacts({
      securityGroups: ok({
        queries: [],
        securityGroups: [aSecurityGroup({ id: 'sg-0other', vpcId: 'vpc-0other' })],
      }),
    });
    const [finding] = networkSingleVpc.evaluate(anAwsInventory([nodeClass], facts), { now });
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('SecurityGroupSubnetVPCMismatch');
  });

  it('fails when all resources share a VPC that is not the cluster VPC', () => {
    const inventory = anAwsInventory([nodeClass], someAwsFacts(), {
      aws: ok(aClusterFacts({ vpcId: 'vpc-0cluster' })),
    });
    const [finding] = networkSingleVpc.evaluate(inventory, { now });
    expect(finding?.status).toBe('fail');
    expect(finding?.evidence).toMatchObject({ clusterVpc: 'vpc-0cluster' });
  });

  it('reports an error when the cluster VPC could not be read', () => {
    const inventory = anAwsInventory([nodeClass], someAwsFacts(), {
      aws: unavailable('access-denied', 'eks:DescribeCluster denied'),
    });
    const [finding] = networkSingleVpc.evaluate(inventory, { now });
    expect(finding?.status).toBe('error');
    expect(finding?.message).toContain('access-denied');
  });

  it('still fails on two VPCs when subnets span them', () => {
    const facts = someAwsFacts({
      subnets: ok({
        queries: [],
        subnets: [aSubnet(), aSubnet({ id: 'subnet-0b', vpcId: 'vpc-0b' })],
      }),
    });
    expect(networkSingleVpc.evaluate(anAwsInventory([nodeClass], facts), { now })[0]?.status).toBe(
      'fail'
    );
  });

  it('does not count a resource whose VPC was not reported as a second VPC', () => {
    // Prepare: the group's VpcId is missing from the response; everything known is in one VPC.
    const { vpcId, ...withoutVpc } = aSecurityGroup();
    const facts = someAwsFacts({
      securityGroups: ok({ queries: [], securityGroups: [withoutVpc] }),
    });
    // Act
    const [finding] = networkSingleVpc.evaluate(anAwsInventory([nodeClass], facts), { now });
    // Assess
    expect(finding?.status).toBe('pass');
    expect(finding?.message).toContain('sg-0a1');
    expect(finding?.message).toContain('VPC not reported');
  });

  it("does not claim nodes cannot reach the control plane outside the cluster's VPC", () => {
    const facts = someAwsFacts({
      subnets: ok({ queries: [], subnets: [aSubnet({ vpcId: 'vpc-0other' })] }),
      securityGroups: ok({
        queries: [],
        securityGroups: [aSecurityGroup({ vpcId: 'vpc-0other' })],
      }),
    });
    const [finding] = networkSingleVpc.evaluate(anAwsInventory([nodeClass], facts), { now });
    expect(finding?.status).toBe('fail');
    expect(finding?.message).not.toContain('cannot reach the control plane');
  });

  it('reports an error when security groups could not be read', () => {
    const facts = someAwsFacts({ securityGroups: throttled('ec2:DescribeSecurityGroups') });
    expect(networkSingleVpc.evaluate(anAwsInventory([nodeClass], facts), { now })[0]?.status).toBe(
      'error'
    );
  });
});
