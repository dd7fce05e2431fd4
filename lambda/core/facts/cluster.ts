// Karpenter's in-cluster state, read through the Kubernetes API (cluster-state checks).
import type { Slice } from './slice.js';

/** The Karpenter controller, as found in the cluster (Deployment + ServiceAccount). */
export interface KarpenterController {
  readonly namespace: string;
  readonly deploymentName?: string;
  readonly serviceAccount: string;
  /** Image tag of the controller container (`1.7.0`), when found. */
  readonly version?: string;
  /** `eks.amazonaws.com/role-arn` on the ServiceAccount (IRSA). */
  readonly irsaRoleArn?: string;
  /** `CLUSTER_NAME` env of the controller container (Karpenter's tag conditions use it). */
  readonly clusterNameEnv?: string;
  /** Other settings read from the controller's env (`DISABLE_DRY_RUN`, `ISOLATED_VPC`, …). */
  readonly env?: Readonly<Record<string, string>>;
}

/** EKS Pod Identity association for a ServiceAccount. */
export interface PodIdentityAssociation {
  readonly namespace: string;
  readonly serviceAccount: string;
  readonly roleArn: string;
  readonly targetRoleArn?: string;
  readonly disableSessionTags?: boolean;
}

/** How a Kubernetes read failed, so the remediation can be exact (401 vs 403, network vs TLS). */
export type KubeFailureKind = 'http' | 'network' | 'timeout' | 'tls' | 'malformed';

export interface KubeReadFailure {
  readonly kind: KubeFailureKind;
  /** HTTP status when the API server answered (`kind: 'http'`). */
  readonly httpStatus?: number;
  /** The API path that failed (`/apis/karpenter.k8s.aws/v1/ec2nodeclasses`). */
  readonly path: string;
}

/** `DescribeCluster` `resourcesVpcConfig` endpoint settings (private-only → needs VPC access). */
export interface EndpointAccess {
  readonly publicAccess?: boolean;
  readonly privateAccess?: boolean;
  readonly publicAccessCidrs?: readonly string[];
}

export interface ClusterState {
  /**
   * Whether the NodeClasses could be listed. `unavailable` with reason `access-denied`,
   * `unreachable`, `timeout`, `invalid-response`…; `not-installed` when the CRD is absent (404).
   */
  readonly read: Slice<{ readonly nodeClassCount: number }>;
  /** Where the cluster was reached (for error messages). */
  readonly endpoint?: string;
  readonly endpointAccess?: EndpointAccess;
  /** Set when `read` is unavailable and the failure came from the Kubernetes API. */
  readonly readFailure?: KubeReadFailure;
  /** Whether the NodePools could be listed (absent when not attempted). */
  readonly nodePools?: Slice<{ readonly nodePoolCount: number }>;
  readonly controller?: Slice<KarpenterController | undefined>;
  readonly podIdentityAssociations?: Slice<readonly PodIdentityAssociation[]>;
}
