// Will this NodePool launch a node? The (instance type, zone, capacity type) offerings Karpenter
// could launch for a NodePool through its EC2NodeClass, narrowed one step at a time so an empty
// result names the step that emptied it: the NodePool's requirements (and template labels), the
// architectures and variants of the class's images, the zones of its subnets, the zones offering
// each type, usable capacity reservations, the class's compatibility, room for a pod, and the
// NodePool's limits; then minValues over what is left. Karpenter's own steps are in
// https://github.com/kubernetes-sigs/karpenter/blob/v1.14.1/pkg/controllers/provisioning/scheduling/
// (scheduler.go filterByRemainingResources, nodeclaim.go filterInstanceTypesByRequirements) and
// https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/providers/instancetype/ (types.go,
// offering/base_resolver.go, offering/reserved_capacity_resolver.go, compatibility/compatibility.go).
import { effectiveAmiFamily } from './ami-family.js';
import type {
  AwsNodeClassFacts,
  CapacityReservation,
  InstanceTypeInfo,
  SelectedImage,
  Subnet,
} from './facts/aws.js';
import {
  type ControllerSettings,
  DEFAULT_CONTROLLER_SETTINGS,
  familyTraits,
  type InstanceTypeContext,
  instanceTypeNameLabels,
  type KarpenterInstanceType,
  type KubeletSettings,
  karpenterInstanceType,
  LABEL,
  labelDefined,
  NORMALIZED_LABELS,
  UNKNOWN_VALUE_LABELS,
} from './instance-types.js';
import type { ClusterContext } from './inventory.js';
import {
  intersectRequirements,
  type KeyRequirement,
  keyRequirement,
  requirementAdmitsValues,
} from './nodepool-requirements.js';
import { compareQuantities, parseQuantity, type Quantity, ZERO } from './quantity.js';
import type { EC2NodeClassSpec, NodePool } from './schema.js';
import { isAtLeast } from './version.js';

/** How a capacity reservation can serve reserved offerings. */
export interface ReservedCapacitySupport {
  readonly enabled: boolean;
  /** Why not, or what was assumed (a message fragment). */
  readonly note?: string;
}

/** The controller's env, when the scan read the Deployment. */
function controllerEnv(cluster: ClusterContext): Readonly<Record<string, string>> | undefined {
  const controller = cluster.state?.controller;
  return controller?.status === 'ok' ? controller.value?.env : undefined;
}

/** `FEATURE_GATES=A=true,B=false` → the named gate, when set. */
function featureGate(env: Readonly<Record<string, string>> | undefined, gate: string) {
  for (const entry of (env?.FEATURE_GATES ?? '').split(',')) {
    const [name, value] = entry.split('=').map((part) => part.trim());
    if (name === gate && value !== undefined) return value.toLowerCase() === 'true';
  }
  return undefined;
}

/**
 * Reserved capacity: since v1.3.0 behind the ReservedCapacity feature gate, off by default before
 * v1.6.0 (sigs.k8s.io/karpenter pkg/operator/options/options.go). Without the controller's env the
 * gate is assumed on.
 */
function reservedCapacitySupport(cluster: ClusterContext): ReservedCapacitySupport {
  const version = cluster.karpenterVersion;
  if (version !== undefined && !isAtLeast(version, '1.3.0')) {
    return {
      enabled: false,
      note: `Karpenter ${version.raw} has no reserved capacity (it exists since v1.3.0)`,
    };
  }
  const env = controllerEnv(cluster);
  const gate = featureGate(env, 'ReservedCapacity');
  const defaultOn = version === undefined || isAtLeast(version, '1.6.0');
  if (gate === false || (env !== undefined && gate === undefined && !defaultOn)) {
    return {
      enabled: false,
      note: 'the controller runs with the ReservedCapacity feature gate off (FEATURE_GATES; off by default before v1.6.0)',
    };
  }
  if (env === undefined && !defaultOn) {
    return {
      enabled: true,
      note: 'assuming the ReservedCapacity feature gate is on (off by default before v1.6.0; the controller was not read)',
    };
  }
  return { enabled: true };
}

/** VM_MEMORY_OVERHEAD_PERCENT and RESERVED_ENIS from the controller's env, else the defaults. */
function controllerSettings(cluster: ClusterContext): ControllerSettings {
  const env = controllerEnv(cluster);
  const overhead = Number.parseFloat(env?.VM_MEMORY_OVERHEAD_PERCENT ?? '');
  const reserved = Number.parseInt(env?.RESERVED_ENIS ?? '', 10);
  return {
    vmMemoryOverheadPercent: Number.isFinite(overhead)
      ? overhead
      : DEFAULT_CONTROLLER_SETTINGS.vmMemoryOverheadPercent,
    reservedENIs: Number.isFinite(reserved) ? reserved : DEFAULT_CONTROLLER_SETTINGS.reservedENIs,
  };
}

function stringMap(value: unknown): Record<string, string> | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const out: Record<string, string> = {};
  for (const [key, item] of Object.entries(value)) {
    if (typeof item === 'string') out[key] = item;
  }
  return out;
}

function integer(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) ? value : undefined;
}

/** The `spec.kubelet` fields instance types read (kubelet-config-valid reports malformed ones). */
function kubeletSettings(spec: EC2NodeClassSpec): KubeletSettings {
  const kubelet = spec.kubelet ?? {};
  const fields = {
    maxPods: integer(kubelet.maxPods),
    podsPerCore: integer(kubelet.podsPerCore),
    kubeReserved: stringMap(kubelet.kubeReserved),
    systemReserved: stringMap(kubelet.systemReserved),
    evictionHard: stringMap(kubelet.evictionHard),
    evictionSoft: stringMap(kubelet.evictionSoft),
  };
  return Object.fromEntries(
    Object.entries(fields).filter(([, value]) => value !== undefined)
  ) as KubeletSettings;
}

/** What the NodeClass and cluster contribute to every instance type (the resolver's inputs). */
export function instanceTypeContext(
  spec: EC2NodeClassSpec,
  cluster: ClusterContext
): InstanceTypeContext {
  return {
    amiFamily: effectiveAmiFamily(spec),
    kubelet: kubeletSettings(spec),
    blockDeviceMappings: spec.blockDeviceMappings ?? [],
    ...(spec.instanceStorePolicy === undefined
      ? {}
      : { instanceStorePolicy: spec.instanceStorePolicy }),
    ...(spec.networkInterfaces === undefined
      ? {}
      : {
          networkInterfaces: spec.networkInterfaces.map((nic) => ({
            networkCardIndex: nic.networkCardIndex ?? 0,
            efaOnly: nic.interfaceType === 'efa-only',
          })),
        }),
    ...(cluster.region === undefined ? {} : { region: cluster.region }),
    ...(cluster.karpenterVersion === undefined ? {} : { version: cluster.karpenterVersion }),
    settings: controllerSettings(cluster),
  };
}

/** One (zone, capacity type) of an instance type; reserved ones per reservation. */
export interface Offering {
  readonly zone: string;
  readonly capacityType: string;
  readonly reservation?: CapacityReservation;
}

/** One instance type as the chain sees it. */
interface Candidate {
  readonly name: string;
  /** Undefined when only the name is known (offerings without DescribeInstanceTypes). */
  readonly type?: KarpenterInstanceType;
  readonly labels: ReadonlyMap<string, readonly string[]>;
  /** Zones offering the type; undefined when offerings were not read. */
  readonly offeredZones?: ReadonlySet<string>;
  /** On-demand and spot in each offered zone (reserved offerings are added per class). */
  readonly offerings: readonly Offering[];
  /** Allocatable pods ≥ 1 (or unknown). */
  readonly roomForPod: boolean;
}

export type StepKind =
  | 'requirement'
  | 'images'
  | 'subnet-zones'
  | 'offered'
  | 'reservations'
  | 'compatible'
  | 'pods'
  | 'limits';

/** One narrowing step: what it kept. Steps that remove nothing are not recorded. */
export interface ChainStep {
  readonly kind: StepKind;
  /** How the step reads in a message (`kubernetes.io/arch In [arm64]`). */
  readonly label: string;
  /** The label key of a requirement step, or the resource names of a limits step. */
  readonly key?: string;
  /** Instance types with at least one offering left, and the offerings left. */
  readonly types: number;
  readonly offerings: number;
  /** Types the step removed entirely (their last offerings), sorted. */
  readonly removedTypes: readonly string[];
  /** The zones each removed type still had before the step (`subnet-zones` steps only). */
  readonly removedZones: ReadonlyMap<string, readonly string[]>;
}

export interface MinValuesShortfall {
  readonly key: string;
  readonly minValues: number;
  /** The distinct values the types left have, sorted. */
  readonly values: readonly string[];
}

/** A NodePool limit and the types left before the limits step that exceed it. */
export interface LimitVerdict {
  readonly resource: string;
  readonly limit: string;
  /** Whether it excludes every type left on its own. */
  readonly excludesAll: boolean;
  readonly excluded: readonly string[];
  /** The smallest capacity among the types it excludes. */
  readonly smallest?: { readonly instanceType: string; readonly capacity: Quantity };
}

export interface LaunchabilityInputs {
  readonly nodePool: NodePool;
  readonly spec: EC2NodeClassSpec;
  readonly facts: AwsNodeClassFacts;
  readonly subnets: readonly Subnet[];
  /** Karpenter's selected images; undefined when they could not be read (the step is skipped). */
  readonly images?: readonly SelectedImage[];
  readonly cluster: ClusterContext;
  readonly now: Date;
}

export interface Launchability {
  /** `types`: DescribeInstanceTypes was read; `names`: only the offered type names are known. */
  readonly mode: 'types' | 'names';
  /** Instance types in the region (Karpenter's DescribeInstanceTypes, or the offered names). */
  readonly universe: number;
  readonly steps: readonly ChainStep[];
  /** Remaining types by name, with Karpenter's view of each (undefined in `names` mode). */
  readonly types: ReadonlyMap<string, KarpenterInstanceType | undefined>;
  /** How many offerings are left, and their zones and capacity types (sorted). */
  readonly offeringCount: number;
  readonly zones: readonly string[];
  readonly capacityTypes: readonly string[];
  readonly minValues: readonly MinValuesShortfall[];
  /** Limits at the limits step, when it emptied the result. */
  readonly limits: readonly LimitVerdict[];
  /** Requirements and inputs not evaluated, each a message fragment. */
  readonly notEvaluated: readonly string[];
  readonly reservedCapacity: ReservedCapacitySupport;
  /** Reservations the class selects, with why each serves nothing (when it does not). */
  readonly reservations: readonly {
    readonly reservation: CapacityReservation;
    readonly unusable?: string;
  }[];
  /** `MIN_VALUES_POLICY=BestEffort`: Karpenter relaxes minValues instead of failing. */
  readonly minValuesBestEffort: boolean;
  /** Zones of the class's subnets, sorted. */
  readonly subnetZones: readonly string[];
}

const KUBE_ARCH: Readonly<Record<string, string>> = { x86_64: 'amd64', arm64: 'arm64' };

/** A NodePool requirement key as Karpenter normalizes it. */
function normalized(key: string): string {
  return NORMALIZED_LABELS[key] ?? key;
}

/** The NodePool's requirements (then template labels) per key, in first-appearance order. */
function requirementGroups(
  nodePool: NodePool
): { key: string; requirement: KeyRequirement; text: string }[] {
  const groups = new Map<string, { requirement: KeyRequirement; texts: string[] }>();
  const add = (key: string, requirement: KeyRequirement, text: string) => {
    const group = groups.get(key);
    if (group === undefined) groups.set(key, { requirement, texts: [text] });
    else {
      group.requirement = intersectRequirements(requirement, group.requirement);
      group.texts.push(text);
    }
  };
  for (const entry of nodePool.spec.template.spec.requirements) {
    const key = normalized(entry.key);
    const values = entry.values ?? [];
    add(
      key,
      keyRequirement(key, entry.operator, values, entry.minValues),
      `${entry.key} ${entry.operator}${values.length ? ` [${values.join(', ')}]` : ''}${
        entry.minValues === undefined ? '' : ` minValues ${entry.minValues}`
      }`
    );
  }
  for (const [label, value] of Object.entries(nodePool.spec.template.metadata?.labels ?? {})) {
    const key = normalized(label);
    add(key, keyRequirement(key, 'In', [value]), `label ${label}=${value}`);
  }
  return [...groups.entries()].map(([key, group]) => ({
    key,
    requirement: group.requirement,
    text: group.texts.join(', '),
  }));
}

/** Keys Karpenter defines on every instance type (so a names-only candidate does not know them). */
const TYPE_KEYS = new Set<string>(Object.values(LABEL));

/** Karpenter drops capacity-block reservations within 40 minutes of their end (`expiring`). */
const EXPIRING_MS = 40 * 60 * 1000;

/** Why a reservation serves no offering before zones are considered, or undefined. */
function reservationProblem(reservation: CapacityReservation, now: Date): string | undefined {
  const criteria = reservation.instanceMatchCriteria;
  if (criteria !== undefined && criteria !== 'open' && criteria !== 'targeted') {
    return `instance match criteria ${criteria} is not supported`;
  }
  if (reservation.availableInstanceCount === 0) return 'no instance left to launch';
  const end = reservation.endDate === undefined ? undefined : Date.parse(reservation.endDate);
  if (
    reservation.reservationType === 'capacity-block' &&
    end !== undefined &&
    now.getTime() >= end - EXPIRING_MS
  ) {
    return 'the capacity block is expiring';
  }
  return undefined;
}

/** Whether Karpenter's resolver compatibility rules let the class use the type. */
function compatibleWithClass(
  info: InstanceTypeInfo | undefined,
  name: string,
  spec: EC2NodeClassSpec
) {
  // a1 instance types are not supported by AL2023 (compatibility.go).
  if (effectiveAmiFamily(spec) === 'AL2023' && name.startsWith('a1.')) return false;
  if (info === undefined) return true;
  const interfaces = spec.networkInterfaces;
  if (interfaces !== undefined) {
    if (info.network.networkCards.length === 0 || info.network.enaSupport === 'unsupported') {
      return false;
    }
    const efaOnly = interfaces.filter((nic) => nic.interfaceType === 'efa-only').length;
    if (efaOnly > (info.network.efaMaximumInterfaces ?? 0)) return false;
  }
  if (spec.connectionTracking !== undefined && info.hypervisor !== 'nitro') return false;
  return true;
}

/** The requirements of each selected image: its architecture, and its variant for aliases. */
function imageRequirements(image: SelectedImage): KeyRequirement[] {
  const requirements = [keyRequirement(LABEL.arch, 'In', [KUBE_ARCH[image.architecture] ?? ''])];
  switch (image.variant) {
    case 'standard':
      requirements.push(
        keyRequirement(LABEL.acceleratorCount, 'DoesNotExist', []),
        keyRequirement(LABEL.gpuCount, 'DoesNotExist', [])
      );
      break;
    case 'nvidia':
      requirements.push(keyRequirement(LABEL.gpuCount, 'Exists', []));
      break;
    case 'neuron':
      requirements.push(keyRequirement(LABEL.acceleratorCount, 'Exists', []));
      break;
    default:
      break;
  }
  return requirements;
}

export function imageText(images: readonly SelectedImage[]): string {
  return [
    ...new Set(
      images.map(
        (image) =>
          `${KUBE_ARCH[image.architecture] ?? image.architecture}${image.variant ? ` ${image.variant}` : ''}`
      )
    ),
  ]
    .sort()
    .join(', ');
}

/** Offering-level label keys: everything else is the instance type's. */
const OFFERING_KEYS = new Set<string>([
  LABEL.zone,
  LABEL.zoneId,
  LABEL.capacityType,
  LABEL.reservationId,
  LABEL.reservationType,
  LABEL.reservationInterruptible,
]);

function onDemandAndSpot(candidate: { type?: KarpenterInstanceType }): string[] {
  return candidate.type === undefined
    ? ['on-demand', 'spot']
    : candidate.type.info.usageClasses.filter((use) => use === 'on-demand' || use === 'spot');
}

const ONE_POD = { numerator: 1n, denominator: 1n };

function withOfferings(
  candidate: Omit<Candidate, 'offerings' | 'roomForPod'>,
  zones: ReadonlySet<string>
): Candidate {
  const usage = onDemandAndSpot(candidate);
  const offerings = [...zones]
    .sort()
    .flatMap((zone) => usage.map((capacityType) => ({ zone, capacityType })));
  const pods = candidate.type?.allocatable.pods;
  return {
    ...candidate,
    offerings,
    roomForPod: pods === undefined || compareQuantities(pods, ONE_POD) >= 0,
  };
}

/**
 * Candidates per catalog and class context: the same catalog and context (most classes share
 * one) are computed once, however many NodePools ask.
 */
const CANDIDATES = new WeakMap<object, Map<string, Candidate[]>>();

function candidatesOf(
  inputs: LaunchabilityInputs,
  assumedZones: ReadonlySet<string>
): { mode: 'types' | 'names'; candidates: readonly Candidate[] } {
  const { facts } = inputs;
  const offeringList =
    facts.instanceTypeOfferings?.status === 'ok'
      ? facts.instanceTypeOfferings.value.offerings
      : undefined;
  const types = facts.instanceTypes?.status === 'ok' ? facts.instanceTypes.value.types : undefined;
  const build = (): Candidate[] => {
    const offered = new Map<string, Set<string>>();
    for (const offering of offeringList ?? []) {
      const zones = offered.get(offering.instanceType) ?? new Set<string>();
      zones.add(offering.zone);
      offered.set(offering.instanceType, zones);
    }
    const zonesOf = (name: string) => offered.get(name) ?? new Set<string>();
    if (types !== undefined) {
      const context = instanceTypeContext(inputs.spec, inputs.cluster);
      return types.map((info) => {
        const type = karpenterInstanceType(info, context);
        const base = { name: info.instanceType, type, labels: type.labels };
        return offeringList === undefined
          ? withOfferings(base, assumedZones)
          : withOfferings(
              { ...base, offeredZones: zonesOf(info.instanceType) },
              zonesOf(info.instanceType)
            );
      });
    }
    return [...offered.keys()].sort().map((name) =>
      withOfferings(
        {
          name,
          labels: new Map(
            Object.entries(instanceTypeNameLabels(name)).map(([key, value]) => [key, [value]])
          ),
          offeredZones: zonesOf(name),
        },
        zonesOf(name)
      )
    );
  };
  const mode = types !== undefined ? 'types' : 'names';
  // Zones assumed per NodePool cannot be shared; a catalog with recorded offerings can.
  const anchor = offeringList === undefined ? undefined : (types ?? offeringList);
  if (anchor === undefined) return { mode, candidates: build() };
  const key = JSON.stringify([
    mode,
    offeringList === undefined ? 0 : offeringList.length,
    mode === 'types' ? instanceTypeContext(inputs.spec, inputs.cluster) : {},
  ]);
  let byContext = CANDIDATES.get(anchor);
  if (byContext === undefined) {
    byContext = new Map();
    CANDIDATES.set(anchor, byContext);
  }
  let candidates = byContext.get(key);
  if (candidates === undefined) {
    candidates = build();
    byContext.set(key, candidates);
  }
  return { mode, candidates };
}

/** Code-point order: names and zones are ASCII, and `localeCompare` is slow on hundreds. */
function byText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A candidate and the offerings it has left. */
interface Live {
  readonly candidate: Candidate;
  readonly offerings: readonly Offering[];
}

/** Results per candidate list and everything else the chain reads (fleets repeat NodePools). */
const RESULTS = new WeakMap<object, Map<string, Launchability>>();

/** Everything but the catalog that the chain's result depends on, as one key. */
function resultKey(inputs: LaunchabilityInputs): string {
  const { nodePool, spec, facts, cluster } = inputs;
  const reservations =
    facts.capacityReservations?.status === 'ok'
      ? facts.capacityReservations.value.reservations
      : [];
  const env = controllerEnv(cluster);
  return JSON.stringify([
    nodePool.spec.template.spec.requirements,
    nodePool.spec.template.metadata?.labels ?? {},
    nodePool.spec.limits ?? {},
    [
      spec.amiFamily,
      spec.amiSelectorTerms.map((term) => term.alias ?? ''),
      spec.kubelet ?? {},
      spec.blockDeviceMappings ?? [],
      spec.instanceStorePolicy ?? '',
      spec.networkInterfaces ?? null,
      spec.connectionTracking ?? null,
    ],
    (inputs.images ?? null) &&
      (inputs.images ?? []).map((image) => [image.architecture, image.variant ?? '']),
    inputs.subnets.map((subnet) => [
      subnet.availabilityZone ?? '',
      subnet.availabilityZoneId ?? '',
    ]),
    reservations,
    reservations.length > 0 ? inputs.now.getTime() : 0,
    [cluster.region ?? '', cluster.karpenterVersion?.raw ?? ''],
    env === undefined
      ? null
      : ['FEATURE_GATES', 'VM_MEMORY_OVERHEAD_PERCENT', 'RESERVED_ENIS', 'MIN_VALUES_POLICY'].map(
          (name) => env[name] ?? ''
        ),
    facts.instanceTypeOfferings?.status === 'ok'
      ? facts.instanceTypeOfferings.value.offerings.length
      : -1,
  ]);
}

/**
 * The chain for one NodePool and its class. Needs DescribeInstanceTypes or the zone offerings
 * (the caller checks); with offerings alone, only the name-derived labels are known. Identical
 * inputs over the same catalog share one result.
 */
export function launchability(inputs: LaunchabilityInputs): Launchability {
  const types = inputs.facts.instanceTypes;
  const offeringsRead = inputs.facts.instanceTypeOfferings;
  const anchor =
    offeringsRead?.status !== 'ok'
      ? undefined
      : types?.status === 'ok'
        ? types.value.types
        : offeringsRead.value.offerings;
  if (anchor === undefined) return chain(inputs);
  let results = RESULTS.get(anchor);
  if (results === undefined) {
    results = new Map();
    RESULTS.set(anchor, results);
  }
  const key = resultKey(inputs);
  let result = results.get(key);
  if (result === undefined) {
    result = chain(inputs);
    results.set(key, result);
  }
  return result;
}

function chain(inputs: LaunchabilityInputs): Launchability {
  const { nodePool, spec, facts, cluster, now } = inputs;
  const version = cluster.karpenterVersion;
  const notEvaluated: string[] = [];
  const subnetZones = new Map<string, string | undefined>();
  for (const subnet of inputs.subnets) {
    if (subnet.availabilityZone !== undefined) {
      subnetZones.set(subnet.availabilityZone, subnet.availabilityZoneId);
    }
  }
  const groups = requirementGroups(nodePool);

  // Without recorded offerings every type is assumed offered in every zone the class's subnets
  // or the NodePool's zone requirement name.
  const assumedZones = new Set<string>(subnetZones.keys());
  for (const group of groups) {
    if (group.key === LABEL.zone && !group.requirement.complement) {
      for (const zone of group.requirement.values) assumedZones.add(zone);
    }
  }
  if (facts.instanceTypeOfferings?.status !== 'ok') {
    notEvaluated.push(
      'the zones offering each type (DescribeInstanceTypeOfferings not read: every type assumed offered in every zone)'
    );
  }
  const { mode, candidates } = candidatesOf(inputs, assumedZones);

  const reservedCapacity = reservedCapacitySupport(cluster);
  const selected =
    facts.capacityReservations?.status === 'ok'
      ? facts.capacityReservations.value.reservations
      : [];
  // Karpenter drops reservations whose end date has passed (capacityreservation/provider.go).
  const live = selected.filter(
    (reservation) =>
      reservation.endDate === undefined || Date.parse(reservation.endDate) > now.getTime()
  );
  const reservations = selected.map((reservation) => {
    const unusable = !live.includes(reservation)
      ? `ended ${reservation.endDate}`
      : !reservedCapacity.enabled
        ? (reservedCapacity.note ?? 'reserved capacity is off')
        : reservationProblem(reservation, now);
    return { reservation, ...(unusable === undefined ? {} : { unusable }) };
  });
  const reservedFor = new Map<string, Offering[]>();
  if (reservedCapacity.enabled) {
    for (const reservation of live) {
      if (reservation.instanceType === undefined || reservation.availabilityZone === undefined) {
        continue;
      }
      const list = reservedFor.get(reservation.instanceType) ?? [];
      list.push({ zone: reservation.availabilityZone, capacityType: 'reserved', reservation });
      reservedFor.set(reservation.instanceType, list);
    }
  }

  let state: Live[] = candidates.map((candidate) => {
    const reserved = reservedFor.get(candidate.name);
    return {
      candidate,
      offerings:
        reserved === undefined ? candidate.offerings : [...candidate.offerings, ...reserved],
    };
  });
  const universe = candidates.length;
  const steps: ChainStep[] = [];
  const count = (list: readonly Live[]) =>
    list.reduce((sum, entry) => sum + entry.offerings.length, 0);

  /** One step: keep types (`type`) and, of those, offerings (`offering`); record what it removed. */
  const apply = (
    step: { kind: StepKind; label: string; key?: string },
    keep: {
      type?: (candidate: Candidate) => boolean;
      offering?: (candidate: Candidate, offering: Offering) => boolean;
    }
  ) => {
    const next: Live[] = [];
    const removed: Live[] = [];
    let changed = false;
    for (const entry of state) {
      if (entry.offerings.length === 0) continue;
      if (keep.type !== undefined && !keep.type(entry.candidate)) {
        removed.push(entry);
        changed = true;
        continue;
      }
      const filter = keep.offering;
      let offerings = entry.offerings;
      if (filter !== undefined) {
        // Most steps keep every offering: copy only from the first one dropped.
        const index = offerings.findIndex((offering) => !filter(entry.candidate, offering));
        if (index >= 0) {
          const kept = offerings.slice(0, index);
          for (const offering of offerings.slice(index + 1)) {
            if (filter(entry.candidate, offering)) kept.push(offering);
          }
          offerings = kept;
          changed = true;
        }
      }
      if (offerings.length === 0) removed.push(entry);
      else
        next.push(
          offerings === entry.offerings ? entry : { candidate: entry.candidate, offerings }
        );
    }
    if (!changed) return;
    const removedTypes = removed.map((entry) => entry.candidate.name).sort(byText);
    // Only the zone step's message names the zones a removed type had left.
    const removedZones = new Map(
      step.kind !== 'subnet-zones'
        ? []
        : removed.map((entry) => [
            entry.candidate.name,
            [...new Set(entry.offerings.map((offering) => offering.zone))].sort(byText),
          ])
    );
    steps.push({
      ...step,
      types: next.length,
      offerings: count(next),
      removedTypes,
      removedZones,
    });
    state = next;
  };

  const offeringValues = (offering: Offering, key: string): readonly string[] | undefined => {
    switch (key) {
      case LABEL.zone:
        return [offering.zone];
      case LABEL.zoneId: {
        const zoneId = subnetZones.get(offering.zone);
        return zoneId === undefined ? undefined : [zoneId];
      }
      case LABEL.capacityType:
        return [offering.capacityType];
      default: {
        if (!labelDefined(key, version)) return undefined;
        const reservation = offering.reservation;
        if (reservation === undefined) return [];
        if (key === LABEL.reservationId) return [reservation.id];
        if (key === LABEL.reservationType) return [reservation.reservationType ?? 'default'];
        return [String(reservation.interruptible ?? false)];
      }
    }
  };

  /** `requirementAdmitsValues`, once per distinct value list (types share most of them). */
  const admission = (requirement: KeyRequirement) => {
    const seen = new Map<string, boolean>();
    return (values: readonly string[]): boolean => {
      const key = values.join('\u0000');
      let admitted = seen.get(key);
      if (admitted === undefined) {
        admitted = requirementAdmitsValues(requirement, values);
        seen.set(key, admitted);
      }
      return admitted;
    };
  };

  // 1. The NodePool's requirements and template labels, one step per key.
  for (const group of groups) {
    if (UNKNOWN_VALUE_LABELS.includes(group.key)) {
      notEvaluated.push(`${group.text} (the value comes from a table compiled into Karpenter)`);
      continue;
    }
    const step = { kind: 'requirement' as const, label: group.text, key: group.key };
    const admits = admission(group.requirement);
    if (OFFERING_KEYS.has(group.key)) {
      // One verdict per distinct offering value (a handful of zones and capacity types).
      const verdicts = new Map<string, boolean>();
      const valueKey = (offering: Offering): string =>
        group.key === LABEL.zone || group.key === LABEL.zoneId
          ? offering.zone
          : group.key === LABEL.capacityType
            ? offering.capacityType
            : (offering.reservation?.id ?? '');
      apply(step, {
        offering: (_candidate, offering) => {
          const key = valueKey(offering);
          let admitted = verdicts.get(key);
          if (admitted === undefined) {
            const values = offeringValues(offering, group.key);
            admitted = values === undefined || admits(values);
            verdicts.set(key, admitted);
          }
          return admitted;
        },
      });
      continue;
    }
    if (
      mode === 'names' &&
      TYPE_KEYS.has(group.key) &&
      !candidates.some((c) => c.labels.has(group.key))
    ) {
      notEvaluated.push(`${group.text} (DescribeInstanceTypes not read)`);
      continue;
    }
    apply(step, {
      type: (candidate) => {
        const values = candidate.labels.get(group.key);
        // A key the type does not define narrows nothing (a custom label).
        return values === undefined || admits(values);
      },
    });
  }

  // 2. The class's images: each type needs an image of its architecture (and variant).
  if (inputs.images !== undefined) {
    const images = inputs.images;
    const label = `images of the class (${imageText(images) || 'none'})`;
    if (mode === 'types') {
      const requirementSets = images.map((image) =>
        imageRequirements(image).map((requirement) => ({
          key: requirement.key,
          admits: admission(requirement),
        }))
      );
      apply(
        { kind: 'images', label },
        {
          type: (candidate) =>
            requirementSets.some((set) =>
              set.every(({ key, admits }) => admits(candidate.labels.get(key) ?? []))
            ),
        }
      );
    } else {
      // Architectures unknown: only whether the NodePool allows some image's architecture.
      const arch = groups.find((group) => group.key === LABEL.arch)?.requirement;
      const allowed = images.some(
        (image) =>
          arch === undefined || requirementAdmitsValues(arch, [KUBE_ARCH[image.architecture] ?? ''])
      );
      apply({ kind: 'images', label }, { type: () => allowed });
    }
  }

  // 3. Zones with a subnet of the class, 4. offered there (reserved offerings come from the
  // reservation's zone), 5. reservations with capacity.
  const zoneNames = [...subnetZones.keys()].sort();
  apply(
    {
      kind: 'subnet-zones',
      label: `zones with a subnet of the class (${zoneNames.join(', ') || 'none'})`,
    },
    { offering: (_candidate, offering) => subnetZones.has(offering.zone) }
  );
  if (reservedFor.size > 0) {
    apply(
      { kind: 'offered', label: 'offered in the reservation’s zone' },
      {
        offering: (candidate, offering) =>
          offering.reservation === undefined ||
          candidate.offeredZones === undefined ||
          candidate.offeredZones.has(offering.zone),
      }
    );
    apply(
      { kind: 'reservations', label: 'capacity reservations Karpenter can use' },
      {
        offering: (_candidate, offering) =>
          offering.reservation === undefined ||
          reservationProblem(offering.reservation, now) === undefined,
      }
    );
  }

  // 6. The class's compatibility rules, 7. room for one pod.
  const familyName = familyTraits(effectiveAmiFamily(spec)).family;
  apply(
    {
      kind: 'compatible',
      label: `types the class supports (${familyName})`,
    },
    { type: (candidate) => compatibleWithClass(candidate.type?.info, candidate.name, spec) }
  );
  if (mode === 'types') {
    apply(
      { kind: 'pods', label: 'room for a pod (allocatable pods ≥ 1)' },
      { type: (candidate) => candidate.roomForPod }
    );
  }

  // 8. The NodePool's limits: no type whose capacity exceeds one (node count zero: none at all).
  const limits: LimitVerdict[] = [];
  const limitEntries = Object.entries(nodePool.spec.limits ?? {}).flatMap(([resource, raw]) => {
    const parsed = parseQuantity(raw);
    if (parsed === undefined) {
      notEvaluated.push(`limits.${resource}: ${String(raw)} (not a quantity)`);
      return [];
    }
    return [{ resource, raw: String(raw), limit: parsed }];
  });
  if (limitEntries.length > 0) {
    const exceeds = (candidate: Candidate, entry: { resource: string; limit: Quantity }) => {
      if (entry.resource === 'nodes') return compareQuantities(entry.limit, ZERO) <= 0;
      if (candidate.type === undefined) return false;
      const capacity = candidate.type.capacity[entry.resource];
      if (capacity === undefined) return compareQuantities(ZERO, entry.limit) > 0;
      return compareQuantities(capacity, entry.limit) > 0;
    };
    for (const entry of limitEntries) {
      if (entry.resource === 'nodes') continue;
      if (mode === 'names') {
        notEvaluated.push(`limits.${entry.resource} (DescribeInstanceTypes not read)`);
      } else if (!candidates.some((c) => c.type?.capacity[entry.resource] !== undefined)) {
        notEvaluated.push(
          `limits.${entry.resource} (capacity not derived from DescribeInstanceTypes)`
        );
      }
    }
    const beforeLimits = state.filter((entry) => entry.offerings.length > 0);
    apply(
      {
        kind: 'limits',
        label: `limits ${limitEntries.map((entry) => `${entry.resource}: ${entry.raw}`).join(', ')}`,
        key: limitEntries.map((entry) => entry.resource).join(','),
      },
      { type: (candidate) => !limitEntries.some((entry) => exceeds(candidate, entry)) }
    );
    if (state.length === 0 && beforeLimits.length > 0) {
      const left = beforeLimits.map((entry) => entry.candidate);
      for (const entry of limitEntries) {
        const over = left.filter((candidate) => exceeds(candidate, entry));
        if (over.length === 0) continue;
        const smallest = over
          .flatMap((candidate) => {
            const capacity = candidate.type?.capacity[entry.resource];
            return capacity === undefined ? [] : [{ instanceType: candidate.name, capacity }];
          })
          .sort(
            (a, b) =>
              compareQuantities(a.capacity, b.capacity) ||
              a.instanceType.localeCompare(b.instanceType)
          )[0];
        limits.push({
          resource: entry.resource,
          limit: entry.raw,
          excludesAll: over.length === left.length,
          excluded: over.map((candidate) => candidate.name).sort(),
          ...(smallest ? { smallest } : {}),
        });
      }
    }
  }

  state = state.filter((entry) => entry.offerings.length > 0);

  // minValues over the types left: distinct values of each key's label (Karpenter's
  // InstanceTypes.SatisfiesMinValues, cloudprovider/types.go), zones and capacity types as the
  // type has them.
  const typeValues = (candidate: Candidate, key: string): readonly string[] => {
    if (key === LABEL.zone) {
      return [...(candidate.offeredZones ?? assumedZones)].filter((zone) => subnetZones.has(zone));
    }
    if (key === LABEL.capacityType) {
      const usage = onDemandAndSpot(candidate);
      return reservedFor.has(candidate.name) ? [...usage, 'reserved'] : usage;
    }
    return candidate.labels.get(key) ?? [];
  };
  const minValues: MinValuesShortfall[] = [];
  if (state.length > 0) {
    for (const group of groups) {
      const wanted = group.requirement.minValues;
      if (wanted === undefined) continue;
      const values = new Set<string>();
      for (const { candidate } of state) {
        for (const value of typeValues(candidate, group.key)) values.add(value);
      }
      if (values.size < wanted) {
        minValues.push({ key: group.key, minValues: wanted, values: [...values].sort() });
      }
    }
  }

  const zones = new Set<string>();
  const capacityTypes = new Set<string>();
  for (const entry of state) {
    for (const offering of entry.offerings) {
      zones.add(offering.zone);
      capacityTypes.add(offering.capacityType);
    }
  }
  return {
    mode,
    universe,
    steps,
    types: new Map(state.map((entry) => [entry.candidate.name, entry.candidate.type])),
    offeringCount: count(state),
    zones: [...zones].sort(),
    capacityTypes: [...capacityTypes].sort(),
    minValues,
    limits,
    notEvaluated,
    reservedCapacity,
    reservations,
    minValuesBestEffort: controllerEnv(cluster)?.MIN_VALUES_POLICY === 'BestEffort',
    subnetZones: zoneNames,
  };
}

/** Whether the chain can run for the class: its instance types or zone offerings were read. */
export function launchabilityEvaluable(facts: AwsNodeClassFacts): boolean {
  return facts.instanceTypes?.status === 'ok' || facts.instanceTypeOfferings?.status === 'ok';
}
