import type {
  CheckInput,
  ClusterContext,
  Inventory,
  NodeClassEntry,
} from '../../lambda/core/inventory.js';
import { emptyInventory } from '../../lambda/core/inventory.js';
import { parseEC2NodeClass } from '../../lambda/core/schema.js';
import { type KarpenterVersion, parseKarpenterVersion } from '../../lambda/core/version.js';

type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? DeepPartial<T[K]> | T[K] : T[K] };

/** A valid AL2023 EC2NodeClass object with overridable spec fields (raw, as Kubernetes returns it). */
export function aNodeClassObject(
  overrides: {
    name?: string;
    spec?: Record<string, unknown>;
    status?: Record<string, unknown>;
    metadata?: Record<string, unknown>;
  } = {}
): Record<string, unknown> {
  return {
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name: overrides.name ?? 'default', generation: 1, ...overrides.metadata },
    spec: {
      amiSelectorTerms: [{ alias: 'al2023@v20251001' }],
      role: 'KarpenterNodeRole-demo',
      subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'demo' } }],
      securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'demo' } }],
      metadataOptions: {
        httpEndpoint: 'enabled',
        httpProtocolIPv6: 'disabled',
        httpPutResponseHopLimit: 1,
        httpTokens: 'required',
      },
      ...overrides.spec,
    },
    ...(overrides.status ? { status: overrides.status } : {}),
  };
}

/** The version `raw` names; throws on a malformed literal, so a typo cannot test "no version". */
export function aKarpenterVersion(raw: string): KarpenterVersion {
  const version = parseKarpenterVersion(raw);
  if (!version) throw new Error(`not a Karpenter version: ${raw}`);
  return version;
}

export function aNodeClassEntry(raw: unknown, cluster = ''): NodeClassEntry {
  const name = (raw as { metadata?: { name?: string } }).metadata?.name ?? 'unnamed';
  return {
    cluster,
    name,
    apiVersion: String((raw as { apiVersion?: unknown }).apiVersion),
    raw,
    parsed: parseEC2NodeClass(raw),
  };
}

/** An inventory holding the given raw NodeClass objects in one cluster. */
export function anInventory(
  objects: readonly unknown[],
  options: {
    cluster?: Partial<ClusterContext>;
    inputs?: readonly CheckInput[];
    overrides?: DeepPartial<Inventory>;
  } = {}
): Inventory {
  const clusterName = options.cluster?.name ?? '';
  return emptyInventory({
    inputs: new Set(options.inputs ?? ['spec']),
    clusters: [{ name: clusterName, partition: 'aws', ...options.cluster }],
    nodeClasses: objects.map((raw) => aNodeClassEntry(raw, clusterName)),
    ...(options.overrides as Partial<Inventory>),
  });
}
