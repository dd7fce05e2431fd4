// `scan --world FILE`: NodeClasses and AWS facts from a world-state file (offline). Without paths
// the world's own NodeClasses are scanned (all clusters, or those named by --cluster); with paths
// the manifests are evaluated against one of the world's clusters.
import { createManifestSource } from '../adapters/files/manifest-source.js';
import { lazyIamEngine } from '../adapters/iam-engine/load.js';
import { loadWorldFile } from '../adapters/world/load-world.js';
import {
  createWorldPolicySimulator,
  createWorldRolePolicyReader,
  worldHasPolicyDocuments,
} from '../adapters/world/permissions.js';
import type { World } from '../adapters/world/schema.js';
import { createWorldAwsFacts } from '../adapters/world/world-facts.js';
import {
  createWorldObjectSource,
  selectWorldCluster,
  worldClusterContext,
} from '../adapters/world/world-objects.js';
import { createAwsFactsEnricher } from '../app/collect-aws-facts.js';
import {
  createPermissionsEnricher,
  type PermissionsEnricherOptions,
} from '../app/collect-permissions.js';
import type { ScanPlan } from '../app/run-scan.js';
import type { LoadedObjects, ObjectSource } from '../core/ports/objects.js';
import { type KarpenterVersion, parseKarpenterVersion } from '../core/version.js';
import { ConfigError } from '../shared/errors.js';

export interface WorldPlanOptions {
  readonly world: string;
  readonly paths: readonly string[];
  /** `--crd FILE…`: Karpenter's CRDs the manifests are admitted by. */
  readonly crdFiles?: readonly string[];
  readonly clusters: readonly string[];
  readonly region?: string;
  readonly karpenterVersion?: string;
  readonly environment: 'production' | 'non-production';
  readonly readStdin: () => Promise<string>;
  readonly now: Date;
  /** Per-cluster controller role override (`--controller-role CLUSTER=ARN`). */
  readonly controllerRoles?: Readonly<Record<string, string>>;
  /**
   * `--controller-policy`: the simulator, policy reader and note that replace the world's
   * documents and decision table for the controller roles, given the world's SCPs.
   */
  readonly controllerPolicy?: (
    scps: readonly { readonly id: string; readonly document: string }[]
  ) => Pick<PermissionsEnricherOptions, 'simulator' | 'policies' | 'policySource'>;
}

const ISO_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/;

/**
 * `--now`: the time a world file's recorded dates (deprecations, reservation end dates, ignore
 * rules' expiry) are compared with. An ISO 8601 time with its zone, or a date alone (its midnight
 * UTC); undefined when the text is neither, or no such day.
 */
export function parseScanTime(value: string): Date | undefined {
  const text = value.trim();
  if (!ISO_TIME.test(text)) return undefined;
  const time = new Date(text.length === 10 ? `${text}T00:00:00Z` : text);
  if (Number.isNaN(time.getTime())) return undefined;
  // Date rolls 2026-02-30 over to March: a day that does not exist is refused.
  const day = text.slice(0, 10);
  const [year, month, date] = day.split('-').map(Number) as [number, number, number];
  const check = new Date(Date.UTC(year, month - 1, date));
  if (check.getUTCMonth() !== month - 1 || check.getUTCDate() !== date) return undefined;
  return time;
}

function karpenterVersionFlag(raw: string | undefined): KarpenterVersion | undefined {
  if (raw === undefined) return undefined;
  const version = parseKarpenterVersion(raw);
  if (!version) {
    throw new ConfigError(`--karpenter-version "${raw}" is not a version such as 1.7.0 or v1.2.1`);
  }
  return version;
}

/** Keeps only the named clusters (and their objects); an unknown name is a usage error. */
function onlyClusters(source: ObjectSource, names: readonly string[]): ObjectSource {
  if (names.length === 0) return source;
  return {
    async load(): Promise<LoadedObjects> {
      const loaded = await source.load();
      const known = new Set(loaded.clusters.map((cluster) => cluster.name));
      const unknown = names.filter((name) => !known.has(name));
      if (unknown.length > 0) {
        throw new ConfigError(
          `--cluster ${unknown.map((name) => `"${name}"`).join(', ')} not in the world file (clusters: ${[...known].join(', ') || 'none'})`
        );
      }
      const keep = (cluster: string): boolean => names.includes(cluster);
      return {
        ...loaded,
        clusters: loaded.clusters.filter((cluster) => keep(cluster.name)),
        nodeClasses: loaded.nodeClasses.filter((entry) => keep(entry.cluster)),
        nodePools: loaded.nodePools.filter((entry) => keep(entry.cluster)),
      };
    },
  };
}

function objectSourceFor(world: World, options: WorldPlanOptions): ObjectSource {
  const karpenterVersion = karpenterVersionFlag(options.karpenterVersion);
  if (options.paths.length === 0) {
    return onlyClusters(
      createWorldObjectSource({
        world,
        file: options.world,
        ...(karpenterVersion ? { karpenterVersion } : {}),
      }),
      options.clusters
    );
  }
  if (options.clusters.length > 1) {
    throw new ConfigError('manifests are evaluated against one world cluster: give one --cluster');
  }
  const cluster = selectWorldCluster(world, options.world, options.clusters[0]);
  return createManifestSource({
    paths: options.paths,
    // Manifests carry no in-cluster state: only the cluster's AWS facts apply.
    cluster: worldClusterContext(world, options.world, cluster, {
      withState: false,
      ...(karpenterVersion ? { karpenterVersion } : {}),
    }),
    readStdin: options.readStdin,
    ...(options.crdFiles === undefined ? {} : { crdFiles: options.crdFiles }),
  });
}

/** Given documents stand in for the controller's policies; which roles exist is still the world's. */
function withWorldRoles<T extends Pick<PermissionsEnricherOptions, 'policies'>>(
  world: World,
  permissions: T
): T {
  const { policies } = permissions;
  if (policies === undefined) return permissions;
  const { roleExists } = createWorldRolePolicyReader(world);
  return { ...permissions, policies: { ...policies, roleExists } };
}

export async function buildWorldPlan(options: WorldPlanOptions): Promise<ScanPlan> {
  const world = await loadWorldFile(options.world);
  if (options.region !== undefined && options.region !== world.region) {
    throw new ConfigError(
      `--region ${options.region} does not match the world file's region ${world.region}`
    );
  }
  // A misspelt cluster would silently fall back to the discovered controller role.
  const worldClusters = world.eks.clusters.map((cluster) => cluster.name);
  for (const cluster of Object.keys(options.controllerRoles ?? {})) {
    if (!worldClusters.includes(cluster)) {
      throw new ConfigError(
        `--controller-role "${cluster}" is not a cluster of the world file (clusters: ${worldClusters.join(', ') || 'none'})`
      );
    }
  }
  return {
    environment: options.environment,
    objects: objectSourceFor(world, options),
    enrichers: [
      createAwsFactsEnricher({
        port: createWorldAwsFacts({ world, now: options.now }),
        now: options.now,
      }),
      // After the AWS facts: simulations use the resolved images, subnets and node roles.
      createPermissionsEnricher({
        ...(options.controllerPolicy === undefined
          ? {
              // The policy engine is an optional package: imported on the first simulation that
              // needs it.
              simulator: createWorldPolicySimulator(
                world,
                worldHasPolicyDocuments(world) ? { engine: lazyIamEngine() } : {}
              ),
              policies: createWorldRolePolicyReader(world),
            }
          : // The documents stand in for the controller role's; the account's SCPs still apply.
            withWorldRoles(
              world,
              options.controllerPolicy(
                (world.organizations?.scps ?? []).map((scp) => ({
                  id: scp.Id,
                  document: scp.Document,
                }))
              )
            )),
        ...(options.controllerRoles === undefined
          ? {}
          : { controllerRoles: options.controllerRoles }),
      }),
    ],
  };
}
