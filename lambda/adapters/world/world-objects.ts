// ObjectSource over a world file: the clusters it records, with their Kubernetes objects parsed
// exactly like manifests (a bad object is a finding, not a crash).
import { crdSlot } from '../../core/admission/crd-names.js';
import type { ClusterCrds, CrdDocument } from '../../core/admission/types.js';
import type { AccessEntry, AwsAuthRoleMapping, AwsClusterFacts } from '../../core/facts/aws.js';
import type {
  ClusterState,
  EndpointAccess,
  KarpenterController,
  KubeReadFailure,
  PodIdentityAssociation,
} from '../../core/facts/cluster.js';
import { ok, type UnavailableReason, unavailable } from '../../core/facts/slice.js';
import type { ClusterContext } from '../../core/inventory.js';
import type { LoadedObjects, ObjectSource } from '../../core/ports/objects.js';
import { type Partition, partitionOf } from '../../core/region.js';
import { type KarpenterVersion, parseKarpenterVersion } from '../../core/version.js';
import { InputError } from '../../shared/errors.js';
import { addObject, type ParsedManifests } from '../files/kube-objects.js';
import type { World, WorldCluster } from './schema.js';

const DEFAULT_KARPENTER_NAMESPACE = 'kube-system';
const DEFAULT_KARPENTER_SERVICE_ACCOUNT = 'karpenter';
const IRSA_ANNOTATION = 'eks.amazonaws.com/role-arn';
const NODECLASSES_PATH = '/apis/karpenter.k8s.aws/v1/ec2nodeclasses';

/** The world's partition; a partition that contradicts the region is an input error. */
function worldPartition(world: World, file: string): Partition {
  const derived = partitionOf(world.region);
  if (world.partition !== undefined && world.partition !== derived) {
    throw new InputError(
      `${file}: partition: "${world.partition}" does not match region "${world.region}" (partition ${derived})`
    );
  }
  return derived;
}

/** `401`, `403`, `404`, `timeout`… as recorded in `kubernetes.readError` → why the read failed. */
function readErrorReason(readError: string): UnavailableReason {
  const value = readError.trim().toLowerCase();
  if (value === '401' || value === '403' || value.includes('forbidden') || value.includes('unauth'))
    return 'access-denied';
  if (value === '404' || value.includes('not-installed') || value.includes('notfound'))
    return 'not-installed';
  if (value.includes('timeout') || value.includes('timedout')) return 'timeout';
  if (value.includes('unreachable') || value.startsWith('econn') || value === 'enotfound')
    return 'unreachable';
  if (value.startsWith('5')) return 'unreachable';
  return 'unknown';
}

/** The failure detail a live read would have reported for the recorded `readError`. */
function readFailureOf(readError: string): KubeReadFailure {
  const value = readError.trim().toLowerCase();
  if (/^\d{3}$/.test(value)) {
    return { kind: 'http', httpStatus: Number(value), path: NODECLASSES_PATH };
  }
  if (value.includes('timeout') || value.includes('timedout')) {
    return { kind: 'timeout', path: NODECLASSES_PATH };
  }
  if (value.includes('tls') || value.includes('cert'))
    return { kind: 'tls', path: NODECLASSES_PATH };
  if (value.includes('malformed') || value.includes('invalid')) {
    return { kind: 'malformed', path: NODECLASSES_PATH };
  }
  return { kind: 'network', path: NODECLASSES_PATH };
}

function endpointAccessOf(cluster: WorldCluster): EndpointAccess | undefined {
  const config = cluster.resourcesVpcConfig;
  if (config?.endpointPublicAccess === undefined && config?.endpointPrivateAccess === undefined) {
    return undefined;
  }
  const cidrs = (config as { publicAccessCidrs?: unknown }).publicAccessCidrs;
  return {
    ...(config.endpointPublicAccess === undefined
      ? {}
      : { publicAccess: config.endpointPublicAccess }),
    ...(config.endpointPrivateAccess === undefined
      ? {}
      : { privateAccess: config.endpointPrivateAccess }),
    ...(Array.isArray(cidrs) && cidrs.every((cidr) => typeof cidr === 'string')
      ? { publicAccessCidrs: cidrs as string[] }
      : {}),
  };
}

function clusterAwsFacts(world: World, cluster: WorldCluster): AwsClusterFacts {
  const accessEntries: AccessEntry[] = cluster.accessEntries.map((entry) => ({
    principalArn: entry.principalArn,
    ...(entry.type === undefined ? {} : { type: entry.type }),
    kubernetesGroups: entry.kubernetesGroups ?? [],
  }));
  const mapRoles = cluster.kubernetes?.awsAuthMapRoles;
  const awsAuthRoleMappings: AwsAuthRoleMapping[] | undefined = mapRoles?.map((mapping) => ({
    roleArn: mapping.rolearn,
    groups: mapping.groups ?? [],
  }));
  const vpcId = cluster.resourcesVpcConfig?.vpcId;
  const authenticationMode = cluster.accessConfig?.authenticationMode;
  return {
    accountId: world.account,
    ...(cluster.arn === undefined ? {} : { arn: cluster.arn }),
    ...(cluster.version === undefined ? {} : { kubernetesVersion: cluster.version }),
    ...(cluster.endpoint === undefined ? {} : { endpoint: cluster.endpoint }),
    ...(vpcId === undefined ? {} : { vpcId }),
    ...(authenticationMode === undefined ? {} : { authenticationMode }),
    accessEntries: ok(accessEntries),
    ...(awsAuthRoleMappings === undefined ? {} : { awsAuthRoleMappings: ok(awsAuthRoleMappings) }),
  };
}

function clusterState(
  cluster: WorldCluster,
  counts: { readonly nodeClasses: number; readonly nodePools: number }
): ClusterState | undefined {
  const kubernetes = cluster.kubernetes;
  if (!kubernetes) return undefined;
  const namespace = kubernetes.karpenterNamespace ?? DEFAULT_KARPENTER_NAMESPACE;
  const serviceAccount = kubernetes.karpenterServiceAccount ?? DEFAULT_KARPENTER_SERVICE_ACCOUNT;
  const account = kubernetes.serviceAccounts.find(
    (candidate) => candidate.namespace === namespace && candidate.name === serviceAccount
  );
  const irsaRoleArn = account?.annotations?.[IRSA_ANNOTATION];
  const controller: KarpenterController = {
    namespace,
    serviceAccount,
    ...(kubernetes.karpenterVersion === undefined ? {} : { version: kubernetes.karpenterVersion }),
    ...(irsaRoleArn === undefined ? {} : { irsaRoleArn }),
  };
  const associations: PodIdentityAssociation[] = cluster.podIdentityAssociations.map(
    (association) => ({
      namespace: association.namespace,
      serviceAccount: association.serviceAccount,
      roleArn: association.roleArn,
      ...(association.targetRoleArn === undefined
        ? {}
        : { targetRoleArn: association.targetRoleArn }),
      ...(association.disableSessionTags === undefined
        ? {}
        : { disableSessionTags: association.disableSessionTags }),
    })
  );
  const endpoint = cluster.endpoint;
  const endpointAccess = endpointAccessOf(cluster);
  const where = {
    ...(endpoint === undefined ? {} : { endpoint }),
    ...(endpointAccess === undefined ? {} : { endpointAccess }),
  };
  if (kubernetes.readError !== undefined) {
    return {
      read: unavailable(
        readErrorReason(kubernetes.readError),
        `listing EC2NodeClasses failed: ${kubernetes.readError} (recorded in the world file)`
      ),
      ...where,
      readFailure: readFailureOf(kubernetes.readError),
      podIdentityAssociations: ok(associations),
    };
  }
  return {
    read: ok({ nodeClassCount: counts.nodeClasses }),
    ...where,
    nodePools: ok({ nodePoolCount: counts.nodePools }),
    controller: ok(controller),
    podIdentityAssociations: ok(associations),
  };
}

/** The CRDs recorded for the cluster, as its scans admit by them; undefined when none were. */
function clusterCrds(file: string, cluster: WorldCluster): ClusterCrds | undefined {
  const kubernetes = cluster.kubernetes;
  if (kubernetes?.crds === undefined && kubernetes?.crdsUnavailable === undefined) return undefined;
  const origin = { kind: 'world' as const, location: `${file} (cluster ${cluster.name})` };
  const crds: { nodeClass?: CrdDocument; nodePool?: CrdDocument } = {};
  for (const document of kubernetes.crds ?? []) {
    const slot = crdSlot(document.metadata.name);
    if (slot !== undefined) crds[slot] = { name: document.metadata.name, document, origin };
  }
  return {
    ...crds,
    ...(kubernetes.crdsUnavailable === undefined
      ? {}
      : { unavailable: kubernetes.crdsUnavailable }),
    ...(kubernetes.crdsDenied === true ? { denied: true } : {}),
  };
}

export interface WorldClusterOptions {
  /** Overrides the recorded Karpenter version (`--karpenter-version`). */
  readonly karpenterVersion?: KarpenterVersion;
  /** Include the in-cluster state (only when the cluster's own objects are scanned). */
  readonly withState: boolean;
  readonly nodeClassCount?: number;
  readonly nodePoolCount?: number;
}

/** The ClusterContext the world records for one cluster. */
export function worldClusterContext(
  world: World,
  file: string,
  cluster: WorldCluster,
  options: WorldClusterOptions
): ClusterContext {
  const karpenterVersion =
    options.karpenterVersion ?? parseKarpenterVersion(cluster.kubernetes?.karpenterVersion);
  const state = options.withState
    ? clusterState(cluster, {
        nodeClasses: options.nodeClassCount ?? 0,
        nodePools: options.nodePoolCount ?? 0,
      })
    : undefined;
  const crds = clusterCrds(file, cluster);
  return {
    name: cluster.name,
    region: world.region,
    partition: worldPartition(world, file),
    ...(karpenterVersion ? { karpenterVersion } : {}),
    aws: ok(clusterAwsFacts(world, cluster)),
    ...(state ? { state } : {}),
    ...(crds ? { crds } : {}),
  };
}

/** The cluster named by `--cluster`, or the only one; anything else is a usage error. */
export function selectWorldCluster(world: World, file: string, name?: string): WorldCluster {
  const names = world.eks.clusters.map((cluster) => cluster.name);
  if (name !== undefined) {
    const found = world.eks.clusters.find((cluster) => cluster.name === name);
    if (!found) {
      throw new InputError(
        `${file}: no cluster "${name}" (clusters: ${names.join(', ') || 'none'})`
      );
    }
    return found;
  }
  const [only, ...others] = world.eks.clusters;
  if (!only) throw new InputError(`${file}: eks.clusters is empty; nothing to evaluate against`);
  if (others.length > 0) {
    throw new InputError(
      `${file}: holds ${names.length} clusters (${names.join(', ')}); choose one with --cluster`
    );
  }
  return only;
}

export interface WorldSourceOptions {
  readonly world: World;
  /** Shown in error messages and used as the objects' source file. */
  readonly file: string;
  readonly karpenterVersion?: KarpenterVersion;
}

/** Every cluster in the world and the Kubernetes objects recorded for it. */
export function createWorldObjectSource(options: WorldSourceOptions): ObjectSource {
  const { world, file } = options;
  return {
    async load(): Promise<LoadedObjects> {
      const parsed: ParsedManifests = { nodeClasses: [], nodePools: [], errors: [] };
      const clusters: ClusterContext[] = [];
      let hasKubernetes = false;
      world.eks.clusters.forEach((cluster, clusterIndex) => {
        const kubernetes = cluster.kubernetes;
        const before = parsed.nodeClasses.length;
        const poolsBefore = parsed.nodePools.length;
        if (kubernetes && kubernetes.readError === undefined) {
          hasKubernetes = true;
          const base = `eks.clusters[${clusterIndex}].kubernetes`;
          addAll(
            parsed,
            kubernetes.ec2NodeClasses,
            cluster.name,
            file,
            `${base}.ec2NodeClasses`,
            'EC2NodeClass'
          );
          addAll(parsed, kubernetes.nodePools, cluster.name, file, `${base}.nodePools`, 'NodePool');
        } else if (kubernetes) {
          hasKubernetes = true;
        }
        clusters.push(
          worldClusterContext(world, file, cluster, {
            ...(options.karpenterVersion ? { karpenterVersion: options.karpenterVersion } : {}),
            withState: true,
            nodeClassCount: parsed.nodeClasses.length - before,
            nodePoolCount: parsed.nodePools.length - poolsBefore,
          })
        );
      });
      return {
        clusters,
        nodeClasses: parsed.nodeClasses,
        nodePools: parsed.nodePools,
        inputs: hasKubernetes ? ['spec', 'cluster'] : ['spec'],
        inputErrors: parsed.errors,
      };
    },
  };
}

function addAll(
  result: ParsedManifests,
  objects: readonly unknown[],
  cluster: string,
  file: string,
  path: string,
  expectedKind: 'EC2NodeClass' | 'NodePool'
): void {
  objects.forEach((object, index) => {
    const list = expectedKind === 'EC2NodeClass' ? result.nodeClasses : result.nodePools;
    const before = list.length;
    addObject(result, object, cluster, { file, document: 0 }, `${file}#${path}[${index}]`);
    if (list.length === before) {
      // addObject ignores other kinds; in a typed list that is a mistake worth reporting.
      result.errors.push({
        source: `${file}: ${path}[${index}]`,
        message: `not a ${expectedKind} (kind and apiVersion must be ${expectedKind === 'EC2NodeClass' ? 'EC2NodeClass, karpenter.k8s.aws/v1' : 'NodePool, karpenter.sh/v1'})`,
      });
    }
  });
}
