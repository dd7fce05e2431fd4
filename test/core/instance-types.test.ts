import { describe, expect, it } from 'vitest';
import {
  DEFAULT_CONTROLLER_SETTINGS,
  type InstanceTypeContext,
  instanceTypeNameLabels,
  karpenterInstanceType,
  type ResourceList,
} from '../../lambda/core/instance-types.js';
import { formatQuantity, parseQuantity, type Quantity } from '../../lambda/core/quantity.js';
import { aKarpenterVersion } from '../support/builders.js';
import { anInstanceType } from '../support/instance-types.js';

function context(overrides: Partial<InstanceTypeContext> = {}): InstanceTypeContext {
  return {
    amiFamily: 'AL2023',
    kubelet: {},
    blockDeviceMappings: [],
    region: 'us-east-1',
    version: aKarpenterVersion('1.14.1'),
    settings: DEFAULT_CONTROLLER_SETTINGS,
    ...overrides,
  };
}

/** A resource list as Kubernetes writes it: bytes in binary units, CPU in cores. */
function shown(list: ResourceList, keys: readonly string[]): Record<string, string> {
  return Object.fromEntries(
    keys.map((key) => {
      const value = list[key];
      const bytes = key === 'memory' || key === 'ephemeral-storage';
      return [key, value === undefined ? 'absent' : formatQuantity(value, bytes)];
    })
  );
}

const RESOURCES = ['cpu', 'memory', 'ephemeral-storage', 'pods'];

function shownOne(value: Quantity | undefined): string {
  return value === undefined ? 'absent' : formatQuantity(value);
}

describe("Karpenter's labels of an instance type", () => {
  it('derives family, size, category and generation from the name as Karpenter labels them', () => {
    const labels = instanceTypeNameLabels('c7gn.16xlarge');
    const highMemory = instanceTypeNameLabels('u-6tb1.metal');

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

  it('labels an m7i.large from DescribeInstanceTypes as Karpenter v1.14 does', () => {
    const { labels } = karpenterInstanceType(anInstanceType('m7i.large'), context());

    expect(Object.fromEntries(labels)).toEqual({
      'node.kubernetes.io/instance-type': ['m7i.large'],
      'kubernetes.io/arch': ['amd64'],
      'kubernetes.io/os': ['linux'],
      'topology.kubernetes.io/region': ['us-east-1'],
      'node.kubernetes.io/windows-build': [],
      'karpenter.k8s.aws/instance-cpu': ['2'],
      'karpenter.k8s.aws/instance-cpu-manufacturer': ['intel'],
      'karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz': ['3200'],
      'karpenter.k8s.aws/instance-memory': ['8192'],
      'karpenter.k8s.aws/instance-ebs-bandwidth': ['10000'],
      'karpenter.k8s.aws/instance-category': ['m'],
      'karpenter.k8s.aws/instance-generation': ['7'],
      'karpenter.k8s.aws/instance-family': ['m7i'],
      'karpenter.k8s.aws/instance-size': ['large'],
      'karpenter.k8s.aws/instance-local-nvme': [],
      'karpenter.k8s.aws/instance-capability-flex': ['false'],
      'karpenter.k8s.aws/instance-gpu-name': [],
      'karpenter.k8s.aws/instance-gpu-manufacturer': [],
      'karpenter.k8s.aws/instance-gpu-count': [],
      'karpenter.k8s.aws/instance-gpu-memory': [],
      'karpenter.k8s.aws/instance-accelerator-name': [],
      'karpenter.k8s.aws/instance-accelerator-manufacturer': [],
      'karpenter.k8s.aws/instance-accelerator-count': [],
      'karpenter.k8s.aws/instance-hypervisor': ['nitro'],
      'karpenter.k8s.aws/instance-encryption-in-transit-supported': ['true'],
      'karpenter.k8s.aws/instance-tenancy': ['default', 'dedicated'],
    });
  });

  it('labels GPUs, local NVMe and Graviton in lower kebab case', () => {
    const g5 = karpenterInstanceType(anInstanceType('g5.xlarge'), context()).labels;
    const graviton = karpenterInstanceType(anInstanceType('m7g.large'), context()).labels;

    expect(g5.get('karpenter.k8s.aws/instance-gpu-name')).toEqual(['a10g']);
    expect(g5.get('karpenter.k8s.aws/instance-gpu-manufacturer')).toEqual(['nvidia']);
    expect(g5.get('karpenter.k8s.aws/instance-gpu-count')).toEqual(['1']);
    expect(g5.get('karpenter.k8s.aws/instance-gpu-memory')).toEqual(['24576']);
    expect(g5.get('karpenter.k8s.aws/instance-local-nvme')).toEqual(['250']);
    expect(graviton.get('kubernetes.io/arch')).toEqual(['arm64']);
    expect(graviton.get('karpenter.k8s.aws/instance-cpu-manufacturer')).toEqual(['aws']);
  });

  it('leaves out labels the cluster’s Karpenter release does not define yet', () => {
    const labels = karpenterInstanceType(
      anInstanceType('m7i.large'),
      context({ version: aKarpenterVersion('1.6.2') })
    ).labels;

    expect(labels.has('karpenter.k8s.aws/instance-tenancy')).toBe(false);
    expect(labels.has('karpenter.k8s.aws/instance-capability-flex')).toBe(false);
    expect(labels.has('karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz')).toBe(true);
  });

  it('gives Windows amd64 types the windows OS and build, arm64 types no OS', () => {
    const windows = context({ amiFamily: 'Windows2022' });
    const x86 = karpenterInstanceType(anInstanceType('m7i.large'), windows).labels;
    const arm = karpenterInstanceType(anInstanceType('m7g.large'), windows).labels;

    expect(x86.get('kubernetes.io/os')).toEqual(['windows']);
    expect(x86.get('node.kubernetes.io/windows-build')).toEqual(['10.0.20348']);
    expect(arm.get('kubernetes.io/os')).toEqual([]);
  });
});

describe("Karpenter's capacity and allocatable of an instance type", () => {
  it('gives an m7i.large on AL2023 the allocatable Karpenter computes (1930m, 6903Mi, 17Gi, 29 pods)', () => {
    const type = karpenterInstanceType(anInstanceType('m7i.large'), context());

    expect(shown(type.capacity, RESOURCES)).toEqual({
      cpu: '2',
      // 8192 MiB less the 7.5 % VM overhead, rounded up (615 MiB).
      memory: '7577Mi',
      'ephemeral-storage': '20Gi',
      // 3 ENIs × (10 IPv4 addresses − 1) + 2.
      pods: '29',
    });
    expect(shown(type.overhead.kubeReserved, ['cpu', 'memory', 'ephemeral-storage'])).toEqual({
      cpu: '0.07',
      // 11 MiB per ENI-limited pod + 255 MiB.
      memory: '574Mi',
      'ephemeral-storage': '1Gi',
    });
    expect(shown(type.overhead.evictionThreshold, ['memory', 'ephemeral-storage'])).toEqual({
      memory: '100Mi',
      'ephemeral-storage': '2Gi',
    });
    expect(shown(type.allocatable, RESOURCES)).toEqual({
      cpu: '1.93',
      memory: '6903Mi',
      'ephemeral-storage': '17Gi',
      pods: '29',
    });
  });

  it('takes 64 MiB off Graviton memory before the VM overhead', () => {
    const type = karpenterInstanceType(anInstanceType('m7g.large'), context());

    expect(shown(type.capacity, ['memory'])).toEqual({ memory: '7518Mi' });
  });

  it('counts GPUs, EFA and the default network card’s ENIs of a p4d.24xlarge', () => {
    const type = karpenterInstanceType(anInstanceType('p4d.24xlarge'), context());

    expect(shown(type.capacity, ['cpu', 'memory', 'pods'])).toEqual({
      cpu: '96',
      memory: '1091174Mi',
      // Card 0: 15 ENIs × 49 + 2, not all 60 ENIs of the four cards.
      pods: '737',
    });
    expect(shownOne(type.capacity['nvidia.com/gpu'])).toBe('8');
    expect(shownOne(type.capacity['vpc.amazonaws.com/efa'])).toBe('4');
    // 60m + 10m + 10m for the first four cores, 0.25 % of the other 92.
    expect(shownOne(type.overhead.kubeReserved.cpu)).toBe('0.31');
  });

  it('applies kubelet maxPods and podsPerCore per AMI family', () => {
    const type = anInstanceType('m7i.large');
    const al2023 = karpenterInstanceType(type, context({ kubelet: { maxPods: 110 } }));
    const bottlerocket = karpenterInstanceType(
      type,
      context({ amiFamily: 'Bottlerocket', kubelet: { maxPods: 110 } })
    );
    const perCore = karpenterInstanceType(type, context({ kubelet: { podsPerCore: 4 } }));
    const perCoreBottlerocket = karpenterInstanceType(
      type,
      context({ amiFamily: 'Bottlerocket', kubelet: { podsPerCore: 4 } })
    );
    const windows = karpenterInstanceType(type, context({ amiFamily: 'Windows2022' }));

    expect(shown(al2023.capacity, ['pods'])).toEqual({ pods: '110' });
    // AL2023 reserves memory for the ENI-limited pods, Bottlerocket for maxPods.
    expect(shown(al2023.overhead.kubeReserved, ['memory'])).toEqual({ memory: '574Mi' });
    expect(shown(bottlerocket.overhead.kubeReserved, ['memory'])).toEqual({ memory: '1465Mi' });
    expect(shown(perCore.capacity, ['pods'])).toEqual({ pods: '8' });
    expect(shown(perCoreBottlerocket.capacity, ['pods'])).toEqual({ pods: '29' });
    expect(shown(windows.capacity, ['pods'])).toEqual({ pods: '110' });
  });

  it('leaves RESERVED_ENIS and EFA-only interfaces out of the pods', () => {
    const type = anInstanceType('m7i.large');
    const reserved = karpenterInstanceType(
      type,
      context({ settings: { ...DEFAULT_CONTROLLER_SETTINGS, reservedENIs: 1 } })
    );
    const efa = karpenterInstanceType(
      type,
      context({
        networkInterfaces: [
          { networkCardIndex: 0, efaOnly: false },
          { networkCardIndex: 0, efaOnly: true },
        ],
      })
    );

    expect(shown(reserved.capacity, ['pods'])).toEqual({ pods: '20' });
    expect(shown(efa.capacity, ['pods'])).toEqual({ pods: '20' });
    expect(shownOne(efa.capacity['vpc.amazonaws.com/efa'])).toBe('1');
  });

  it('uses the root volume, RAID0 instance store or the family default for ephemeral storage', () => {
    const root = karpenterInstanceType(
      anInstanceType('m7i.large'),
      context({
        blockDeviceMappings: [
          { deviceName: '/dev/xvda', rootVolume: true, ebs: { volumeSize: '80Gi' } },
        ],
      })
    );
    const raid = karpenterInstanceType(
      anInstanceType('g5.xlarge'),
      context({ instanceStorePolicy: 'RAID0' })
    );
    const windows = karpenterInstanceType(
      anInstanceType('m7i.large'),
      context({ amiFamily: 'Windows2019' })
    );

    expect(shown(root.capacity, ['ephemeral-storage'])).toEqual({ 'ephemeral-storage': '80Gi' });
    expect(raid.capacity['ephemeral-storage']).toEqual(parseQuantity('250G'));
    expect(shown(windows.capacity, ['ephemeral-storage'])).toEqual({ 'ephemeral-storage': '50Gi' });
  });

  it('applies evictionHard, and evictionSoft too before v1.9.0', () => {
    const kubelet = {
      evictionHard: { 'memory.available': '5%' },
      evictionSoft: { 'memory.available': '10%' },
    };
    const type = anInstanceType('m7i.large');
    const current = karpenterInstanceType(type, context({ kubelet }));
    const older = karpenterInstanceType(
      type,
      context({ kubelet, version: aKarpenterVersion('1.8.0') })
    );
    const memory = 7577 * 2 ** 20;

    expect(current.overhead.evictionThreshold.memory).toEqual(
      parseQuantity(String(Math.ceil((memory / 100) * 5)))
    );
    expect(older.overhead.evictionThreshold.memory).toEqual(
      parseQuantity(String(Math.ceil((memory / 100) * 10)))
    );
  });

  it('lets kubeReserved and systemReserved override and add to the defaults', () => {
    const type = karpenterInstanceType(
      anInstanceType('m7i.large'),
      context({ kubelet: { kubeReserved: { memory: '1Gi' }, systemReserved: { cpu: '100m' } } })
    );

    expect(shown(type.allocatable, ['cpu', 'memory'])).toEqual({
      cpu: '1.83',
      memory: '6453Mi',
    });
  });
});
