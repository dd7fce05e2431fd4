import type { AdmissionVerdict, ClusterCrds } from './admission/types.js';
import type { AwsClusterFacts, AwsNodeClassFacts } from './facts/aws.js';
import type { ClusterState } from './facts/cluster.js';
import type { PermissionFacts } from './facts/permissions.js';
import type { Slice } from './facts/slice.js';
import { type ObjectOrigin, originLabel } from './model.js';
import type { Partition } from './region.js';
import type { EC2NodeClass, NodePool, ParseResult } from './schema.js';
import type { KarpenterVersion } from './version.js';

/**
 * Which kinds of input a scan collected. A check whose inputs were not collected is not run, and
 * the report lists it under `summary.notRun` (it is not an `error`).
 *  - spec: the NodeClass objects (always).
 *  - aws: EC2/IAM/EKS/SSM facts (live or world file).
 *  - cluster: Karpenter's view from inside the cluster (status, controller deployment).
 *  - permissions: IAM simulation of the controller role.
 */
export type CheckInput = 'spec' | 'aws' | 'cluster' | 'permissions';

/** Where a document came from, so findings can point at a file and line. */
export interface SourceLocation {
  readonly file: string;
  /** 0-based index of the document in a multi-document file. */
  readonly document: number;
  /** 0-based index in the document's `List` items, when the object is one. */
  readonly item?: number;
  /** Dotted JSON path (see `formatPath`) → 1-based position in the file. */
  readonly positions?: Readonly<Record<string, { line: number; column: number }>>;
}

export interface NodeClassEntry {
  /** Cluster name; empty when scanning manifests without a cluster. */
  readonly cluster: string;
  /** `metadata.name`, or a placeholder naming the source when the object has none. */
  readonly name: string;
  readonly apiVersion: string;
  readonly raw: unknown;
  readonly parsed: ParseResult<EC2NodeClass>;
  readonly source?: SourceLocation;
  /** Set when another scanned object has this cluster, kind and name (see `ObjectOrigin`). */
  readonly origin?: ObjectOrigin;
  /** What the cluster's installed CRD admits, when the scan has that CRD. */
  readonly admission?: AdmissionVerdict;
}

export interface NodePoolEntry {
  readonly cluster: string;
  readonly name: string;
  /** The object as read, so annotations are known even when it fails the schema. */
  readonly raw?: unknown;
  readonly parsed: ParseResult<NodePool>;
  readonly source?: SourceLocation;
  /** Set when another scanned object has this cluster, kind and name (see `ObjectOrigin`). */
  readonly origin?: ObjectOrigin;
  /** What the cluster's installed CRD admits, when the scan has that CRD. */
  readonly admission?: AdmissionVerdict;
}

/** What is known about one cluster (or the pseudo-cluster `''` of a manifest-only scan). */
export interface ClusterContext {
  readonly name: string;
  readonly region?: string;
  readonly partition: Partition;
  /** Undefined when unknown: version-aware checks then assume the worst case. */
  readonly karpenterVersion?: KarpenterVersion;
  /** AWS facts about the cluster itself (DescribeCluster, access entries…), when collected. */
  readonly aws?: Slice<AwsClusterFacts>;
  /** Karpenter's in-cluster state (controller deployment, read errors), when collected. */
  readonly state?: ClusterState;
  /** Karpenter's installed CRDs (live, world file, manifests or --crd), when the scan has them. */
  readonly crds?: ClusterCrds;
}

export interface Inventory {
  readonly inputs: ReadonlySet<CheckInput>;
  /** Scan-wide setting: `production` (default) or not; lowers pinning findings to info. */
  readonly environment: 'production' | 'non-production';
  readonly clusters: readonly ClusterContext[];
  readonly nodeClasses: readonly NodeClassEntry[];
  readonly nodePools: readonly NodePoolEntry[];
  /** AWS facts per NodeClass, keyed by `nodeClassKey(cluster, name)`. */
  readonly awsFacts: ReadonlyMap<string, AwsNodeClassFacts>;
  /** Permission simulation results per NodeClass, keyed by `nodeClassKey(cluster, name)`. */
  readonly permissions: ReadonlyMap<string, PermissionFacts>;
}

export function nodeClassKey(cluster: string, name: string): string {
  return `${cluster}/${name}`;
}

/**
 * The key of a NodeClass's entries in `awsFacts` and `permissions`: `nodeClassKey`, plus the origin
 * of a manifest object that shares its name with another (each has its own selectors and facts).
 */
export function factsKeyOf(entry: Pick<NodeClassEntry, 'cluster' | 'name' | 'origin'>): string {
  const key = nodeClassKey(entry.cluster, entry.name);
  return entry.origin === undefined ? key : `${key}\u0000${originLabel(entry.origin)}`;
}

export function clusterOf(inventory: Inventory, name: string): ClusterContext | undefined {
  return inventory.clusters.find((cluster) => cluster.name === name);
}

export function emptyInventory(overrides: Partial<Inventory> = {}): Inventory {
  return {
    inputs: new Set<CheckInput>(['spec']),
    environment: 'production',
    clusters: [],
    nodeClasses: [],
    nodePools: [],
    awsFacts: new Map(),
    permissions: new Map(),
    ...overrides,
  };
}

const MAX_WALK_DEPTH = 12;

function collectUnavailable(value: unknown, found: Set<string>, depth: number): void {
  if (value === null || typeof value !== 'object' || depth > MAX_WALK_DEPTH) return;
  if (Array.isArray(value)) {
    for (const item of value) collectUnavailable(item, found, depth + 1);
    return;
  }
  const record = value as Record<string, unknown>;
  if (record.status === 'unavailable' && typeof record.reason === 'string') {
    found.add(`${record.reason}: ${String(record.message ?? '')}`);
    return;
  }
  for (const child of Object.values(record)) collectUnavailable(child, found, depth + 1);
}

/**
 * The distinct sources a scan could not read (`reason: message`), over every collected slice.
 * One unreadable API counts once however many checks needed it, so `SourceErrors` tracks broken
 * sources, not the `error` findings that follow from them.
 */
export function unavailableSources(inventory: Inventory): string[] {
  const found = new Set<string>();
  for (const cluster of inventory.clusters) {
    collectUnavailable(cluster.aws, found, 0);
    collectUnavailable(cluster.state, found, 0);
  }
  for (const facts of inventory.awsFacts.values()) collectUnavailable(facts, found, 0);
  for (const facts of inventory.permissions.values()) collectUnavailable(facts, found, 0);
  return [...found].sort();
}
