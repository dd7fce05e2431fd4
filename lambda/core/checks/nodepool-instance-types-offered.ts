import { defineCheck } from '../check.js';
import type { SelectedImage } from '../facts/aws.js';
import { LABEL } from '../instance-types.js';
import { type ChainStep, imageText, type Launchability } from '../launchability.js';
import { formatQuantity } from '../quantity.js';
import { list } from './support/aws-facts.js';
import { forEachNodePool, requirementPath, withLaunchability } from './support/nodepools.js';

/** Resources whose quantities are bytes. */
const BYTES = new Set(['memory', 'ephemeral-storage']);

function sample(types: readonly string[], max = 5): string {
  const distinct = new Set(types);
  if (distinct.size <= max) return list([...distinct].sort(), max);
  // The first `max` in sort order without sorting the catalog (hundreds of types per NodePool).
  const first: string[] = [];
  for (const type of distinct) {
    if (first.length === max && type >= (first[max - 1] as string)) continue;
    let at = first.length;
    while (at > 0 && type < (first[at - 1] as string)) at--;
    first.splice(at, 0, type);
    if (first.length > max) first.pop();
  }
  return `${first.join(', ')} and ${distinct.size - max} more`;
}

/** `812 types → kubernetes.io/arch In [arm64]: 243 → …: 0` */
function chainText(result: Launchability): string {
  const start =
    result.mode === 'types'
      ? `${result.universe} instance types`
      : `${result.universe} offered instance types (names only)`;
  return [start, ...result.steps.map((step) => `${step.label}: ${step.types}`)].join(' → ');
}

/** What the step that emptied the list removed, and why, in words. */
function blockedHint(result: Launchability, step: ChainStep, images?: readonly SelectedImage[]) {
  const removed = step.removedTypes;
  switch (step.kind) {
    case 'requirement': {
      const key = step.key ?? '';
      if (key === LABEL.capacityType) return reservationHint(result);
      return `Left before it: ${sample(removed)}.`;
    }
    case 'images':
      return `Left before it: ${sample(removed)}; the class has images for ${imageText(images ?? []) || 'no architecture'} only.`;
    case 'subnet-zones': {
      // Types grouped by the zones they had left (`c7i.large, m7i.large in us-east-1d`).
      const byZones = new Map<string, string[]>();
      for (const name of removed) {
        const zones = list(step.removedZones.get(name) ?? []) || 'no zone';
        byZones.set(zones, [...(byZones.get(zones) ?? []), name]);
      }
      const where = [...byZones].map(([zones, names]) => `${sample(names)} in ${zones}`);
      const reserved = result.reservations
        .filter(
          ({ reservation, unusable }) =>
            unusable === undefined &&
            removed.includes(reservation.instanceType ?? '') &&
            !result.subnetZones.includes(reservation.availabilityZone ?? '')
        )
        .map(
          ({ reservation }) =>
            `${reservation.id} (${reservation.instanceType ?? '?'}) is in ${reservation.availabilityZone ?? '?'}`
        );
      return [
        where.length ? `Left before it only in zones without a subnet: ${where.join('; ')}.` : '',
        reserved.length ? `Reservation ${list(reserved)}.` : '',
      ]
        .filter(Boolean)
        .join(' ');
    }
    case 'reservations':
    case 'offered':
      return reservationHint(result);
    case 'limits': {
      const alone = result.limits.filter((limit) => limit.excludesAll);
      const shown = alone.length > 0 ? alone : result.limits;
      return shown
        .map((limit) => {
          const bytes = BYTES.has(limit.resource);
          const unitless = bytes && /^\d+(\.\d+)?$/.test(limit.limit);
          const value = unitless
            ? `${limit.limit}: a quantity without a unit, so ${limit.limit} bytes`
            : limit.limit;
          if (!limit.excludesAll) {
            return `limits.${limit.resource} (${value}) excludes ${sample(limit.excluded)}.`;
          }
          const smallest = limit.smallest
            ? `; the smallest type left, ${limit.smallest.instanceType}, has ${formatQuantity(limit.smallest.capacity, bytes)}`
            : '';
          return `Every type left exceeds limits.${limit.resource} (${value})${smallest}.`;
        })
        .join(' ');
    }
    case 'pods':
      return `spec.kubelet (maxPods, podsPerCore) leaves no room for a pod on ${sample(removed)}.`;
    case 'compatible':
      return `The class cannot use ${sample(removed)} (a1 types on AL2023, network interfaces or connection tracking the type does not support).`;
  }
}

/** The class's reservations and why each serves nothing. */
function reservationHint(result: Launchability): string {
  const notes: string[] = [];
  if (!result.reservedCapacity.enabled)
    notes.push(`Reserved capacity: ${result.reservedCapacity.note}.`);
  if (result.reservations.length === 0)
    notes.push('The EC2NodeClass selects no active capacity reservation.');
  for (const { reservation, unusable } of result.reservations) {
    // With reserved capacity off, every reservation is unusable for that one reason, said above.
    const why = unusable && result.reservedCapacity.enabled ? `: ${unusable}` : '';
    notes.push(
      `${reservation.id} (${reservation.instanceType ?? '?'} in ${reservation.availabilityZone ?? '?'})${why}.`
    );
  }
  return notes.join(' ');
}

function notes(result: Launchability): string {
  const parts: string[] = [];
  if (result.notEvaluated.length > 0)
    parts.push(` Not evaluated: ${list(result.notEvaluated, 3)}.`);
  if (result.reservedCapacity.enabled && result.reservedCapacity.note) {
    parts.push(` Reserved capacity: ${result.reservedCapacity.note}.`);
  }
  return parts.join('');
}

/** Some (instance type, zone, capacity type) offering is left for the NodePool to launch. */
export const nodePoolInstanceTypesOffered = defineCheck({
  id: 'nodepool-instance-types-offered',
  title: 'NodePool has an instance type offering Karpenter can launch',
  group: 'aws',
  severity: 'critical',
  inputs: ['aws'],
  scope: ['NodePool'],
  rationale:
    "Karpenter launches a node only through an offering (instance type, zone, capacity type) that the NodePool's requirements and limits allow, with an image of its architecture in the EC2NodeClass, offered in a zone of the class's subnets and, for reserved capacity, with a usable reservation there. With none left, or minValues unmet, the NodePool's pods stay Pending.",
  remediation:
    "Widen what the step the message names narrowed to nothing: allow instance types of the architectures the class has images for, raise spec.limits above the smallest allowed type's capacity (a memory limit without a unit is bytes), select subnets in the zones of the types or reservations, or lower minValues.",
  references: [
    'https://karpenter.sh/docs/concepts/nodepools/#spectemplatespecrequirements',
    'https://karpenter.sh/docs/concepts/nodepools/#speclimits',
    'https://karpenter.sh/docs/reference/instance-types/',
    'https://github.com/kubernetes-sigs/karpenter/blob/v1.14.1/pkg/controllers/provisioning/scheduling/scheduler.go',
    'https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/providers/instancetype/types.go',
    'https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DescribeInstanceTypes.html',
  ],
  material: ['nodeClass', 'blockedAt', 'minValues[].key'],
  evaluate: (inventory, { now }) =>
    forEachNodePool(inventory, (nodePool, target) => {
      const { resource } = target;
      return withLaunchability(nodePool, target, now, ({ nodeClass, images, result }) => {
        const className = nodeClass.entry.name;
        const chain = chainText(result);
        const evidenceBase = {
          nodeClass: className,
          mode: result.mode,
          universe: result.universe,
          chain: result.steps.map((step) => ({
            step: step.label,
            kind: step.kind,
            types: step.types,
            offerings: step.offerings,
          })),
          notEvaluated: [...result.notEvaluated],
        };
        const blocked = result.steps.at(-1);
        if (result.offeringCount === 0 && blocked === undefined) {
          return [
            {
              status: 'fail',
              resource,
              message: `No instance type offering is left for this NodePool through EC2NodeClass "${className}": ${chain}, none offered in any zone of the region (DescribeInstanceTypeOfferings). Karpenter launches nothing for it and its pods stay Pending.${notes(result)}`,
              evidence: { ...evidenceBase, blockedAt: { kind: 'offered' }, removed: [] },
            },
          ];
        }
        if (result.offeringCount === 0 && blocked !== undefined) {
          const path =
            blocked.kind === 'requirement' && blocked.key !== undefined
              ? requirementPath(nodePool, blocked.key)
              : blocked.kind === 'limits'
                ? 'spec.limits'
                : undefined;
          return [
            {
              status: 'fail',
              resource,
              message: `No instance type offering is left for this NodePool through EC2NodeClass "${className}": ${chain}. ${blockedHint(result, blocked, images)} Karpenter launches nothing for it and its pods stay Pending.${notes(result)}`,
              evidence: {
                ...evidenceBase,
                blockedAt: { kind: blocked.kind, ...(blocked.key ? { key: blocked.key } : {}) },
                removed: blocked.removedTypes.slice(0, 20),
              },
              ...(path ? { location: { path } } : {}),
            },
          ];
        }
        const types = [...result.types.keys()];
        const zones = result.zones;
        const capacityTypes = result.capacityTypes;
        if (result.minValues.length > 0) {
          const shortfalls = result.minValues.map(
            (shortfall) =>
              `${shortfall.key} minValues ${shortfall.minValues}, but the types left have ${shortfall.values.length} (${list(shortfall.values, 5) || 'none'})`
          );
          const evidence = {
            ...evidenceBase,
            minValues: result.minValues.map((shortfall) => ({
              ...shortfall,
              values: [...shortfall.values],
            })),
          };
          const path = requirementPath(nodePool, result.minValues[0]?.key ?? '');
          if (result.minValuesBestEffort) {
            return [
              {
                status: 'notice',
                resource,
                message: `${list(shortfalls, 3)}: the controller runs with MIN_VALUES_POLICY=BestEffort, so Karpenter relaxes minValues and launches from ${types.length} type(s) (${chain}).`,
                evidence,
              },
            ];
          }
          return [
            {
              status: 'fail',
              resource,
              message: `minValues cannot be met: ${list(shortfalls, 3)} (${chain}). Karpenter launches nothing for this NodePool (MIN_VALUES_POLICY Strict, the default).${notes(result)}`,
              evidence,
              ...(path ? { location: { path } } : {}),
            },
          ];
        }
        return [
          {
            status: 'pass',
            resource,
            message: `${types.length} instance type(s) can launch through EC2NodeClass "${className}" (${chain}): ${sample(types)}, in ${list(zones)}, as ${capacityTypes.join(', ')}.${notes(result)}`,
            evidence: { ...evidenceBase, types: types.length, zones, capacityTypes },
          },
        ];
      });
    }),
});
