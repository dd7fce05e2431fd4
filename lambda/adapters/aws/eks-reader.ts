// EKS control-plane reads: cluster discovery, DescribeCluster (cached per scan), access entries
// and Pod Identity associations (https://docs.aws.amazon.com/eks/latest/userguide/access-entries.html,
// https://docs.aws.amazon.com/eks/latest/userguide/pod-identities.html).
import {
  DescribeAccessEntryCommand,
  DescribeClusterCommand,
  type DescribeClusterCommandOutput,
  DescribePodIdentityAssociationCommand,
  type EKSClient,
  ListAccessEntriesCommand,
  ListClustersCommand,
  ListPodIdentityAssociationsCommand,
} from '@aws-sdk/client-eks';
import type { AccessEntry } from '../../core/facts/aws.js';
import type { EndpointAccess, PodIdentityAssociation } from '../../core/facts/cluster.js';
import { tagMapOf, tagValue } from '../../core/selectors/tag-map.js';
import { mapLimited } from '../../shared/concurrency.js';
import { toSourceUnavailable } from './aws-errors.js';
import { collectPages } from './paginate.js';

export const eksReaderActions = [
  'eks:ListClusters',
  'eks:DescribeCluster',
  'eks:ListAccessEntries',
  'eks:DescribeAccessEntry',
  'eks:ListPodIdentityAssociations',
  'eks:DescribePodIdentityAssociation',
] as const;

/** Bounds parallel Describe* calls per list (EKS publishes no TPS). */
const DESCRIBE_CONCURRENCY = 5;

/** What the scanner needs from DescribeCluster, in core-friendly shape. */
export interface EksCluster {
  readonly name: string;
  readonly arn?: string;
  readonly accountId?: string;
  /** `ACTIVE`, `CREATING`, … Endpoint and CA exist only once ACTIVE. */
  readonly status?: string;
  readonly kubernetesVersion?: string;
  readonly endpoint?: string;
  /** PEM of the cluster CA (decoded from `certificateAuthority.data`). */
  readonly caPem?: string;
  readonly vpcId?: string;
  readonly authenticationMode?: string;
  readonly endpointAccess: EndpointAccess;
  readonly tags: Readonly<Record<string, string>>;
}

/** `{ team: 'x' }` matches clusters tagged team=x; the value `*` matches any value. */
export type ClusterTagFilter = Readonly<Record<string, string>>;

export interface EksReader {
  /** Cluster names in the client's region, optionally only those whose tags match. */
  listClusters(tagFilter?: ClusterTagFilter): Promise<string[]>;
  /** DescribeCluster, called once per cluster per reader. */
  describeCluster(name: string): Promise<EksCluster>;
  listAccessEntries(cluster: string): Promise<AccessEntry[]>;
  /** The access entry of exactly this principal ARN; undefined when the cluster has none. */
  describeAccessEntry(cluster: string, principalArn: string): Promise<AccessEntry | undefined>;
  listPodIdentityAssociations(
    cluster: string,
    filter?: { readonly namespace?: string; readonly serviceAccount?: string }
  ): Promise<PodIdentityAssociation[]>;
}

/** Own keys only: a filter key `constructor` must not match through Object.prototype. */
export function matchesTags(tags: Readonly<Record<string, string>>, filter: ClusterTagFilter) {
  return Object.entries(filter).every(([key, value]) => {
    const actual = tagValue(tags, key);
    return actual !== undefined && (value === '*' || actual === value);
  });
}

function accountOf(arn: string | undefined): string | undefined {
  const account = arn?.split(':')[4];
  return account === undefined || account === '' ? undefined : account;
}

export function createEksReader(deps: { readonly eks: EKSClient }): EksReader {
  const { eks } = deps;
  const described = new Map<string, Promise<EksCluster>>();

  async function describe(name: string): Promise<EksCluster> {
    let response: DescribeClusterCommandOutput;
    try {
      response = await eks.send(new DescribeClusterCommand({ name }));
    } catch (error) {
      throw toSourceUnavailable(`eks:DescribeCluster ${name}`, error);
    }
    const cluster = response.cluster ?? {};
    const vpc = cluster.resourcesVpcConfig;
    const caData = cluster.certificateAuthority?.data;
    const accountId = accountOf(cluster.arn);
    return {
      name: cluster.name ?? name,
      ...(cluster.arn ? { arn: cluster.arn } : {}),
      ...(accountId ? { accountId } : {}),
      ...(cluster.status ? { status: cluster.status } : {}),
      ...(cluster.version ? { kubernetesVersion: cluster.version } : {}),
      ...(cluster.endpoint ? { endpoint: cluster.endpoint } : {}),
      ...(caData ? { caPem: Buffer.from(caData, 'base64').toString('utf8') } : {}),
      ...(vpc?.vpcId ? { vpcId: vpc.vpcId } : {}),
      ...(cluster.accessConfig?.authenticationMode
        ? { authenticationMode: cluster.accessConfig.authenticationMode }
        : {}),
      endpointAccess: {
        ...(vpc?.endpointPublicAccess === undefined
          ? {}
          : { publicAccess: vpc.endpointPublicAccess }),
        ...(vpc?.endpointPrivateAccess === undefined
          ? {}
          : { privateAccess: vpc.endpointPrivateAccess }),
        ...(vpc?.publicAccessCidrs ? { publicAccessCidrs: vpc.publicAccessCidrs } : {}),
      },
      tags: tagMapOf(Object.entries(cluster.tags ?? {})),
    };
  }

  async function describeEntry(
    cluster: string,
    principalArn: string
  ): Promise<AccessEntry | undefined> {
    try {
      const { accessEntry } = await eks.send(
        new DescribeAccessEntryCommand({ clusterName: cluster, principalArn })
      );
      return {
        principalArn: accessEntry?.principalArn ?? principalArn,
        ...(accessEntry?.type ? { type: accessEntry.type } : {}),
        kubernetesGroups: accessEntry?.kubernetesGroups ?? [],
      };
    } catch (error) {
      if ((error as { name?: string } | undefined)?.name === 'ResourceNotFoundException') {
        return undefined;
      }
      throw toSourceUnavailable(`eks:DescribeAccessEntry ${cluster} ${principalArn}`, error);
    }
  }

  const reader: EksReader = {
    async listClusters(tagFilter) {
      let names: string[];
      try {
        names = await collectPages(
          'eks:ListClusters',
          (nextToken) => eks.send(new ListClustersCommand(nextToken ? { nextToken } : {})),
          (page) => page.clusters,
          (page) => page.nextToken
        );
      } catch (error) {
        throw toSourceUnavailable('eks:ListClusters', error);
      }
      if (!tagFilter || Object.keys(tagFilter).length === 0) return names;
      const clusters = await mapLimited(names, DESCRIBE_CONCURRENCY, (name) =>
        reader.describeCluster(name)
      );
      return clusters.filter((cluster) => matchesTags(cluster.tags, tagFilter)).map((c) => c.name);
    },

    describeCluster(name) {
      let pending = described.get(name);
      if (!pending) {
        pending = describe(name);
        // A failure is not cached: a later caller may retry.
        pending.catch(() => described.delete(name));
        described.set(name, pending);
      }
      return pending;
    },

    async listAccessEntries(cluster) {
      let principals: string[];
      try {
        principals = await collectPages(
          `eks:ListAccessEntries ${cluster}`,
          (nextToken) =>
            eks.send(
              new ListAccessEntriesCommand({
                clusterName: cluster,
                ...(nextToken ? { nextToken } : {}),
              })
            ),
          (page) => page.accessEntries,
          (page) => page.nextToken
        );
      } catch (error) {
        throw toSourceUnavailable(`eks:ListAccessEntries ${cluster}`, error);
      }
      const entries = await mapLimited(principals, DESCRIBE_CONCURRENCY, (principalArn) =>
        describeEntry(cluster, principalArn)
      );
      // Listed a moment ago and deleted since: the cluster no longer has it, so it is left out
      // (kept with no type, it would fail checks on an entry that does not exist).
      return entries.filter((entry): entry is AccessEntry => entry !== undefined);
    },

    describeAccessEntry: describeEntry,

    async listPodIdentityAssociations(cluster, filter = {}) {
      let ids: string[];
      try {
        const input = {
          clusterName: cluster,
          ...(filter.namespace ? { namespace: filter.namespace } : {}),
          ...(filter.serviceAccount ? { serviceAccount: filter.serviceAccount } : {}),
        };
        const summaries = await collectPages(
          `eks:ListPodIdentityAssociations ${cluster}`,
          (nextToken) =>
            eks.send(
              new ListPodIdentityAssociationsCommand({
                ...input,
                ...(nextToken ? { nextToken } : {}),
              })
            ),
          (page) => page.associations,
          (page) => page.nextToken
        );
        ids = summaries.flatMap((summary) =>
          summary.associationId ? [summary.associationId] : []
        );
      } catch (error) {
        throw toSourceUnavailable(`eks:ListPodIdentityAssociations ${cluster}`, error);
      }
      const associations = await mapLimited(ids, DESCRIBE_CONCURRENCY, async (associationId) => {
        try {
          const { association } = await eks.send(
            new DescribePodIdentityAssociationCommand({ clusterName: cluster, associationId })
          );
          return association;
        } catch (error) {
          throw toSourceUnavailable(
            `eks:DescribePodIdentityAssociation ${cluster} ${associationId}`,
            error
          );
        }
      });
      return associations.flatMap((association) =>
        association?.namespace && association.serviceAccount && association.roleArn
          ? [
              {
                namespace: association.namespace,
                serviceAccount: association.serviceAccount,
                roleArn: association.roleArn,
                ...(association.targetRoleArn ? { targetRoleArn: association.targetRoleArn } : {}),
                ...(association.disableSessionTags === undefined
                  ? {}
                  : { disableSessionTags: association.disableSessionTags }),
              },
            ]
          : []
      );
    },
  };
  return reader;
}
