// Karpenter's view of an instance type: the labels its AWS provider derives from the
// DescribeInstanceTypes entry (and from the name alone when that is all there is), its capacity,
// and the overhead (kube-reserved, system-reserved, eviction threshold) subtracted for allocatable,
// computed as https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/providers/instancetype/types.go
// computes them, with the differences of earlier releases where they change a result.
import type { AmiFamily } from './ami-family.js';
import type { InstanceTypeInfo } from './facts/aws.js';
import type { Inventory } from './inventory.js';
import { nodeClassKey } from './inventory.js';
import {
  compareQuantities,
  integerQuantity,
  mebibytes,
  millis,
  parseQuantity,
  type Quantity,
  quantityValue,
  subtractQuantities,
  ZERO,
} from './quantity.js';
import type { BlockDeviceMapping } from './schema.js';
import { isAtLeast, type KarpenterVersion } from './version.js';

/** Well-known label keys (k8s.io/api core/v1 and pkg/apis/v1/labels.go of both Karpenter repos). */
export const LABEL = {
  instanceType: 'node.kubernetes.io/instance-type',
  arch: 'kubernetes.io/arch',
  os: 'kubernetes.io/os',
  zone: 'topology.kubernetes.io/zone',
  zoneId: 'topology.k8s.aws/zone-id',
  region: 'topology.kubernetes.io/region',
  windowsBuild: 'node.kubernetes.io/windows-build',
  capacityType: 'karpenter.sh/capacity-type',
  cpu: 'karpenter.k8s.aws/instance-cpu',
  cpuManufacturer: 'karpenter.k8s.aws/instance-cpu-manufacturer',
  cpuClockSpeed: 'karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz',
  memory: 'karpenter.k8s.aws/instance-memory',
  ebsBandwidth: 'karpenter.k8s.aws/instance-ebs-bandwidth',
  networkBandwidth: 'karpenter.k8s.aws/instance-network-bandwidth',
  category: 'karpenter.k8s.aws/instance-category',
  capabilityFlex: 'karpenter.k8s.aws/instance-capability-flex',
  family: 'karpenter.k8s.aws/instance-family',
  generation: 'karpenter.k8s.aws/instance-generation',
  localNvme: 'karpenter.k8s.aws/instance-local-nvme',
  size: 'karpenter.k8s.aws/instance-size',
  gpuName: 'karpenter.k8s.aws/instance-gpu-name',
  gpuManufacturer: 'karpenter.k8s.aws/instance-gpu-manufacturer',
  gpuCount: 'karpenter.k8s.aws/instance-gpu-count',
  gpuMemory: 'karpenter.k8s.aws/instance-gpu-memory',
  acceleratorName: 'karpenter.k8s.aws/instance-accelerator-name',
  acceleratorManufacturer: 'karpenter.k8s.aws/instance-accelerator-manufacturer',
  acceleratorCount: 'karpenter.k8s.aws/instance-accelerator-count',
  hypervisor: 'karpenter.k8s.aws/instance-hypervisor',
  encryptionInTransit: 'karpenter.k8s.aws/instance-encryption-in-transit-supported',
  tenancy: 'karpenter.k8s.aws/instance-tenancy',
  reservationId: 'karpenter.k8s.aws/capacity-reservation-id',
  reservationType: 'karpenter.k8s.aws/capacity-reservation-type',
  reservationInterruptible: 'karpenter.k8s.aws/capacity-reservation-interruptible',
} as const;

/** Older label keys Karpenter reads as the current ones (sigs.k8s.io/karpenter pkg/apis/v1/labels.go). */
export const NORMALIZED_LABELS: Readonly<Record<string, string>> = {
  'failure-domain.beta.kubernetes.io/zone': LABEL.zone,
  'beta.kubernetes.io/arch': LABEL.arch,
  'beta.kubernetes.io/os': LABEL.os,
  'beta.kubernetes.io/instance-type': LABEL.instanceType,
  'failure-domain.beta.kubernetes.io/region': LABEL.region,
};

/**
 * Keys Karpenter defines on every instance type but whose value the scanner cannot know: the
 * network bandwidth comes from a table compiled into Karpenter (zz_generated.bandwidth.go).
 */
export const UNKNOWN_VALUE_LABELS: readonly string[] = [LABEL.networkBandwidth];

/** Labels Karpenter added to instance types after v1.0, with the release that added them. */
const LABEL_SINCE: Readonly<Record<string, string>> = {
  [LABEL.cpuClockSpeed]: '1.1.0',
  [LABEL.reservationId]: '1.3.0',
  [LABEL.reservationType]: '1.3.0',
  [LABEL.reservationInterruptible]: '1.3.0',
  [LABEL.capabilityFlex]: '1.7.0',
  [LABEL.tenancy]: '1.9.0',
};

/** Whether the Karpenter release defines the label on instance types (unknown release: the newest). */
export function labelDefined(key: string, version: KarpenterVersion | undefined): boolean {
  const since = LABEL_SINCE[key];
  return since === undefined || version === undefined || isAtLeast(version, since);
}

// Category and generation: the provider's pattern over the name (`u-6tb1.metal` → `u`, `1`).
const INSTANCE_TYPE_SCHEME = /^([a-z]+)(-[0-9]+tb)?([0-9]+).*\./;

/**
 * The name-derived labels of an instance type. Family and size only when the name has exactly one
 * dot; category and generation only when the name matches the provider's pattern. A label the type
 * lacks is absent (it satisfies only `NotIn` and `DoesNotExist`).
 */
export function instanceTypeNameLabels(instanceType: string): Readonly<Record<string, string>> {
  const labels: Record<string, string> = { [LABEL.instanceType]: instanceType };
  const match = INSTANCE_TYPE_SCHEME.exec(instanceType);
  if (match?.[1] !== undefined && match[3] !== undefined) {
    labels[LABEL.category] = match[1];
    labels[LABEL.generation] = match[3];
  }
  const parts = instanceType.split('.');
  if (parts.length === 2 && parts[0] !== undefined && parts[1] !== undefined) {
    labels[LABEL.family] = parts[0];
    labels[LABEL.size] = parts[1];
  }
  return labels;
}

/** Karpenter's amiFamily feature flags (pkg/providers/amifamily/{resolver,bottlerocket,windows}.go). */
interface FamilyTraits {
  /** Which family Karpenter uses: an unknown or absent family is AL2 (`GetAMIFamily`). */
  readonly family: AmiFamily;
  readonly usesEniLimitedMemoryOverhead: boolean;
  readonly podsPerCoreEnabled: boolean;
  readonly evictionSoftEnabled: boolean;
  readonly supportsEniLimitedPodDensity: boolean;
  /** The device whose volume holds the kubelet's root (`EphemeralBlockDevice`). */
  readonly ephemeralBlockDevice?: string;
  /** Windows build (`node.kubernetes.io/windows-build`). */
  readonly windowsBuild?: string;
}

export function familyTraits(family: AmiFamily | undefined): FamilyTraits {
  switch (family) {
    case 'Bottlerocket':
      return {
        family,
        usesEniLimitedMemoryOverhead: false,
        podsPerCoreEnabled: false,
        evictionSoftEnabled: false,
        supportsEniLimitedPodDensity: true,
        ephemeralBlockDevice: '/dev/xvdb',
      };
    case 'Windows2019':
    case 'Windows2022':
    case 'Windows2025':
      return {
        family,
        usesEniLimitedMemoryOverhead: false,
        podsPerCoreEnabled: true,
        evictionSoftEnabled: true,
        supportsEniLimitedPodDensity: false,
        ephemeralBlockDevice: '/dev/sda1',
        windowsBuild: {
          Windows2019: '10.0.17763',
          Windows2022: '10.0.20348',
          Windows2025: '10.0.26100',
        }[family],
      };
    case 'Custom':
      return {
        family,
        usesEniLimitedMemoryOverhead: true,
        podsPerCoreEnabled: true,
        evictionSoftEnabled: true,
        supportsEniLimitedPodDensity: true,
      };
    default:
      return {
        family: family ?? 'AL2',
        usesEniLimitedMemoryOverhead: true,
        podsPerCoreEnabled: true,
        evictionSoftEnabled: true,
        supportsEniLimitedPodDensity: true,
        ephemeralBlockDevice: '/dev/xvda',
      };
  }
}

/** Karpenter controller settings that change instance types (pkg/operator/options/options.go). */
export interface ControllerSettings {
  /** VM_MEMORY_OVERHEAD_PERCENT (default 0.075): memory EC2 reports but the node never sees. */
  readonly vmMemoryOverheadPercent: number;
  /** RESERVED_ENIS (default 0): ENIs left out of max pods (VPC CNI custom networking). */
  readonly reservedENIs: number;
}

export const DEFAULT_CONTROLLER_SETTINGS: ControllerSettings = {
  vmMemoryOverheadPercent: 0.075,
  reservedENIs: 0,
};

/** The `spec.kubelet` fields Karpenter's instance types read. */
export interface KubeletSettings {
  readonly maxPods?: number;
  readonly podsPerCore?: number;
  readonly kubeReserved?: Readonly<Record<string, string>>;
  readonly systemReserved?: Readonly<Record<string, string>>;
  readonly evictionHard?: Readonly<Record<string, string>>;
  readonly evictionSoft?: Readonly<Record<string, string>>;
}

/** What of the EC2NodeClass and the cluster changes an instance type (the resolver's cache key). */
export interface InstanceTypeContext {
  readonly amiFamily: AmiFamily | undefined;
  readonly kubelet: KubeletSettings;
  readonly blockDeviceMappings: readonly BlockDeviceMapping[];
  readonly instanceStorePolicy?: string;
  /**
   * `spec.networkInterfaces` (v1.14): undefined when not set. EFA-only interfaces on card 0 take
   * an ENI from the pods, and their count replaces the type's EFA capacity.
   */
  readonly networkInterfaces?: readonly {
    readonly networkCardIndex: number;
    readonly efaOnly: boolean;
  }[];
  readonly region?: string;
  readonly version?: KarpenterVersion;
  readonly settings: ControllerSettings;
}

/** Karpenter's architecture label of the type: the first EC2 architecture it knows. */
function kubeArchitecture(info: InstanceTypeInfo): string | undefined {
  for (const architecture of info.architectures) {
    if (architecture === 'x86_64') return 'amd64';
    if (architecture === 'arm64') return 'arm64';
  }
  return undefined;
}

/** `strings.ToLower(strings.ReplaceAll(s, " ", "-"))` */
function lowerKebab(value: string): string {
  return value.replaceAll(' ', '-').toLowerCase();
}

/**
 * The labels Karpenter gives the type, key → values (`[]`: Karpenter defines the key with
 * DoesNotExist). Zone, zone id, capacity type and reservation labels belong to offerings and are
 * not included. Keys the release does not define are left out (they narrow nothing).
 */
function instanceTypeLabels(
  info: InstanceTypeInfo,
  context: Pick<InstanceTypeContext, 'amiFamily' | 'region' | 'version'>
): ReadonlyMap<string, readonly string[]> {
  const traits = familyTraits(context.amiFamily);
  const arch = kubeArchitecture(info);
  const windows = traits.windowsBuild !== undefined;
  const labels = new Map<string, string[]>();
  const set = (key: string, values: readonly (string | undefined)[]) => {
    labels.set(
      key,
      values.filter((value): value is string => value !== undefined)
    );
  };
  set(LABEL.instanceType, [info.instanceType]);
  set(LABEL.arch, [arch ?? `[${info.architectures.join(' ')}]`]);
  set(LABEL.os, windows ? (arch === 'amd64' ? ['windows'] : []) : ['linux']);
  if (context.region !== undefined) set(LABEL.region, [context.region]);
  set(LABEL.windowsBuild, [traits.windowsBuild]);
  set(LABEL.cpu, [info.vcpus === undefined ? undefined : String(info.vcpus)]);
  // Both only when EC2 gave ProcessorInfo (which also holds the architectures).
  const processor =
    info.architectures.length > 0 ||
    info.cpuManufacturer !== undefined ||
    info.sustainedClockSpeedGhz !== undefined;
  set(LABEL.cpuManufacturer, [processor ? lowerKebab(info.cpuManufacturer ?? '') : undefined]);
  set(LABEL.cpuClockSpeed, [
    processor ? String(Math.round((info.sustainedClockSpeedGhz ?? 0) * 1000)) : undefined,
  ]);
  set(LABEL.memory, [info.memoryMiB === undefined ? undefined : String(info.memoryMiB)]);
  set(LABEL.ebsBandwidth, [
    info.ebs?.optimizedSupport === 'default' && info.ebs.maximumBandwidthMbps !== undefined
      ? String(info.ebs.maximumBandwidthMbps)
      : undefined,
  ]);
  const named = instanceTypeNameLabels(info.instanceType);
  for (const key of [LABEL.category, LABEL.generation, LABEL.family, LABEL.size]) {
    set(key, [named[key]]);
  }
  const storage = info.instanceStorage;
  set(LABEL.localNvme, [
    storage !== undefined &&
    storage.nvmeSupport !== 'unsupported' &&
    storage.totalSizeGB !== undefined
      ? String(storage.totalSizeGB)
      : undefined,
  ]);
  set(LABEL.capabilityFlex, [String((info.instanceType.split('.')[0] ?? '').includes('-flex'))]);
  const [gpu, ...moreGpus] = info.gpus;
  const oneGpu = gpu !== undefined && moreGpus.length === 0;
  set(LABEL.gpuName, [oneGpu && gpu.name !== undefined ? lowerKebab(gpu.name) : undefined]);
  set(LABEL.gpuManufacturer, [
    oneGpu && gpu.manufacturer !== undefined ? lowerKebab(gpu.manufacturer) : undefined,
  ]);
  set(LABEL.gpuCount, [oneGpu ? String(gpu.count ?? 0) : undefined]);
  set(LABEL.gpuMemory, [oneGpu ? String(gpu.memoryMiB ?? 0) : undefined]);
  const [accelerator, ...moreAccelerators] = info.inferenceAccelerators;
  const [neuron, ...moreNeurons] = info.neuronDevices ?? [];
  let acceleratorLabels: (string | undefined)[] = [undefined, undefined, undefined];
  if (
    accelerator !== undefined &&
    moreAccelerators.length === 0 &&
    info.neuronDevices === undefined
  ) {
    acceleratorLabels = [
      accelerator.name === undefined ? undefined : lowerKebab(accelerator.name),
      accelerator.manufacturer === undefined ? undefined : lowerKebab(accelerator.manufacturer),
      String(accelerator.count ?? 0),
    ];
  }
  if (neuron !== undefined && moreNeurons.length === 0) {
    acceleratorLabels = [
      neuron.name === undefined ? undefined : lowerKebab(neuron.name),
      'aws',
      String(neuron.count ?? 0),
    ];
  }
  set(LABEL.acceleratorName, [acceleratorLabels[0]]);
  set(LABEL.acceleratorManufacturer, [acceleratorLabels[1]]);
  set(LABEL.acceleratorCount, [acceleratorLabels[2]]);
  set(LABEL.hypervisor, [info.hypervisor ?? '']);
  set(LABEL.encryptionInTransit, [String(info.network.encryptionInTransitSupported ?? false)]);
  set(LABEL.tenancy, ['default', 'dedicated']);
  for (const key of [...labels.keys()]) {
    if (!labelDefined(key, context.version)) labels.delete(key);
  }
  return labels;
}

/** `DefaultEBS.VolumeSize` (pkg/providers/amifamily/resolver.go). */
const DEFAULT_EBS_VOLUME = parseQuantity('20Gi') as Quantity;

/** The ephemeral-storage capacity Karpenter assumes (`ephemeralStorage` in types.go). */
function ephemeralStorage(info: InstanceTypeInfo, context: InstanceTypeContext): Quantity {
  const traits = familyTraits(context.amiFamily);
  const total = info.instanceStorage?.totalSizeGB;
  if (context.instanceStorePolicy === 'RAID0' && total !== undefined) {
    return parseQuantity(`${total}G`) ?? ZERO;
  }
  const sizeOf = (mapping: BlockDeviceMapping | undefined) =>
    mapping?.ebs?.volumeSize === undefined ? undefined : parseQuantity(mapping.ebs.volumeSize);
  const mappings = context.blockDeviceMappings;
  if (mappings.length > 0) {
    const root = sizeOf(mappings.find((mapping) => mapping.rootVolume === true));
    if (root !== undefined) return root;
    if (traits.family === 'Custom') return sizeOf(mappings.at(-1)) ?? DEFAULT_EBS_VOLUME;
    const ephemeral = sizeOf(
      mappings.find((mapping) => mapping.deviceName === traits.ephemeralBlockDevice)
    );
    if (ephemeral !== undefined) return ephemeral;
  }
  if (traits.family === 'Bottlerocket') return DEFAULT_EBS_VOLUME;
  if (traits.windowsBuild !== undefined) return parseQuantity('50Gi') as Quantity;
  return DEFAULT_EBS_VOLUME;
}

/** `ENILimitedPods`: ENIs of the default card × (IPv4 per ENI − 1) + 2; undefined when unknown. */
export function eniLimitedPods(
  info: InstanceTypeInfo,
  reservedENIs: number,
  context: Pick<InstanceTypeContext, 'networkInterfaces'>
): number | undefined {
  const card = info.network.networkCards[info.network.defaultNetworkCardIndex ?? 0];
  const interfaces = card?.maximumNetworkInterfaces;
  const perInterface = info.network.ipv4AddressesPerInterface;
  if (interfaces === undefined || perInterface === undefined) return undefined;
  const efaOnly = (context.networkInterfaces ?? []).filter(
    (nic) => nic.networkCardIndex === 0 && nic.efaOnly
  ).length;
  const usable = Math.max(interfaces - reservedENIs - efaOnly, 0);
  return usable === 0 ? 0 : usable * (perInterface - 1) + 2;
}

/** Pods a node of the type admits (`pods`): kubelet maxPods, ENI-limited, or 110; podsPerCore caps. */
function maxPodsOf(info: InstanceTypeInfo, context: InstanceTypeContext): number | undefined {
  const traits = familyTraits(context.amiFamily);
  let count: number | undefined;
  if (context.kubelet.maxPods !== undefined) count = context.kubelet.maxPods;
  else if (traits.supportsEniLimitedPodDensity) {
    count = eniLimitedPods(info, context.settings.reservedENIs, context);
  } else count = 110;
  const perCore = context.kubelet.podsPerCore ?? 0;
  if (count !== undefined && perCore > 0 && traits.podsPerCoreEnabled && info.vcpus !== undefined) {
    count = Math.min(perCore * info.vcpus, count);
  }
  return count;
}

/** Resource name → quantity. */
export type ResourceList = Readonly<Record<string, Quantity>>;

/** Memory Karpenter assumes the node has: EC2's, less 64 MiB on Graviton and the VM overhead. */
function memoryCapacity(
  info: InstanceTypeInfo,
  settings: ControllerSettings
): Quantity | undefined {
  if (info.memoryMiB === undefined) return undefined;
  const mib = info.memoryMiB - (info.architectures[0] === 'arm64' ? 64 : 0);
  const bytes = mib * 2 ** 20;
  // float64(mem.Value()) * VMMemoryOverheadPercent / 1024 / 1024, rounded up, in MiB.
  const overhead = Math.ceil((bytes * settings.vmMemoryOverheadPercent) / 1024 / 1024);
  return mebibytes(mib - overhead);
}

function countBy<T>(items: readonly T[], count: (item: T) => number): number {
  return items.reduce((sum, item) => sum + count(item), 0);
}

/**
 * The type's capacity as Karpenter computes it (`computeCapacity`). A resource whose input
 * DescribeInstanceTypes did not give is left out. `vpc.amazonaws.com/pod-eni` and
 * `PrivateIPv4Address` come from tables compiled into Karpenter and are never included.
 */
function instanceTypeCapacity(info: InstanceTypeInfo, context: InstanceTypeContext): ResourceList {
  const capacity: Record<string, Quantity> = {};
  if (info.vcpus !== undefined) capacity.cpu = integerQuantity(info.vcpus);
  const memory = memoryCapacity(info, context.settings);
  if (memory !== undefined) capacity.memory = memory;
  capacity['ephemeral-storage'] = ephemeralStorage(info, context);
  const pods = maxPodsOf(info, context);
  if (pods !== undefined) capacity.pods = integerQuantity(pods);
  const gpusBy = (manufacturer: string) =>
    countBy(info.gpus, (gpu) => (gpu.manufacturer === manufacturer ? (gpu.count ?? 0) : 0));
  capacity['nvidia.com/gpu'] = integerQuantity(gpusBy('NVIDIA'));
  capacity['amd.com/gpu'] = integerQuantity(gpusBy('AMD'));
  capacity['habana.ai/gaudi'] = integerQuantity(gpusBy('Habana'));
  const neurons = info.neuronDevices ?? [];
  capacity['aws.amazon.com/neuron'] = integerQuantity(
    countBy(neurons, (device) => device.count ?? 0)
  );
  const first = neurons[0];
  capacity['aws.amazon.com/neuroncore'] = integerQuantity(
    first === undefined ? 0 : (first.count ?? 0) * (first.coreCount ?? 0)
  );
  capacity['vpc.amazonaws.com/efa'] = integerQuantity(
    context.networkInterfaces !== undefined
      ? context.networkInterfaces.filter((nic) => nic.efaOnly).length
      : (info.network.efaMaximumInterfaces ?? 0)
  );
  return capacity;
}

function quantities(map: Readonly<Record<string, string>> | undefined): Record<string, Quantity> {
  const out: Record<string, Quantity> = {};
  for (const [key, value] of Object.entries(map ?? {})) {
    const parsed = parseQuantity(value);
    if (parsed !== undefined) out[key] = parsed;
  }
  return out;
}

/** kube-reserved CPU: 6% of the first core, 1% of the second, 0.5% of the next two, 0.25% above. */
const CPU_RANGES: readonly { start: number; end: number; percentage: number }[] = [
  { start: 0, end: 1000, percentage: 0.06 },
  { start: 1000, end: 2000, percentage: 0.01 },
  { start: 2000, end: 4000, percentage: 0.005 },
  { start: 4000, end: 2 ** 31, percentage: 0.0025 },
];

function kubeReserved(
  cpu: Quantity,
  pods: number,
  overrides: Readonly<Record<string, string>> | undefined
): ResourceList {
  let cpuOverhead = 0;
  const milli = quantityValue(cpu) * 1000;
  for (const range of CPU_RANGES) {
    if (milli >= range.start) {
      const span = milli < range.end ? milli - range.start : range.end - range.start;
      cpuOverhead += Math.trunc(span * range.percentage);
    }
  }
  return {
    memory: mebibytes(11 * pods + 255),
    'ephemeral-storage': parseQuantity('1Gi') as Quantity,
    cpu: millis(cpuOverhead),
    ...quantities(overrides),
  };
}

/** An eviction signal: a percentage of capacity (rounded up, 100% disables it) or a quantity. */
function evictionSignal(capacity: Quantity, value: string): Quantity | undefined {
  if (value.endsWith('%')) {
    let percent = Number.parseFloat(value.slice(0, -1));
    if (!Number.isFinite(percent)) return undefined;
    if (percent === 100) percent = 0;
    return integerQuantity(Math.ceil((quantityValue(capacity) / 100) * percent));
  }
  return parseQuantity(value);
}

function maxList(a: ResourceList, b: ResourceList): ResourceList {
  const out: Record<string, Quantity> = { ...a };
  for (const [key, value] of Object.entries(b)) {
    const current = out[key];
    if (current === undefined || compareQuantities(value, current) > 0) out[key] = value;
  }
  return out;
}

function evictionThreshold(
  memory: Quantity,
  storage: Quantity,
  context: InstanceTypeContext
): ResourceList {
  const overhead: Record<string, Quantity> = {
    memory: parseQuantity('100Mi') as Quantity,
    'ephemeral-storage': integerQuantity(Math.ceil((quantityValue(storage) / 100) * 10)),
  };
  const signals = (map: Readonly<Record<string, string>> | undefined): ResourceList => {
    const out: Record<string, Quantity> = {};
    const memorySignal = map?.['memory.available'];
    const storageSignal = map?.['nodefs.available'];
    const m = memorySignal === undefined ? undefined : evictionSignal(memory, memorySignal);
    const s = storageSignal === undefined ? undefined : evictionSignal(storage, storageSignal);
    if (m !== undefined) out.memory = m;
    if (s !== undefined) out['ephemeral-storage'] = s;
    return out;
  };
  // Before v1.9.0 the larger of evictionHard and evictionSoft counted (families that honour soft).
  const softCounts =
    context.version !== undefined &&
    !isAtLeast(context.version, '1.9.0') &&
    familyTraits(context.amiFamily).evictionSoftEnabled;
  const override = softCounts
    ? maxList(signals(context.kubelet.evictionHard), signals(context.kubelet.evictionSoft))
    : signals(context.kubelet.evictionHard);
  return { ...overhead, ...override };
}

/** What Karpenter subtracts from capacity for allocatable. */
export interface InstanceTypeOverhead {
  readonly kubeReserved: ResourceList;
  readonly systemReserved: ResourceList;
  readonly evictionThreshold: ResourceList;
}

function instanceTypeOverhead(
  info: InstanceTypeInfo,
  context: InstanceTypeContext,
  capacity: ResourceList = instanceTypeCapacity(info, context)
): InstanceTypeOverhead {
  const traits = familyTraits(context.amiFamily);
  const pods = traits.usesEniLimitedMemoryOverhead
    ? eniLimitedPods(info, 0, context)
    : maxPodsOf(info, context);
  return {
    kubeReserved: kubeReserved(capacity.cpu ?? ZERO, pods ?? 0, context.kubelet.kubeReserved),
    systemReserved: quantities(context.kubelet.systemReserved),
    evictionThreshold: evictionThreshold(
      capacity.memory ?? ZERO,
      capacity['ephemeral-storage'] ?? ZERO,
      context
    ),
  };
}

/** Capacity less every overhead, per resource (`InstanceType.Allocatable`). */
function allocatable(capacity: ResourceList, overhead: InstanceTypeOverhead): ResourceList {
  const out: Record<string, Quantity> = { ...capacity };
  for (const list of [overhead.kubeReserved, overhead.systemReserved, overhead.evictionThreshold]) {
    for (const [key, value] of Object.entries(list)) {
      out[key] = subtractQuantities(out[key] ?? ZERO, value);
    }
  }
  return out;
}

/** Karpenter's full view of one instance type for one NodeClass. */
export interface KarpenterInstanceType {
  readonly info: InstanceTypeInfo;
  readonly labels: ReadonlyMap<string, readonly string[]>;
  readonly capacity: ResourceList;
  readonly overhead: InstanceTypeOverhead;
  readonly allocatable: ResourceList;
}

export function karpenterInstanceType(
  info: InstanceTypeInfo,
  context: InstanceTypeContext
): KarpenterInstanceType {
  const capacity = instanceTypeCapacity(info, context);
  const overhead = instanceTypeOverhead(info, context, capacity);
  return {
    info,
    labels: instanceTypeLabels(info, context),
    capacity,
    overhead,
    allocatable: allocatable(capacity, overhead),
  };
}

/**
 * NodeClasses (by `nodeClassKey`) that a parsed NodePool of the same cluster launches through:
 * only these need the region's instance types and offerings.
 */
export function nodeClassesLaunchedThrough(inventory: Inventory): Set<string> {
  const keys = new Set<string>();
  for (const entry of inventory.nodePools) {
    if (!entry.parsed.ok) continue;
    const name = entry.parsed.value.spec.template?.spec?.nodeClassRef?.name;
    if (name === undefined) continue;
    keys.add(nodeClassKey(entry.cluster, name));
  }
  return keys;
}
