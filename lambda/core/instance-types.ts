// Instance-type labels as Karpenter's AWS provider derives them from the type's name, and which
// NodePool requirements restrict them. Used to decide which NodeClasses need the region's
// instance type offerings and to test each offered type against a NodePool's requirements.
import type { Inventory } from './inventory.js';
import { nodeClassKey } from './inventory.js';
import { nodePoolRequirements, requirementAdmits } from './nodepool-requirements.js';
import type { NodePool, NodeSelectorRequirement } from './schema.js';

const INSTANCE_TYPE_LABEL = 'node.kubernetes.io/instance-type';
const INSTANCE_FAMILY_LABEL = 'karpenter.k8s.aws/instance-family';
const INSTANCE_CATEGORY_LABEL = 'karpenter.k8s.aws/instance-category';
const INSTANCE_GENERATION_LABEL = 'karpenter.k8s.aws/instance-generation';
const INSTANCE_SIZE_LABEL = 'karpenter.k8s.aws/instance-size';

/** The labels derived from the instance type's name alone (no DescribeInstanceTypes needed). */
export const INSTANCE_TYPE_KEYS: readonly string[] = [
  INSTANCE_TYPE_LABEL,
  INSTANCE_FAMILY_LABEL,
  INSTANCE_CATEGORY_LABEL,
  INSTANCE_GENERATION_LABEL,
  INSTANCE_SIZE_LABEL,
];

// Category and generation: the provider's pattern over the name (`u-6tb1.metal` → `u`, `1`).
// https://github.com/aws/karpenter-provider-aws/blob/main/pkg/providers/instancetype/types.go
const INSTANCE_TYPE_SCHEME = /^([a-z]+)(-[0-9]+tb)?([0-9]+).*\./;

/**
 * The name-derived labels of an instance type. Family and size only when the name has exactly one
 * dot; category and generation only when the name matches the provider's pattern. A label the type
 * lacks is absent (it satisfies only `NotIn` and `DoesNotExist`).
 */
export function instanceTypeLabels(instanceType: string): Readonly<Record<string, string>> {
  const labels: Record<string, string> = { [INSTANCE_TYPE_LABEL]: instanceType };
  const match = INSTANCE_TYPE_SCHEME.exec(instanceType);
  if (match?.[1] !== undefined && match[3] !== undefined) {
    labels[INSTANCE_CATEGORY_LABEL] = match[1];
    labels[INSTANCE_GENERATION_LABEL] = match[3];
  }
  const parts = instanceType.split('.');
  if (parts.length === 2 && parts[0] !== undefined && parts[1] !== undefined) {
    labels[INSTANCE_FAMILY_LABEL] = parts[0];
    labels[INSTANCE_SIZE_LABEL] = parts[1];
  }
  return labels;
}

/** The NodePool's requirements on name-derived instance-type labels. */
export function instanceTypeRequirements(nodePool: NodePool): NodeSelectorRequirement[] {
  return nodePoolRequirements(nodePool).filter((requirement) =>
    INSTANCE_TYPE_KEYS.includes(requirement.key)
  );
}

/** Whether an instance type satisfies every requirement (requirements are ANDed). */
export function instanceTypeAllowed(
  instanceType: string,
  requirements: readonly NodeSelectorRequirement[]
): boolean {
  const labels = instanceTypeLabels(instanceType);
  return requirements.every((requirement) =>
    requirementAdmits(
      requirement,
      Object.hasOwn(labels, requirement.key) ? labels[requirement.key] : undefined
    )
  );
}

/**
 * NodeClasses (by `nodeClassKey`) that a parsed NodePool of the same cluster launches through and
 * whose requirements restrict instance types: only these need the region's offerings.
 */
export function nodeClassesNeedingOfferings(inventory: Inventory): Set<string> {
  const keys = new Set<string>();
  for (const entry of inventory.nodePools) {
    if (!entry.parsed.ok) continue;
    const name = entry.parsed.value.spec.template?.spec?.nodeClassRef?.name;
    if (name === undefined) continue;
    if (instanceTypeRequirements(entry.parsed.value).length === 0) continue;
    keys.add(nodeClassKey(entry.cluster, name));
  }
  return keys;
}
