import { describe, expect, it } from 'vitest';
import { nodePoolArchHasImage } from '../../../lambda/core/checks/nodepool-arch-has-image.js';
import { nodePoolCapacityTypeOffered } from '../../../lambda/core/checks/nodepool-capacity-type-offered.js';
import { nodePoolInstanceTypesOffered } from '../../../lambda/core/checks/nodepool-instance-types-offered.js';
import { nodePoolZonesHaveSubnets } from '../../../lambda/core/checks/nodepool-zones-have-subnets.js';
import type {
  AwsNodeClassFacts,
  CapacityReservation,
  SelectedImage,
} from '../../../lambda/core/facts/aws.js';
import { ok } from '../../../lambda/core/facts/slice.js';
import { nodeClassesLaunchedThrough } from '../../../lambda/core/instance-types.js';
import type { ClusterContext, Inventory } from '../../../lambda/core/inventory.js';
import {
  aCapacityReservation,
  anAmiFacts,
  anAwsInventory,
  anImage,
  aSubnet,
  SCAN_TIME,
  someAwsFacts,
  throttled,
} from '../../support/aws-builders.js';
import { aKarpenterVersion, aNodeClassObject } from '../../support/builders.js';
import { catalog, offeringsIn } from '../../support/instance-types.js';
import { aNodePoolObject, requirement, withNodePools } from '../../support/nodepool-builders.js';
import { aControllerUnreadState, CONTROLLER_UNREAD } from '../../support/read-faults.js';

const now = SCAN_TIME;
const ZONES = ['us-east-1a', 'us-east-1b', 'us-east-1c', 'us-east-1d'];
const x86 = anImage();
const arm = anImage({ id: 'ami-0a1b2c3d4e5f00002', architecture: 'arm64' });

/** Subnets in us-east-1a and us-east-1b; every type offered in four zones, x2iedn only in 1d. */
function facts(overrides: Partial<AwsNodeClassFacts> = {}): AwsNodeClassFacts {
  return someAwsFacts({
    amis: ok(anAmiFacts({ images: [x86, arm] })),
    subnets: ok({
      queries: [],
      subnets: [
        aSubnet({ id: 'subnet-a', availabilityZone: 'us-east-1a', availabilityZoneId: 'use1-az1' }),
        aSubnet({ id: 'subnet-b', availabilityZone: 'us-east-1b', availabilityZoneId: 'use1-az2' }),
      ],
    }),
    instanceTypes: ok({ types: catalog() }),
    instanceTypeOfferings: ok({
      offerings: offeringsIn(ZONES, { 'x2iedn.xlarge': ['us-east-1d'] }),
    }),
    ...overrides,
  });
}

function reservations(...list: CapacityReservation[]): Partial<AwsNodeClassFacts> {
  return { capacityReservations: ok({ queries: [], reservations: list }) };
}

interface PoolOptions {
  readonly requirements?: unknown[];
  readonly limits?: Record<string, unknown>;
  readonly labels?: Record<string, string>;
}

function pool(options: PoolOptions): Record<string, unknown> {
  const object = aNodePoolObject({ requirements: options.requirements ?? [] }) as {
    spec: { template: Record<string, unknown> } & Record<string, unknown>;
  };
  if (options.limits) object.spec.limits = options.limits;
  if (options.labels) object.spec.template.metadata = { labels: options.labels };
  return object;
}

function inventoryWith(
  options: PoolOptions,
  awsFacts: AwsNodeClassFacts = facts(),
  cluster: Partial<ClusterContext> = { karpenterVersion: aKarpenterVersion('1.14.1') },
  spec: Record<string, unknown> = {}
): Inventory {
  return withNodePools(anAwsInventory([aNodeClassObject({ spec })], awsFacts, cluster), [
    pool(options),
  ]);
}

function evaluate(inventory: Inventory) {
  const findings = nodePoolInstanceTypesOffered.evaluate(inventory, { now });
  expect(findings).toHaveLength(1);
  return findings[0];
}

const ARM64 = requirement('kubernetes.io/arch', 'In', ['arm64']);
const FAMILY = 'karpenter.k8s.aws/instance-family';
const RESERVED = requirement('karpenter.sh/capacity-type', 'In', ['reserved']);

describe('nodepool-instance-types-offered: an arm64 NodePool restricted to x86-only families', () => {
  it('fails on the requirement that empties the list, showing the narrowing chain', () => {
    const finding = evaluate(
      inventoryWith({ requirements: [ARM64, requirement(FAMILY, 'In', ['m7i', 'c7i'])] })
    );

    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain(
      '11 instance types → kubernetes.io/arch In [arm64]: 2 → karpenter.k8s.aws/instance-family In [m7i, c7i]: 0.'
    );
    expect(finding?.message).toContain('Left before it: c7g.large, m7g.large.');
    expect(finding?.evidence).toMatchObject({
      nodeClass: 'default',
      blockedAt: { kind: 'requirement', key: FAMILY },
      removed: ['c7g.large', 'm7g.large'],
    });
    expect(finding?.location).toEqual({ path: 'spec.template.spec.requirements[1]' });
  });

  it('passes the same NodePool restricted to Graviton families, listing what can launch', () => {
    const finding = evaluate(
      inventoryWith({ requirements: [ARM64, requirement(FAMILY, 'In', ['m7g', 'c7g'])] })
    );

    expect(finding?.status).toBe('pass');
    expect(finding?.message).toContain('2 instance type(s) can launch');
    expect(finding?.message).toContain('c7g.large, m7g.large, in us-east-1a, us-east-1b');
    expect(finding?.message).toContain(
      '→ zones with a subnet of the class (us-east-1a, us-east-1b): 2'
    );
  });

  it('counts template labels as In requirements, as Karpenter does', () => {
    const finding = evaluate(
      inventoryWith({
        requirements: [requirement('kubernetes.io/arch', 'In', ['amd64'])],
        labels: { [FAMILY]: 'm7g' },
      })
    );

    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain(`label ${FAMILY}=m7g: 0`);
  });

  it('fails when the class has no image of the only allowed architecture', () => {
    const finding = evaluate(
      inventoryWith({ requirements: [ARM64] }, facts({ amis: ok(anAmiFacts({ images: [x86] })) }))
    );

    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('images of the class (amd64): 0');
    expect(finding?.message).toContain('the class has images for amd64 only');
  });

  it('needs an NVIDIA image variant for GPU types when the alias resolved only the standard one', () => {
    const standard: SelectedImage = {
      image: x86,
      architecture: 'x86_64',
      variant: 'standard',
      deprecated: false,
    };
    const amis = anAmiFacts({
      available: ok({ queries: [], matchCount: 1, selected: [standard] }),
    });
    const finding = evaluate(
      inventoryWith(
        { requirements: [requirement('karpenter.k8s.aws/instance-gpu-count', 'Exists')] },
        facts({ amis: ok(amis) })
      )
    );

    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('karpenter.k8s.aws/instance-gpu-count Exists: 2');
    expect(finding?.message).toContain('images of the class (amd64 standard): 0');
  });

  it('evaluates Gt on integer labels and DoesNotExist on labels a type lacks', () => {
    const big = evaluate(
      inventoryWith({ requirements: [requirement('karpenter.k8s.aws/instance-cpu', 'Gt', ['64'])] })
    );
    const noGpu = evaluate(
      inventoryWith({
        requirements: [
          requirement('karpenter.k8s.aws/instance-gpu-count', 'DoesNotExist'),
          requirement('karpenter.k8s.aws/instance-local-nvme', 'Exists'),
        ],
      })
    );

    expect(big?.message).toContain('karpenter.k8s.aws/instance-cpu Gt [64]: 1');
    expect(big?.message).toContain('p4d.24xlarge');
    // x2iedn is the only type with local NVMe and no GPU, and it is offered only in us-east-1d.
    expect(noGpu?.status).toBe('fail');
    expect(noGpu?.message).toContain(
      'Left before it only in zones without a subnet: x2iedn.xlarge in us-east-1d.'
    );
  });
});

describe('nodepool-instance-types-offered: limits below the smallest allowed type', () => {
  it('reads memory 1000 as 1000 bytes and fails, naming the smallest type left', () => {
    const finding = evaluate(inventoryWith({ limits: { cpu: '1000', memory: 1000 } }));

    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain(
      '→ zones with a subnet of the class (us-east-1a, us-east-1b): 10 → limits cpu: 1000, memory: 1000: 0.'
    );
    expect(finding?.message).toContain(
      'Every type left exceeds limits.memory (1000: a quantity without a unit, so 1000 bytes); the smallest type left, c7g.large, has 3729Mi.'
    );
    expect(finding?.evidence).toMatchObject({ blockedAt: { kind: 'limits', key: 'cpu,memory' } });
    expect(finding?.location).toEqual({ path: 'spec.limits' });
  });

  it('passes limits with units and narrows to the types within them', () => {
    const roomy = evaluate(inventoryWith({ limits: { cpu: '1000', memory: '1000Gi' } }));
    const small = evaluate(inventoryWith({ limits: { cpu: '2' } }));

    expect(roomy?.status).toBe('pass');
    expect(small?.status).toBe('pass');
    expect(small?.message).toContain('limits cpu: 2: 6');
  });

  it('fails a node limit of zero and a cpu limit below every type', () => {
    expect(evaluate(inventoryWith({ limits: { nodes: '0' } }))?.status).toBe('fail');
    const cpu = evaluate(inventoryWith({ limits: { cpu: '500m' } }));
    expect(cpu?.message).toContain(
      'Every type left exceeds limits.cpu (500m); the smallest type left, c7g.large, has 2.'
    );
  });
});

describe('nodepool-instance-types-offered: reservations', () => {
  const inZone = (zone: string, more: Partial<CapacityReservation> = {}) =>
    aCapacityReservation({
      id: `cr-${zone}`,
      instanceType: 'm7i.large',
      availabilityZone: zone,
      ...more,
    });

  it('fails a reserved-only NodePool whose reservation is in a zone without a subnet of the class', () => {
    const finding = evaluate(
      inventoryWith({ requirements: [RESERVED] }, facts(reservations(inZone('us-east-1c'))))
    );

    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('karpenter.sh/capacity-type In [reserved]: 1');
    expect(finding?.message).toContain(
      'zones with a subnet of the class (us-east-1a, us-east-1b): 0'
    );
    expect(finding?.message).toContain('Reservation cr-us-east-1c (m7i.large) is in us-east-1c.');
    expect(finding?.evidence).toMatchObject({ blockedAt: { kind: 'subnet-zones' } });
  });

  it('passes the reservation in a zone with a subnet, and only as reserved capacity', () => {
    const finding = evaluate(
      inventoryWith({ requirements: [RESERVED] }, facts(reservations(inZone('us-east-1a'))))
    );

    expect(finding?.status).toBe('pass');
    expect(finding?.message).toContain('m7i.large, in us-east-1a, as reserved');
  });

  it('fails a reservation with no instance left, and one that ended', () => {
    const full = evaluate(
      inventoryWith(
        { requirements: [RESERVED] },
        facts(reservations(inZone('us-east-1a', { availableInstanceCount: 0 })))
      )
    );
    const ended = evaluate(
      inventoryWith(
        { requirements: [RESERVED] },
        facts(reservations(inZone('us-east-1a', { endDate: '2020-01-01T00:00:00.000Z' })))
      )
    );

    expect(full?.message).toContain('capacity reservations Karpenter can use: 0');
    expect(full?.message).toContain('no instance left to launch');
    expect(ended?.message).toContain('karpenter.sh/capacity-type In [reserved]: 0');
    expect(ended?.message).toContain('ended 2020-01-01');
  });

  it('fails reserved capacity on Karpenter releases before v1.3.0', () => {
    const finding = evaluate(
      inventoryWith({ requirements: [RESERVED] }, facts(reservations(inZone('us-east-1a'))), {
        karpenterVersion: aKarpenterVersion('1.1.2'),
      })
    );

    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('Karpenter 1.1.2 has no reserved capacity');
  });
});

describe('nodepool-instance-types-offered: minValues, pods and inputs', () => {
  it('fails when fewer families than minValues are left', () => {
    const finding = evaluate(
      inventoryWith({
        requirements: [{ ...requirement(FAMILY, 'Exists'), minValues: 20 }, ARM64],
      })
    );

    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain(
      'karpenter.k8s.aws/instance-family minValues 20, but the types left have 2 (c7g, m7g)'
    );
    expect(finding?.evidence).toMatchObject({ minValues: [{ key: FAMILY, minValues: 20 }] });
  });

  it('fails when kubelet maxPods 0 leaves no room for a pod', () => {
    const finding = evaluate(inventoryWith({}, facts(), undefined, { kubelet: { maxPods: 0 } }));

    expect(finding?.message).toContain('room for a pod (allocatable pods ≥ 1): 0');
  });

  it('works from the zone offerings alone, with the name-derived labels', () => {
    const { instanceTypes: _omitted, ...offeringsOnly } = facts();
    const finding = evaluate(
      inventoryWith({ requirements: [ARM64, requirement(FAMILY, 'In', ['x2iedn'])] }, offeringsOnly)
    );

    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('11 offered instance types (names only)');
    expect(finding?.message).toContain('Not evaluated: kubernetes.io/arch In [arm64]');
    expect(finding?.message).toContain(
      'Left before it only in zones without a subnet: x2iedn.xlarge in us-east-1d.'
    );
  });

  it('reports an error when the instance types could not be read, and skips without a record', () => {
    const { instanceTypes: _a, instanceTypeOfferings: _b, ...none } = facts();
    const error = evaluate(
      inventoryWith({}, { ...none, instanceTypes: throttled('ec2:DescribeInstanceTypes') })
    );
    const skipped = evaluate(inventoryWith({}, none));

    expect(error?.status).toBe('error');
    expect(error?.message).toContain('DescribeInstanceTypes');
    expect(skipped?.status).toBe('not-applicable');
  });

  it('reports an error, not a verdict, when images or reservations a step needs could not be read', () => {
    const images = evaluate(inventoryWith({}, facts({ amis: throttled('ec2:DescribeImages') })));
    const reserved = evaluate(
      inventoryWith(
        { requirements: [RESERVED] },
        facts({ capacityReservations: throttled('ec2:DescribeCapacityReservations') })
      )
    );
    const onDemand = evaluate(
      inventoryWith(
        { requirements: [requirement('karpenter.sh/capacity-type', 'In', ['on-demand'])] },
        facts({ capacityReservations: throttled('ec2:DescribeCapacityReservations') })
      )
    );

    expect(images?.status).toBe('error');
    expect(reserved?.status).toBe('error');
    expect(reserved?.message).toContain('DescribeCapacityReservations');
    expect(onDemand?.status).toBe('pass');
  });

  it('reports a read fault, not a verdict on the other listing alone, when one of the two could not be read', () => {
    const noTypes = evaluate(
      inventoryWith({}, facts({ instanceTypes: throttled('ec2:DescribeInstanceTypes') }))
    );
    const noOfferings = evaluate(
      inventoryWith(
        {},
        facts({ instanceTypeOfferings: throttled('ec2:DescribeInstanceTypeOfferings') })
      )
    );

    expect(noTypes).toMatchObject({ status: 'error', readFault: { reason: 'throttled' } });
    expect(noOfferings).toMatchObject({ status: 'error', readFault: { reason: 'throttled' } });
    expect(noOfferings?.message).toContain('DescribeInstanceTypeOfferings');
  });

  it("reports a read fault when an SSM parameter of the class's images could not be read", () => {
    const parameter =
      '/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/arm64/standard/recommended/image_id';
    const amis = anAmiFacts({ images: [x86] });
    const partial = evaluate(
      inventoryWith(
        { requirements: [requirement('kubernetes.io/arch', 'In', ['arm64'])] },
        facts({
          amis: ok({
            ...amis,
            ssmParameters: [
              { termIndex: 0, name: parameter, value: throttled('ssm:GetParameters') },
            ],
          }),
        })
      )
    );

    expect(partial).toMatchObject({ status: 'error', readFault: { reason: 'throttled' } });
    expect(partial?.message).toContain(parameter);
  });

  it('needs the region’s types only for NodeClasses a NodePool launches through', () => {
    const inventory = withNodePools(
      anAwsInventory([aNodeClassObject(), aNodeClassObject({ name: 'unused' })], facts()),
      [pool({})]
    );
    expect([...nodeClassesLaunchedThrough(inventory)]).toEqual(['demo/default']);
  });
});

describe('the checks the chain supersedes', () => {
  it('defer their "launches nothing" verdicts to nodepool-instance-types-offered when types were read', () => {
    const zoneD = requirement('topology.kubernetes.io/zone', 'In', ['us-east-1d']);
    const armOnly = facts({ amis: ok(anAmiFacts({ images: [x86] })) });
    const arch = nodePoolArchHasImage.evaluate(inventoryWith({ requirements: [ARM64] }, armOnly), {
      now,
    });
    const zones = nodePoolZonesHaveSubnets.evaluate(inventoryWith({ requirements: [zoneD] }), {
      now,
    });
    const reserved = nodePoolCapacityTypeOffered.evaluate(
      inventoryWith({ requirements: [RESERVED] }),
      { now }
    );

    expect(arch.map((finding) => finding.status)).toEqual(['not-applicable']);
    expect(zones.map((finding) => finding.status)).toEqual(['not-applicable']);
    expect(reserved.map((finding) => finding.status)).toEqual(['not-applicable']);
    expect(evaluate(inventoryWith({ requirements: [ARM64] }, armOnly))?.status).toBe('fail');
    expect(evaluate(inventoryWith({ requirements: [zoneD] }))?.status).toBe('fail');
    expect(evaluate(inventoryWith({ requirements: [RESERVED] }))?.status).toBe('fail');
  });
});

describe('nodepool-instance-types-offered: the controller Deployment could not be read', () => {
  const x86Only = { requirements: [ARM64, requirement(FAMILY, 'In', ['m7i', 'c7i'])] };

  it("reports an error with a read fault, even with --karpenter-version: offerings depend on the controller's env", () => {
    for (const cluster of [
      { state: aControllerUnreadState() },
      { state: aControllerUnreadState(), karpenterVersion: aKarpenterVersion('1.14.1') },
    ]) {
      const finding = evaluate(inventoryWith(x86Only, facts(), cluster));
      expect(finding?.status).toBe('error');
      expect(finding?.readFault).toEqual(CONTROLLER_UNREAD);
      expect(finding?.causedBy?.checkId).toBe('scanner-can-read-cluster');
    }
  });

  it('gives the verdict, as before, when the controller was simply not looked at', () => {
    const finding = evaluate(inventoryWith(x86Only, facts(), {}));
    expect(finding?.status).toBe('fail');
    expect(finding?.readFault).toBeUndefined();
  });
});
