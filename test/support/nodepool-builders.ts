import type { Inventory, NodePoolEntry } from '../../lambda/core/inventory.js';
import { parseNodePool } from '../../lambda/core/schema.js';

/** A karpenter.sh/v1 NodePool object using EC2NodeClass `nodeClass` with the given requirements. */
export function aNodePoolObject(
  options: { name?: string; nodeClass?: string; requirements?: unknown[]; ref?: object } = {}
): Record<string, unknown> {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: options.name ?? 'general' },
    spec: {
      template: {
        spec: {
          nodeClassRef: options.ref ?? {
            group: 'karpenter.k8s.aws',
            kind: 'EC2NodeClass',
            name: options.nodeClass ?? 'default',
          },
          requirements: options.requirements ?? [],
        },
      },
    },
  };
}

export function aNodePoolEntry(raw: unknown, cluster = '', file?: string): NodePoolEntry {
  const name = (raw as { metadata?: { name?: string } }).metadata?.name ?? 'unnamed';
  return {
    cluster,
    name,
    parsed: parseNodePool(raw),
    ...(file ? { source: { file, document: 0 } } : {}),
  };
}

/** `inventory` with the raw NodePools added in its first cluster. */
export function withNodePools(inventory: Inventory, objects: readonly unknown[]): Inventory {
  const cluster = inventory.clusters[0]?.name ?? '';
  return { ...inventory, nodePools: objects.map((raw) => aNodePoolEntry(raw, cluster)) };
}

export function requirement(key: string, operator: string, values: string[] = []) {
  return { key, operator, values };
}
