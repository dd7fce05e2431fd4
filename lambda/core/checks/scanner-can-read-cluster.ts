import type { FindingDraft } from '../check.js';
import { defineCheck, readFaultOf } from '../check.js';
import type { ClusterState, EndpointAccess } from '../facts/cluster.js';
import type { Slice } from '../facts/slice.js';
import type { ClusterContext } from '../inventory.js';
import type { ResourceRef } from '../model.js';
import { accessEntryCommand, scannerRbacYaml } from '../scanner-access.js';

function clusterRef(cluster: ClusterContext): ResourceRef {
  return { cluster: cluster.name, kind: 'Cluster', name: cluster.name };
}

function rbacFix(): string {
  return `Apply this ClusterRole and binding (kubectl apply -f -):\n${scannerRbacYaml()}`;
}

function accessFix(cluster: ClusterContext): string {
  return [
    'Give the scanner an EKS access entry mapped to a read-only group, then bind that group:',
    accessEntryCommand({
      cluster: cluster.name,
      ...(cluster.region ? { region: cluster.region } : {}),
    }),
    rbacFix(),
    'In CONFIG_MAP authentication mode, map the scanner role to the group "nodeclass-scanner" in aws-auth instead of the access entry.',
  ].join('\n');
}

/** Why a network failure may be expected: the endpoint is not reachable from where we run. */
function networkHint(access: EndpointAccess | undefined): string {
  if (access?.publicAccess === false) {
    return ' The endpoint is private only: the scanner (Lambda) needs VPC access — run it in the cluster VPC (or a peered one) with security-group access to the endpoint on 443.';
  }
  const cidrs = access?.publicAccessCidrs?.filter((cidr) => cidr !== '0.0.0.0/0') ?? [];
  if (cidrs.length > 0) {
    return ` Public access is limited to ${cidrs.join(', ')}: the scanner must egress from one of these, or run in the cluster VPC.`;
  }
  return '';
}

function where(state: ClusterState, cluster: ClusterContext): string {
  return state.endpoint ?? `cluster ${cluster.name}`;
}

function readFinding(cluster: ClusterContext, state: ClusterState): FindingDraft {
  const resource = clusterRef(cluster);
  const read = state.read;
  const evidence = {
    endpoint: state.endpoint,
    ...(state.readFailure ? { failure: state.readFailure } : {}),
    ...(state.endpointAccess ? { endpointAccess: state.endpointAccess } : {}),
  };
  if (read.status === 'ok') {
    return {
      status: 'pass',
      resource,
      message: `Listed ${read.value.nodeClassCount} EC2NodeClass(es) from ${where(state, cluster)}.`,
      evidence: { ...evidence, nodeClassCount: read.value.nodeClassCount },
    };
  }
  const base = { resource, evidence: { ...evidence, reason: read.reason, detail: read.message } };
  // The errors below are read faults: a denial (401, 403) is the verdict this check alerts on.
  const readFault = readFaultOf('EC2NodeClasses (Kubernetes API)', read);
  const failure = state.readFailure;
  if (read.reason === 'not-installed') {
    return {
      ...base,
      status: 'not-applicable',
      message: `Karpenter's v1 EC2NodeClass CRD is not served by ${where(state, cluster)}: ${read.message}`,
    };
  }
  if (failure?.httpStatus === 401) {
    return {
      ...base,
      status: 'fail',
      message: `${where(state, cluster)} rejected the scanner's token (HTTP 401): the scanner's IAM principal has no access entry (or aws-auth mapping) in ${cluster.name}.`,
      remediation: accessFix(cluster),
    };
  }
  if (failure?.httpStatus === 403) {
    return {
      ...base,
      status: 'fail',
      message: `${where(state, cluster)} forbade listing EC2NodeClasses (HTTP 403): the scanner is authenticated but lacks RBAC. ${read.message}`,
      remediation: rbacFix(),
    };
  }
  if (!failure && read.reason === 'access-denied') {
    // The EKS API itself refused (DescribeCluster): an IAM problem of the scanner's role.
    return {
      ...base,
      status: 'fail',
      message: `The scanner may not describe cluster ${cluster.name}: ${read.message}`,
      remediation:
        'Allow eks:DescribeCluster (and eks:ListAccessEntries, eks:DescribeAccessEntry, eks:ListPodIdentityAssociations, eks:DescribePodIdentityAssociation) for the scanner role on this cluster.',
    };
  }
  if (failure?.kind === 'tls') {
    return {
      ...base,
      status: 'error',
      readFault,
      message: `${read.message}.`,
      remediation:
        'Check that nothing intercepts TLS between the scanner and the cluster endpoint (proxy, VPC endpoint); the scanner trusts only the CA from DescribeCluster.',
    };
  }
  const unreachable =
    failure?.kind === 'timeout' ||
    failure?.kind === 'network' ||
    (!failure && (read.reason === 'timeout' || read.reason === 'unreachable'));
  if (unreachable) {
    return {
      ...base,
      status: 'error',
      readFault,
      message: `Could not reach ${where(state, cluster)}: ${read.message}.${networkHint(state.endpointAccess)}`,
      remediation:
        'Make the cluster endpoint reachable from the scanner: a private endpoint needs the Lambda in the cluster VPC; a restricted public endpoint needs the scanner egress IP in publicAccessCidrs.',
    };
  }
  return {
    ...base,
    status: 'error',
    readFault,
    message: `Could not list EC2NodeClasses from ${where(state, cluster)}: ${read.message}`,
  };
}

/** Extra findings for the other objects the scanner reads (NodePools, controller). */
function partialFinding(
  cluster: ClusterContext,
  what: 'nodepools' | 'controller',
  slice: Slice<unknown> | undefined
): FindingDraft[] {
  if (!slice || slice.status === 'ok') return [];
  const label =
    what === 'nodepools' ? 'NodePools' : 'the Karpenter controller Deployment or ServiceAccount';
  const denied = slice.reason === 'access-denied';
  return [
    {
      status: denied ? 'fail' : 'error',
      resource: clusterRef(cluster),
      discriminator: what,
      message: `Could not read ${label} in ${cluster.name}: ${slice.message}`,
      ...(denied ? { remediation: rbacFix() } : {}),
      evidence: { reason: slice.reason, detail: slice.message },
      ...(denied ? {} : { readFault: readFaultOf(label, slice) }),
    },
  ];
}

/**
 * Karpenter's CRDs that could not be read: admission falls back to the built-in rules, so this
 * informs (a `notice`), with the RBAC that lets the scanner read them when RBAC was the cause.
 */
function crdsFinding(cluster: ClusterContext): FindingDraft[] {
  const crds = cluster.crds;
  // A 404 alone is no advice: the API server does not serve the CRD object itself.
  if (crds?.unavailable === undefined || (!crds.denied && /HTTP 404/.test(crds.unavailable))) {
    return [];
  }
  return [
    {
      status: 'notice',
      resource: clusterRef(cluster),
      discriminator: 'crds',
      message: `Admission in ${cluster.name} is checked with the scanner's built-in rules, not the installed CRDs: ${crds.unavailable}.`,
      ...(crds.denied ? { remediation: rbacFix() } : {}),
      evidence: { crds: crds.denied ? 'access-denied' : 'unavailable', detail: crds.unavailable },
    },
  ];
}

/** The scanner could list EC2NodeClasses (and NodePools, the controller, the CRDs) in every live cluster. */
export const scannerCanReadCluster = defineCheck({
  id: 'scanner-can-read-cluster',
  title: 'The scanner can read Karpenter objects in the cluster',
  group: 'cluster',
  severity: 'high',
  inputs: ['cluster'],
  scope: ['Cluster'],
  rationale:
    "Without read access to EC2NodeClasses, NodePools and Karpenter's controller, the scanner cannot see the cluster's real objects, status conditions, Karpenter version or controller role. The cluster-state and permission checks then cannot run, and their problems go unreported.",
  remediation:
    'Give the scanner an EKS access entry mapped to a group bound to a read-only ClusterRole (get/list/watch on ec2nodeclasses, nodepools, deployments, serviceaccounts; get on the two Karpenter CRDs), and network reach to the cluster endpoint.',
  references: [
    'https://docs.aws.amazon.com/eks/latest/userguide/creating-access-entries.html',
    'https://docs.aws.amazon.com/eks/latest/userguide/access-policy-permissions.html',
  ],
  material: ['reason', 'failure'],
  evaluate: (inventory) =>
    inventory.clusters
      .filter((cluster) => cluster.name !== '')
      .flatMap((cluster): FindingDraft[] => {
        const state = cluster.state;
        if (!state) {
          return [
            {
              status: 'error',
              resource: clusterRef(cluster),
              message: `Karpenter's state in ${cluster.name} was not collected.`,
              readFault: readFaultOf("Karpenter's cluster state", undefined),
            },
          ];
        }
        const read = readFinding(cluster, state);
        if (read.status !== 'pass') return [read];
        return [
          read,
          ...partialFinding(cluster, 'nodepools', state.nodePools),
          ...partialFinding(cluster, 'controller', state.controller),
          ...crdsFinding(cluster),
        ];
      }),
});
