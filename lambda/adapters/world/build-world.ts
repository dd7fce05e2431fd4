// Builds a world file from what a scan read: the recorded AWS responses plus the clusters and
// Kubernetes objects the object source loaded. Never includes credentials, tokens or user data.

import type { ClusterContext, NodeClassEntry, NodePoolEntry } from '../../core/inventory.js';
import type { LoadedObjects } from '../../core/ports/objects.js';
import type { Partition } from '../../core/region.js';
import { REGION_KEYS } from '../aws/fact-descriptors.js';
import { recordableCrd } from '../kube/crds.js';
import type { RecordedAws } from './recorder.js';
import { type World, type WorldPermission, WorldSchema } from './schema.js';

export const REDACTED_USER_DATA = '<redacted by nodeclass-scan snapshot>';

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * A NodeClass as recorded: `managedFields` and the last-applied annotation (a second copy of the
 * object) are dropped, and `spec.userData` (bootstrap scripts can hold secrets) is redacted.
 */
function sanitizedObject(raw: unknown): unknown {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return raw;
  const object = structuredClone(raw) as Record<string, unknown>;
  const metadata = object.metadata as Record<string, unknown> | undefined;
  if (metadata && typeof metadata === 'object') {
    delete metadata.managedFields;
    const annotations = metadata.annotations as Record<string, unknown> | undefined;
    if (annotations && typeof annotations === 'object') delete annotations[LAST_APPLIED];
  }
  const spec = object.spec as Record<string, unknown> | undefined;
  if (spec && typeof spec === 'object' && typeof spec.userData === 'string') {
    spec.userData = REDACTED_USER_DATA;
  }
  return object;
}

function readErrorOf(cluster: ClusterContext): string | undefined {
  const state = cluster.state;
  if (!state || state.read.status === 'ok') return undefined;
  const failure = state.readFailure;
  if (failure?.httpStatus !== undefined) return String(failure.httpStatus);
  if (failure?.kind === 'timeout' || state.read.reason === 'timeout') return 'timeout';
  if (state.read.reason === 'not-installed') return '404';
  if (state.read.reason === 'access-denied') return '403';
  return state.read.reason;
}

/** The CRDs the scan read (and why others could not be), so a replay admits by the same ones. */
function crdsOf(cluster: ClusterContext): Record<string, unknown> {
  const crds = cluster.crds;
  if (crds === undefined) return {};
  const documents = [crds.nodeClass, crds.nodePool].flatMap((crd) =>
    crd === undefined ? [] : [recordableCrd(crd.document)]
  );
  return {
    ...(documents.length === 0 ? {} : { crds: documents }),
    ...(crds.unavailable === undefined ? {} : { crdsUnavailable: crds.unavailable }),
    ...(crds.denied === true ? { crdsDenied: true } : {}),
  };
}

function kubernetesOf(
  cluster: ClusterContext,
  nodeClasses: readonly NodeClassEntry[],
  nodePools: readonly NodePoolEntry[]
): Record<string, unknown> | undefined {
  if (!cluster.state) return undefined;
  const controller =
    cluster.state.controller?.status === 'ok' ? cluster.state.controller.value : undefined;
  const mappings = cluster.aws?.status === 'ok' ? cluster.aws.value.awsAuthRoleMappings : undefined;
  const readError = readErrorOf(cluster);
  const karpenterVersion = controller?.version ?? cluster.karpenterVersion?.raw;
  return {
    ...(karpenterVersion === undefined ? {} : { karpenterVersion }),
    ...(controller
      ? {
          karpenterNamespace: controller.namespace,
          karpenterServiceAccount: controller.serviceAccount,
          serviceAccounts: [
            {
              namespace: controller.namespace,
              name: controller.serviceAccount,
              ...(controller.irsaRoleArn === undefined
                ? {}
                : { annotations: { 'eks.amazonaws.com/role-arn': controller.irsaRoleArn } }),
            },
          ],
        }
      : {}),
    ...(mappings?.status === 'ok'
      ? {
          awsAuthMapRoles: mappings.value.map((mapping) => ({
            rolearn: mapping.roleArn,
            groups: [...mapping.groups],
          })),
        }
      : {}),
    ...(readError === undefined ? {} : { readError }),
    ...crdsOf(cluster),
    ec2NodeClasses: nodeClasses.map((entry) => sanitizedObject(entry.raw)),
    nodePools: nodePools.flatMap((entry) => (entry.parsed.ok ? [entry.parsed.value] : [])),
  };
}

function clusterRecord(cluster: ClusterContext, loaded: ScannedObjects): Record<string, unknown> {
  const aws = cluster.aws?.status === 'ok' ? cluster.aws.value : undefined;
  const access = cluster.state?.endpointAccess;
  const associations =
    cluster.state?.podIdentityAssociations?.status === 'ok'
      ? cluster.state.podIdentityAssociations.value
      : [];
  const kubernetes = kubernetesOf(
    cluster,
    loaded.nodeClasses.filter((entry) => entry.cluster === cluster.name),
    loaded.nodePools.filter((entry) => entry.cluster === cluster.name)
  );
  return {
    name: cluster.name,
    ...(aws?.arn === undefined ? {} : { arn: aws.arn }),
    ...(aws?.kubernetesVersion === undefined ? {} : { version: aws.kubernetesVersion }),
    ...(aws?.endpoint === undefined ? {} : { endpoint: aws.endpoint }),
    resourcesVpcConfig: {
      ...(aws?.vpcId === undefined ? {} : { vpcId: aws.vpcId }),
      ...(access?.publicAccess === undefined ? {} : { endpointPublicAccess: access.publicAccess }),
      ...(access?.privateAccess === undefined
        ? {}
        : { endpointPrivateAccess: access.privateAccess }),
      ...(access?.publicAccessCidrs === undefined
        ? {}
        : { publicAccessCidrs: [...access.publicAccessCidrs] }),
    },
    ...(aws?.authenticationMode === undefined
      ? {}
      : { accessConfig: { authenticationMode: aws.authenticationMode } }),
    accessEntries:
      aws?.accessEntries?.status === 'ok'
        ? aws.accessEntries.value.map((entry) => ({
            principalArn: entry.principalArn,
            ...(entry.type === undefined ? {} : { type: entry.type }),
            kubernetesGroups: [...entry.kubernetesGroups],
          }))
        : [],
    podIdentityAssociations: associations.map((association) => ({ ...association })),
    ...(kubernetes ? { kubernetes } : {}),
  };
}

/** What the scan loaded (an Inventory or LoadedObjects both fit). */
export type ScannedObjects = Pick<LoadedObjects, 'clusters' | 'nodeClasses' | 'nodePools'>;

export interface BuildWorldInput {
  /** Recorded permission simulations (snapshot); none: every simulation replays as allowed. */
  readonly permissions?: readonly WorldPermission[];
  readonly account: string;
  readonly region: string;
  readonly partition: Partition;
  readonly recordedAt: Date;
  readonly recorded: RecordedAws;
  readonly loaded: ScannedObjects;
}

/** The world file; validated against the schema it will be read with. */
export function buildWorld(input: BuildWorldInput): World {
  const { recorded } = input;
  const world = {
    version: 1,
    account: input.account,
    region: input.region,
    partition: input.partition,
    recordedAt: input.recordedAt.toISOString(),
    ec2: recorded.ec2,
    // Only what the scan asked: a replay then answers exactly what the live scan read.
    ...Object.fromEntries(
      REGION_KEYS.flatMap((key) => {
        const records = recorded.region[key];
        return records === undefined ? [] : [[key, { [input.region]: records }]];
      })
    ),
    ssm: recorded.keyed.ssm,
    kms: {
      ...recorded.keyed.kms,
      ...(recorded.ebsEncryptionDefaults === undefined
        ? {}
        : { ebsEncryptionDefaults: { [input.region]: recorded.ebsEncryptionDefaults } }),
    },
    iam: {
      ...recorded.keyed.iam,
      permissions: input.permissions ?? [],
      // Recorded simulations cover what a replay asks; anything else was never shown allowed.
      permissionsDefault: (input.permissions ?? []).length > 0 ? 'implicitDeny' : 'allowed',
    },
    eks: {
      clusters: input.loaded.clusters
        .filter((cluster) => cluster.name !== '')
        .map((cluster) => clusterRecord(cluster, input.loaded)),
    },
  };
  return WorldSchema.parse(world);
}
