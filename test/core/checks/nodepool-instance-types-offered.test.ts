import { describe, expect, it } from 'vitest';
import { nodePoolInstanceTypesOffered } from '../../../lambda/core/checks/nodepool-instance-types-offered.js';
import type { AwsNodeClassFacts, InstanceTypeOffering } from '../../../lambda/core/facts/aws.js';
import { ok } from '../../../lambda/core/facts/slice.js';
import {
  instanceTypeAllowed,
  instanceTypeLabels,
  nodeClassesNeedingOfferings,
} from '../../../lambda/core/instance-types.js';
import type { Inventory, NodePoolEntry } from '../../../lambda/core/inventory.js';
import { parseNodePool } from '../../../lambda/core/schema.js';
import { anAwsInventory, aSubnet, someAwsFacts, throttled } from '../../support/aws-builders.js';
import { aNodeClassObject } from '../../support/builders.js';

const NOW = new Date('2025-10-15T00:00:00Z');

function aNodePool(requirements: readonly unknown[], name = 'general', nodeClass = 'default') {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name },
    spec: {
      template: {
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: nodeClass },
          requirements,
        },
      },
    },
  };
}

function entry(raw: unknown, cluster = 'demo'): NodePoolEntry {
  const name = (raw as { metadata: { name: string } }).metadata.name;
  return { cluster, name, parsed: parseNodePool(raw) };
}

function offering(instanceType: string, zone: string): InstanceTypeOffering {
  return { instanceType, zone };
}

/** Subnets in us-east-1a and us-east-1b; m7i everywhere, x2gd only in us-east-1c. */
const OFFERINGS = [
  offering('m7i.large', 'us-east-1a'),
  offering('m7i.large', 'us-east-1b'),
  offering('m7i.large', 'us-east-1c'),
  offering('c6g.xlarge', 'us-east-1b'),
  offering('x2gd.large', 'us-east-1c'),
];

function facts(overrides: Partial<AwsNodeClassFacts> = {}): AwsNodeClassFacts {
  return someAwsFacts({
    subnets: ok({
      queries: [],
      subnets: [
        aSubnet({ id: 'subnet-a', availabilityZone: 'us-east-1a', availabilityZoneId: 'use1-az1' }),
        aSubnet({ id: 'subnet-b', availabilityZone: 'us-east-1b', availabilityZoneId: 'use1-az2' }),
      ],
    }),
    instanceTypeOfferings: ok({ offerings: OFFERINGS }),
    ...overrides,
  });
}

function inventoryWith(
  requirements: readonly unknown[],
  awsFacts: AwsNodeClassFacts = facts()
): Inventory {
  const base = anAwsInventory([aNodeClassObject()], awsFacts);
  return { ...base, nodePools: [entry(aNodePool(requirements))] };
}

function evaluate(inventory: Inventory) {
  return nodePoolInstanceTypesOffered.evaluate(inventory, { now: NOW });
}

describe('instance type labels', () => {
  it('derives family, size, category and generation from the name as Karpenter labels them', () => {
    // Arrange / Act
    const labels = instanceTypeLabels('c7gn.16xlarge');
    const highMemory = instanceTypeLabels('u-6tb1.metal');

    // Assess
    expect(labels).toEqual({
      'node.kubernetes.io/instance-type': 'c7gn.16xlarge',
      'karpenter.k8s.aws/instance-family': 'c7gn',
      'karpenter.k8s.aws/instance-size': '16xlarge',
      'karpenter.k8s.aws/instance-category': 'c',
      'karpenter.k8s.aws/instance-generation': '7',
    });
    expect(highMemory['karpenter.k8s.aws/instance-category']).toBe('u');
    expect(highMemory['karpenter.k8s.aws/instance-generation']).toBe('1');
    expect(highMemory['karpenter.k8s.aws/instance-family']).toBe('u-6tb1');
  });

  it('compares generations as integers and treats an absent label as satisfying only NotIn', () => {
    // Arrange
    const newer = [{ key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt', values: ['6'] }];
    const notC = [{ key: 'karpenter.k8s.aws/instance-category', operator: 'NotIn', values: ['c'] }];
    const inM = [{ key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['m'] }];

    // Act / Assess
    expect(instanceTypeAllowed('m7i.large', newer)).toBe(true);
    expect(instanceTypeAllowed('m10.large', newer)).toBe(true);
    expect(instanceTypeAllowed('m6i.large', newer)).toBe(false);
    expect(instanceTypeAllowed('weird', notC)).toBe(true);
    expect(instanceTypeAllowed('weird', inM)).toBe(false);
  });
});

describe('nodepool-instance-types-offered', () => {
  it('passes when a type the requirements allow is offered in a subnet zone', () => {
    // Arrange
    const inventory = inventoryWith([
      { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['m', 'c'] },
      { key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt', values: ['5'] },
    ]);

    // Act
    const [finding] = evaluate(inventory);

    // Assess
    expect(finding?.status).toBe('pass');
    expect(finding?.resource).toMatchObject({ kind: 'NodePool', name: 'general' });
    expect(finding?.message).toContain('m7i.large');
  });

  it('fails, naming the zones and where the family is offered, when it is offered only elsewhere', () => {
    // Arrange
    const inventory = inventoryWith([
      { key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['x2gd'] },
    ]);

    // Act
    const [finding] = evaluate(inventory);

    // Assess
    expect(finding?.status).toBe('fail');
    expect(finding?.severity ?? nodePoolInstanceTypesOffered.severity).toBe('high');
    expect(finding?.message).toContain('us-east-1a, us-east-1b');
    expect(finding?.message).toContain('offered only in us-east-1c');
    expect(finding?.evidence).toMatchObject({
      nodeClass: 'default',
      zones: ['us-east-1a', 'us-east-1b'],
      requirements: [
        { key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['x2gd'] },
      ],
      offeredElsewhere: ['us-east-1c'],
    });
    expect(finding?.location?.path).toBe('spec.template.spec.requirements[0]');
  });

  it('intersects the subnet zones with the NodePool zone requirement', () => {
    // Arrange: c6g is offered in us-east-1b only, which the NodePool excludes.
    const inventory = inventoryWith([
      { key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['c6g'] },
      { key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1a'] },
    ]);

    // Act
    const [finding] = evaluate(inventory);

    // Assess
    expect(finding?.status).toBe('fail');
    expect(finding?.evidence).toMatchObject({ zones: ['us-east-1a'] });
  });

  it('fails when an exact instance type and a size requirement leave nothing', () => {
    // Arrange
    const inventory = inventoryWith([
      { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m7i.large'] },
      { key: 'karpenter.k8s.aws/instance-size', operator: 'NotIn', values: ['large'] },
    ]);

    // Act
    const [finding] = evaluate(inventory);

    // Assess
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('is offered anywhere in the region');
  });

  it('is not applicable when the NodePool does not restrict instance types', () => {
    // Arrange
    const inventory = inventoryWith([
      { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
    ]);

    // Act
    const [finding] = evaluate(inventory);

    // Assess
    expect(finding?.status).toBe('not-applicable');
  });

  it('is not applicable when offerings were not recorded, and an error when unreadable', () => {
    // Arrange
    const requirements = [
      { key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['x2gd'] },
    ];
    const { instanceTypeOfferings: _omitted, ...withoutOfferings } = facts();

    // Act
    const [notRecorded] = evaluate(inventoryWith(requirements, withoutOfferings));
    const [unreadable] = evaluate(
      inventoryWith(
        requirements,
        facts({ instanceTypeOfferings: throttled('ec2:DescribeInstanceTypeOfferings') })
      )
    );

    // Assess
    expect(notRecorded?.status).toBe('not-applicable');
    expect(unreadable?.status).toBe('error');
    expect(unreadable?.message).toContain('DescribeInstanceTypeOfferings');
  });

  it('is a follow-on of subnets-resolve when the class selects no subnet', () => {
    // Arrange
    const inventory = inventoryWith(
      [{ key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['m7i'] }],
      facts({ subnets: ok({ queries: [], subnets: [] }) })
    );

    // Act
    const [finding] = evaluate(inventory);

    // Assess
    expect(finding?.status).toBe('not-applicable');
    expect(finding?.causedBy?.checkId).toBe('subnets-resolve');
  });
});

describe('which NodeClasses need offerings', () => {
  it('only classes referenced by a NodePool of the same cluster that restricts instance types', () => {
    // Arrange
    const base = anAwsInventory([aNodeClassObject()], facts());
    const inventory: Inventory = {
      ...base,
      nodePools: [
        entry(
          aNodePool(
            [{ key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['m'] }],
            'restricted',
            'default'
          )
        ),
        entry(
          aNodePool([{ key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] }], 'a', 'gpu')
        ),
        entry(
          aNodePool(
            [{ key: 'karpenter.k8s.aws/instance-size', operator: 'In', values: ['large'] }],
            'other',
            'spot'
          ),
          'other-cluster'
        ),
      ],
    };

    // Act
    const needed = nodeClassesNeedingOfferings(inventory);

    // Assess
    expect([...needed].sort()).toEqual(['demo/default', 'other-cluster/spot']);
  });
});
