// The live ObjectSource: for each EKS cluster, DescribeCluster, then Karpenter's objects, CRDs and
// controller through the Kubernetes API. One unreachable cluster never stops the others; each
// failure becomes data (an `unavailable` slice) that the cluster-state checks report.
import type { ClusterCrds } from '../../core/admission/types.js';
import type { AccessEntry, AwsClusterFacts } from '../../core/facts/aws.js';
import type {
  ClusterState,
  KarpenterController,
  KubeReadFailure,
  PodIdentityAssociation,
} from '../../core/facts/cluster.js';
import { ok, type Slice, unavailable } from '../../core/facts/slice.js';
import type { ClusterContext, NodeClassEntry, NodePoolEntry } from '../../core/inventory.js';
import type { LoadedObjects, ObjectSource } from '../../core/ports/objects.js';
import { redactSecrets } from '../../core/redact.js';
import { partitionOf } from '../../core/region.js';
import type { InputError } from '../../core/report.js';
import { type KarpenterVersion, parseKarpenterVersion } from '../../core/version.js';
import { mapLimited } from '../../shared/concurrency.js';
import { SourceUnavailableError } from '../../shared/errors.js';
import type { ClusterTagFilter, EksCluster, EksReader } from '../aws/eks-reader.js';
import type { EksTokenProvider } from '../aws/eks-token.js';
import { addObject, type ParsedManifests } from '../files/kube-objects.js';
import { readInstalledCrds } from './crds.js';
import {
  findKarpenterDeployment,
  readIrsaRoleArn,
  toKarpenterController,
} from './karpenter-controller.js';
import {
  createKubeClient,
  type KubeClient,
  type KubeClientOptions,
  type KubeLimits,
  type KubeRetryPolicy,
} from './kube-client.js';
import { KubeApiError } from './kube-errors.js';

const EC2_NODECLASSES_PATH = '/apis/karpenter.k8s.aws/v1/ec2nodeclasses';
const NODEPOOLS_PATH = '/apis/karpenter.sh/v1/nodepools';
const DEFAULT_CLUSTER_CONCURRENCY = 4;

export interface ClusterProgress {
  readonly cluster: string;
  /** 1-based position and total, for "[2/5]" style lines. */
  readonly index: number;
  readonly total: number;
  readonly outcome: 'ok' | 'unavailable';
  readonly nodeClasses: number;
  /** Why the cluster could not be read, when it could not. */
  readonly message?: string;
}

export interface ClusterSourceOptions {
  readonly region: string;
  /** Explicit cluster names; otherwise every cluster in the region (optionally tag-filtered). */
  readonly clusters?: readonly string[];
  readonly discover?: { readonly tagFilter?: ClusterTagFilter };
  readonly eks: EksReader;
  readonly tokens: EksTokenProvider;
  /** Used when the controller's image tag does not give a version. */
  readonly fallbackKarpenterVersion?: KarpenterVersion;
  readonly connectTimeoutMs?: number;
  readonly readTimeoutMs?: number;
  /** Deadlines and byte budgets per request and per list (`DEFAULT_KUBE_LIMITS` otherwise). */
  readonly kubeLimits?: Partial<KubeLimits>;
  /** Retries of transient failures (`DEFAULT_KUBE_RETRY` otherwise). */
  readonly kubeRetry?: Partial<KubeRetryPolicy>;
  /**
   * The role of an instance profile, when it can be known without a call of its own (the IAM
   * account directory): lets a cluster whose NodeClasses name instance profiles have its node
   * roles' access entries described rather than listed.
   */
  readonly instanceProfileRole?: (profile: string) => Promise<string | undefined>;
  readonly concurrency?: number;
  readonly onProgress?: (progress: ClusterProgress) => void;
  /** Replaces the HTTPS client factory (tests). */
  readonly createKubeClient?: (options: KubeClientOptions) => KubeClient;
}

interface ClusterScan {
  readonly context: ClusterContext;
  readonly nodeClasses: readonly NodeClassEntry[];
  readonly nodePools: readonly NodePoolEntry[];
  readonly inputErrors: readonly InputError[];
}

/** An error's message, scrubbed: it reaches findings and the progress line. */
function messageOf(error: unknown): string {
  return redactSecrets(error instanceof Error ? error.message : String(error));
}

function sliceFromError<T>(error: unknown): Slice<T> {
  if (error instanceof SourceUnavailableError) return unavailable(error.reason, messageOf(error));
  return unavailable('unknown', messageOf(error));
}

/** Kubernetes list items may omit `apiVersion`/`kind`; the list's type supplies them. */
function withType(item: unknown, apiVersion: string, kind: string): unknown {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return item;
  return { apiVersion, kind, ...item };
}

/** Adds a list's items, each named by its place in the list (`<cluster>/<plural>[i]`). */
function addListItems(
  objects: ParsedManifests,
  items: readonly unknown[],
  cluster: string,
  apiVersion: string,
  kind: string,
  plural: string
): void {
  items.forEach((item, index) => {
    addObject(
      objects,
      withType(item, apiVersion, kind),
      cluster,
      undefined,
      `${cluster}/${plural}[${index}]`
    );
  });
}

/**
 * The distinct node role names the cluster's NodeClasses name (`spec.role`, a name; the part after
 * the last `/` of an ARN given by mistake), with the role of each `spec.instanceProfile` when
 * `profileRole` knows it; undefined when one is unknown (an instance profile it cannot resolve,
 * or a NodeClass that did not parse): then only a full list can find its role's entry.
 */
async function nodeRoleNames(
  nodeClasses: readonly NodeClassEntry[],
  profileRole: ((profile: string) => Promise<string | undefined>) | undefined
): Promise<string[] | undefined> {
  const names = new Set<string>();
  const lastSegment = (value: string) => value.slice(value.lastIndexOf('/') + 1);
  for (const entry of nodeClasses) {
    const spec = entry.parsed.ok ? entry.parsed.value.spec : undefined;
    const profile = spec?.instanceProfile;
    const role =
      spec?.role !== undefined && spec.role !== ''
        ? spec.role
        : profile !== undefined && profile !== '' && profileRole !== undefined
          ? await profileRole(lastSegment(profile))
          : undefined;
    if (role === undefined || role === '') return undefined;
    names.add(lastSegment(role));
  }
  return [...names].sort();
}

function awsFactsOf(cluster: EksCluster, accessEntries: Slice<readonly AccessEntry[]>) {
  const facts: AwsClusterFacts = {
    ...(cluster.accountId ? { accountId: cluster.accountId } : {}),
    ...(cluster.arn ? { arn: cluster.arn } : {}),
    ...(cluster.kubernetesVersion ? { kubernetesVersion: cluster.kubernetesVersion } : {}),
    ...(cluster.endpoint ? { endpoint: cluster.endpoint } : {}),
    ...(cluster.vpcId ? { vpcId: cluster.vpcId } : {}),
    ...(cluster.authenticationMode ? { authenticationMode: cluster.authenticationMode } : {}),
    accessEntries,
  };
  return ok(facts);
}

export function createClusterSource(options: ClusterSourceOptions): ObjectSource {
  const partition = partitionOf(options.region);
  const makeClient = options.createKubeClient ?? createKubeClient;

  /**
   * The access entries node-role-can-join needs: those of the NodeClasses' node roles. Each is
   * described directly by the role's ARN without a path (one call, no list); only when one is not
   * found that way (a role with a path, or no entry at all), or a NodeClass names no role (an
   * instance profile's role is known only to IAM), are all the cluster's entries listed.
   */
  async function readAccessEntries(
    cluster: EksCluster,
    nodeClasses: readonly NodeClassEntry[]
  ): Promise<Slice<readonly AccessEntry[]>> {
    // Access entries exist only in API modes; CONFIG_MAP clusters have none by definition.
    if (!cluster.authenticationMode?.includes('API')) return ok([]);
    try {
      const roles = await nodeRoleNames(nodeClasses, options.instanceProfileRole);
      if (roles !== undefined && cluster.accountId !== undefined) {
        const accountId = cluster.accountId;
        const found = await mapLimited(roles, 4, (role) =>
          options.eks.describeAccessEntry(
            cluster.name,
            `arn:${partition}:iam::${accountId}:role/${role}`
          )
        );
        const entries = found.filter((entry) => entry !== undefined);
        if (entries.length === found.length) return ok(entries);
      }
      return ok(await options.eks.listAccessEntries(cluster.name));
    } catch (error) {
      return sliceFromError(error);
    }
  }

  async function readPodIdentity(
    name: string,
    controller: KarpenterController | undefined
  ): Promise<Slice<readonly PodIdentityAssociation[]>> {
    try {
      return ok(
        await options.eks.listPodIdentityAssociations(
          name,
          controller
            ? { namespace: controller.namespace, serviceAccount: controller.serviceAccount }
            : {}
        )
      );
    } catch (error) {
      return sliceFromError(error);
    }
  }

  async function readController(
    kube: KubeClient,
    name: string
  ): Promise<{ controller: Slice<KarpenterController | undefined>; version?: string }> {
    let deployment: Awaited<ReturnType<typeof findKarpenterDeployment>>;
    try {
      deployment = await findKarpenterDeployment(kube, name);
    } catch (error) {
      return { controller: sliceFromError(error) };
    }
    if (!deployment) return { controller: ok(undefined) };
    const version = deployment.version ? { version: deployment.version } : {};
    try {
      const irsa = await readIrsaRoleArn(kube, deployment.namespace, deployment.serviceAccount);
      return { controller: ok(toKarpenterController(deployment, irsa)), ...version };
    } catch (error) {
      return { controller: sliceFromError(error), ...version };
    }
  }

  async function scanCluster(name: string, explicit: boolean): Promise<ClusterScan> {
    const base = { name, region: options.region, partition };
    let cluster: EksCluster;
    try {
      cluster = await options.eks.describeCluster(name);
    } catch (error) {
      const slice = sliceFromError<never>(error);
      const notFound = slice.status === 'unavailable' && slice.reason === 'not-found';
      return {
        context: {
          ...base,
          ...(options.fallbackKarpenterVersion
            ? { karpenterVersion: options.fallbackKarpenterVersion }
            : {}),
          aws: slice,
          state: { read: slice },
        },
        nodeClasses: [],
        nodePools: [],
        inputErrors:
          explicit && notFound
            ? [
                {
                  source: `cluster ${name}`,
                  message: `no EKS cluster "${name}" in ${options.region}`,
                },
              ]
            : [],
      };
    }

    const endpointState = {
      ...(cluster.endpoint ? { endpoint: cluster.endpoint } : {}),
      endpointAccess: cluster.endpointAccess,
    };
    const finish = async (
      state: ClusterState,
      objects: ParsedManifests,
      controller: KarpenterController | undefined,
      version: string | undefined,
      crds?: ClusterCrds
    ): Promise<ClusterScan> => {
      const podIdentity = await readPodIdentity(name, controller);
      const karpenterVersion = parseKarpenterVersion(version) ?? options.fallbackKarpenterVersion;
      return {
        context: {
          ...base,
          ...(karpenterVersion ? { karpenterVersion } : {}),
          aws: awsFactsOf(cluster, await readAccessEntries(cluster, objects.nodeClasses)),
          state: { ...state, podIdentityAssociations: podIdentity },
          ...(crds === undefined ? {} : { crds }),
        },
        nodeClasses: objects.nodeClasses,
        nodePools: objects.nodePools,
        inputErrors: [],
      };
    };
    const objects: ParsedManifests = { nodeClasses: [], nodePools: [], errors: [] };

    if (!cluster.endpoint || !cluster.caPem) {
      const read = unavailable<{ nodeClassCount: number }>(
        'unreachable',
        `cluster ${name} has no API endpoint or CA yet (status ${cluster.status ?? 'unknown'})`
      );
      return finish({ read, ...endpointState }, objects, undefined, undefined);
    }

    const kube = makeClient({
      endpoint: cluster.endpoint,
      caPem: cluster.caPem,
      token: () => options.tokens.token(name),
      ...(options.connectTimeoutMs === undefined
        ? {}
        : { connectTimeoutMs: options.connectTimeoutMs }),
      ...(options.readTimeoutMs === undefined ? {} : { readTimeoutMs: options.readTimeoutMs }),
      ...(options.kubeLimits === undefined ? {} : { limits: options.kubeLimits }),
      ...(options.kubeRetry === undefined ? {} : { retry: options.kubeRetry }),
    });
    try {
      let items: unknown[];
      try {
        items = await kube.list(EC2_NODECLASSES_PATH);
      } catch (error) {
        const state = readFailureState(error, name);
        return finish({ ...state, ...endpointState }, objects, undefined, undefined);
      }
      addListItems(objects, items, name, 'karpenter.k8s.aws/v1', 'EC2NodeClass', 'ec2nodeclasses');
      let nodePools: Slice<{ nodePoolCount: number }>;
      try {
        const poolItems = await kube.list(NODEPOOLS_PATH);
        addListItems(objects, poolItems, name, 'karpenter.sh/v1', 'NodePool', 'nodepools');
        nodePools = ok({ nodePoolCount: objects.nodePools.length });
      } catch (error) {
        nodePools = sliceFromError(error);
      }
      const [{ controller, version }, crds] = await Promise.all([
        readController(kube, name),
        readInstalledCrds(kube, name),
      ]);
      return finish(
        {
          read: ok({ nodeClassCount: objects.nodeClasses.length }),
          ...endpointState,
          nodePools,
          controller,
        },
        objects,
        controller.status === 'ok' ? controller.value : undefined,
        version,
        crds
      );
    } finally {
      kube.close();
    }
  }

  return {
    async load(): Promise<LoadedObjects> {
      let names: readonly string[];
      const explicit = options.clusters !== undefined;
      if (options.clusters) names = options.clusters;
      else {
        try {
          names = await options.eks.listClusters(options.discover?.tagFilter);
        } catch (error) {
          return {
            clusters: [],
            nodeClasses: [],
            nodePools: [],
            inputs: ['spec', 'cluster'],
            inputErrors: [
              { source: `eks:ListClusters ${options.region}`, message: messageOf(error) },
            ],
          };
        }
      }
      let done = 0;
      const scans = await mapLimited(
        names,
        options.concurrency ?? DEFAULT_CLUSTER_CONCURRENCY,
        async (name) => {
          let scan: ClusterScan;
          try {
            scan = await scanCluster(name, explicit);
          } catch (error) {
            // A bug in one cluster's scan must not lose the others.
            const read = unavailable<never>('unknown', messageOf(error));
            scan = {
              context: { name, region: options.region, partition, state: { read } },
              nodeClasses: [],
              nodePools: [],
              inputErrors: [],
            };
          }
          done += 1;
          const read = scan.context.state?.read;
          options.onProgress?.({
            cluster: name,
            index: done,
            total: names.length,
            outcome: read?.status === 'ok' ? 'ok' : 'unavailable',
            nodeClasses: scan.nodeClasses.length,
            ...(read?.status === 'unavailable' ? { message: read.message } : {}),
          });
          return scan;
        }
      );
      return {
        clusters: scans.map((scan) => scan.context),
        nodeClasses: scans.flatMap((scan) => scan.nodeClasses),
        nodePools: scans.flatMap((scan) => scan.nodePools),
        inputs: ['spec', 'cluster'],
        inputErrors: scans.flatMap((scan) => scan.inputErrors),
      };
    },
  };
}

/** ClusterState for a NodeClass list that failed; a 404 means the v1 CRD is not served. */
function readFailureState(error: unknown, cluster: string): ClusterState {
  if (!(error instanceof KubeApiError)) return { read: sliceFromError(error) };
  const readFailure: KubeReadFailure = {
    kind: error.kind,
    path: error.path,
    ...(error.httpStatus === undefined ? {} : { httpStatus: error.httpStatus }),
  };
  if (error.httpStatus === 404) {
    return {
      read: unavailable(
        'not-installed',
        `cluster ${cluster} does not serve karpenter.k8s.aws/v1 EC2NodeClasses: Karpenter is not installed, or is older than v1.0`
      ),
      readFailure,
    };
  }
  return { read: unavailable(error.reason, messageOf(error)), readFailure };
}
