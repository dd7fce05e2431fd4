// Finds the Karpenter controller Deployment in any namespace (https://github.com/aws/karpenter-provider-aws/tree/v1.14.1/charts/karpenter): by the
// chart's labels first, then by image name, for its version, ServiceAccount and settings.
import type { KarpenterController } from '../../core/facts/cluster.js';
import type { KubeClient } from './kube-client.js';
import { KubeApiError } from './kube-errors.js';
import {
  type Container,
  type Deployment,
  DeploymentSchema,
  ServiceAccountSchema,
} from './schemas.js';

const KARPENTER_CHART_SELECTOR = 'app.kubernetes.io/name=karpenter';
const IRSA_ANNOTATION = 'eks.amazonaws.com/role-arn';
const DEPLOYMENTS = '/apis/apps/v1/deployments';
/** `public.ecr.aws/karpenter/controller`, mirrors such as `…/karpenter-controller`. */
const CONTROLLER_IMAGE = /(^|\/)karpenter[/-]controller$/;

/** Repository part of an image reference (no tag, no digest). */
function repositoryOf(image: string): string {
  const withoutDigest = image.split('@')[0] ?? image;
  const lastSlash = withoutDigest.lastIndexOf('/');
  const lastColon = withoutDigest.lastIndexOf(':');
  return lastColon > lastSlash ? withoutDigest.slice(0, lastColon) : withoutDigest;
}

/** The tag of an image reference (`1.7.0`), or undefined for digest-only or untagged images. */
function imageTag(image: string): string | undefined {
  const withoutDigest = image.split('@')[0] ?? image;
  const lastSlash = withoutDigest.lastIndexOf('/');
  const lastColon = withoutDigest.lastIndexOf(':');
  return lastColon > lastSlash ? withoutDigest.slice(lastColon + 1) : undefined;
}

function isControllerImage(image: string | undefined): boolean {
  return image !== undefined && CONTROLLER_IMAGE.test(repositoryOf(image));
}

function controllerContainer(deployment: Deployment): Container | undefined {
  const containers = deployment.spec.template.spec.containers;
  return (
    containers.find((container) => isControllerImage(container.image)) ??
    containers.find((container) => container.name === 'controller')
  );
}

function parseDeployments(items: readonly unknown[]): Deployment[] {
  return items.flatMap((item) => {
    const parsed = DeploymentSchema.safeParse(item);
    return parsed.success ? [parsed.data] : [];
  });
}

function envOf(container: Container): Record<string, string> {
  const env: Record<string, string> = {};
  for (const variable of container.env ?? []) {
    if (variable.value !== undefined) env[variable.name] = variable.value;
  }
  return env;
}

/** The controller Deployment as found, before its ServiceAccount is read. */
export interface KarpenterDeployment {
  readonly namespace: string;
  readonly deploymentName: string;
  readonly serviceAccount: string;
  readonly image?: string;
  readonly version?: string;
  readonly env: Readonly<Record<string, string>>;
}

function describe(deployment: Deployment, container: Container): KarpenterDeployment {
  const version = container.image ? imageTag(container.image) : undefined;
  return {
    namespace: deployment.metadata.namespace,
    deploymentName: deployment.metadata.name,
    serviceAccount: deployment.spec.template.spec.serviceAccountName ?? 'default',
    ...(container.image ? { image: container.image } : {}),
    ...(version ? { version } : {}),
    env: envOf(container),
  };
}

/**
 * Finds Karpenter's controller Deployment; undefined when there is none. With several (two
 * installs), the one whose `CLUSTER_NAME` is this cluster wins.
 */
export async function findKarpenterDeployment(
  kube: KubeClient,
  clusterName: string
): Promise<KarpenterDeployment | undefined> {
  const pick = (deployments: readonly Deployment[]) => {
    const candidates = deployments.flatMap((deployment) => {
      const container = controllerContainer(deployment);
      return container ? [describe(deployment, container)] : [];
    });
    return candidates.find((c) => c.env.CLUSTER_NAME === clusterName) ?? candidates[0];
  };
  const labelled = parseDeployments(
    await kube.list(DEPLOYMENTS, { labelSelector: KARPENTER_CHART_SELECTOR })
  );
  const byLabel = pick(labelled);
  if (byLabel) return byLabel;
  // Installed without the chart's labels (kustomize, renamed release): match the image.
  const all = parseDeployments(await kube.list(DEPLOYMENTS));
  return pick(
    all.filter((d) => d.spec.template.spec.containers.some((c) => isControllerImage(c.image)))
  );
}

/** The IRSA role on the controller's ServiceAccount; undefined when the SA or annotation is absent. */
export async function readIrsaRoleArn(
  kube: KubeClient,
  namespace: string,
  serviceAccount: string
): Promise<string | undefined> {
  const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/serviceaccounts/${encodeURIComponent(serviceAccount)}`;
  try {
    const account = await kube.get(path, ServiceAccountSchema);
    return account.metadata.annotations?.[IRSA_ANNOTATION];
  } catch (error) {
    if (error instanceof KubeApiError && error.httpStatus === 404) return undefined;
    throw error;
  }
}

export function toKarpenterController(
  deployment: KarpenterDeployment,
  irsaRoleArn: string | undefined
): KarpenterController {
  return {
    namespace: deployment.namespace,
    deploymentName: deployment.deploymentName,
    serviceAccount: deployment.serviceAccount,
    ...(deployment.version ? { version: deployment.version } : {}),
    ...(irsaRoleArn ? { irsaRoleArn } : {}),
    ...(deployment.env.CLUSTER_NAME ? { clusterNameEnv: deployment.env.CLUSTER_NAME } : {}),
    env: deployment.env,
  };
}
