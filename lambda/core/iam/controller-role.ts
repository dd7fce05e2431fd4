// Finding Karpenter's controller role from outside the cluster (Karpenter uses the pod's default credential chain: https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/operator/operator.go).
import type { ControllerRoleResolution } from '../facts/permissions.js';
import type { ClusterContext } from '../inventory.js';

const IRSA_ANNOTATION = 'eks.amazonaws.com/role-arn';

/**
 * Session tags EKS Pod Identity attaches (EKS UG "pod-id-abac"). Pod name and uid differ per pod,
 * so they are not supplied; a policy that uses them is reported as missing context, not a pass.
 */
function podIdentitySessionTags(
  cluster: ClusterContext,
  namespace: string,
  serviceAccount: string
): Record<string, string> {
  const clusterArn = cluster.aws?.status === 'ok' ? cluster.aws.value.arn : undefined;
  return {
    ...(clusterArn === undefined ? {} : { 'eks-cluster-arn': clusterArn }),
    'eks-cluster-name': cluster.name,
    'kubernetes-namespace': namespace,
    'kubernetes-service-account': serviceAccount,
  };
}

/**
 * The role Karpenter's pods run as. Order: the user's per-cluster override; the IRSA annotation
 * (web identity precedes the container provider in the SDK credential chain, so it wins over Pod
 * Identity); the Pod Identity association (`targetRoleArn` when set, since that is the role the
 * chained session ends in).
 */
export function resolveControllerRole(
  cluster: ClusterContext,
  override?: string
): ControllerRoleResolution {
  if (override !== undefined) {
    return {
      status: 'found',
      roleArn: override,
      source: 'override',
      sessionTags: {},
      lookedAt: [`override for cluster "${cluster.name}" (--controller-role)`],
      notes: [
        'Pod Identity session tags are not supplied for an overridden role; policies using aws:PrincipalTag are reported as missing context.',
      ],
    };
  }
  const controllerSlice = cluster.state?.controller;
  if (controllerSlice === undefined) {
    return {
      status: 'unavailable',
      reason: 'unknown',
      message: `The Karpenter controller of cluster "${cluster.name}" was not read (no cluster state in this scan).`,
      lookedAt: ['Karpenter controller Deployment and ServiceAccount: not read'],
      notes: [],
    };
  }
  if (controllerSlice.status === 'unavailable') {
    return {
      status: 'unavailable',
      reason: controllerSlice.reason,
      message: `Reading the Karpenter controller failed: ${controllerSlice.message}`,
      lookedAt: [`Karpenter controller Deployment and ServiceAccount: ${controllerSlice.reason}`],
      notes: [],
    };
  }
  const controller = controllerSlice.value;
  if (controller === undefined) {
    return {
      status: 'not-found',
      lookedAt: ['Karpenter controller Deployment: not found in the cluster'],
      notes: [],
    };
  }
  const where = `${controller.namespace}/${controller.serviceAccount}`;
  const lookedAt = [
    `ServiceAccount ${where} annotation ${IRSA_ANNOTATION}: ${controller.irsaRoleArn ?? 'absent'}`,
  ];
  const associationsSlice = cluster.state?.podIdentityAssociations;
  const associations =
    associationsSlice?.status === 'ok'
      ? associationsSlice.value.filter(
          (association) =>
            association.namespace === controller.namespace &&
            association.serviceAccount === controller.serviceAccount
        )
      : [];
  if (associationsSlice === undefined) {
    lookedAt.push(`Pod Identity associations for ${where}: not read`);
  } else if (associationsSlice.status === 'unavailable') {
    lookedAt.push(
      `Pod Identity associations for ${where}: ${associationsSlice.reason} (${associationsSlice.message})`
    );
  } else {
    lookedAt.push(
      `Pod Identity associations for ${where}: ${associations.length === 0 ? 'none' : associations.map((a) => a.targetRoleArn ?? a.roleArn).join(', ')}`
    );
  }
  const association = associations[0];
  if (controller.irsaRoleArn !== undefined) {
    return {
      status: 'found',
      roleArn: controller.irsaRoleArn,
      source: 'irsa',
      sessionTags: {},
      lookedAt,
      notes:
        association === undefined
          ? []
          : [
              `IRSA wins over the Pod Identity association (${association.targetRoleArn ?? association.roleArn}): web identity comes first in the credential chain.`,
            ],
    };
  }
  if (association !== undefined) {
    const notes: string[] = [];
    if (association.targetRoleArn !== undefined) {
      notes.push(
        `targetRoleArn is set: the controller's session is chained from ${association.roleArn} into ${association.targetRoleArn}, which is simulated.`
      );
    }
    if (association.disableSessionTags === true) notes.push('Session tags are disabled.');
    return {
      status: 'found',
      roleArn: association.targetRoleArn ?? association.roleArn,
      source: 'pod-identity',
      sessionTags:
        association.disableSessionTags === true
          ? {}
          : podIdentitySessionTags(cluster, controller.namespace, controller.serviceAccount),
      lookedAt,
      notes,
    };
  }
  if (associationsSlice?.status === 'unavailable') {
    return {
      status: 'unavailable',
      reason: associationsSlice.reason,
      message: `No IRSA annotation, and Pod Identity associations could not be listed: ${associationsSlice.message}`,
      lookedAt,
      notes: [],
    };
  }
  return { status: 'not-found', lookedAt, notes: [] };
}
