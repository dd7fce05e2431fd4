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

export interface ClusterState {
  /**
   * Whether the NodeClasses could be listed. `unavailable` with reason `access-denied`,
   * `unreachable`, `timeout`, `invalid-response`…; `not-installed` when the CRD is absent (404).
   */
  readonly read: Slice<{ readonly nodeClassCount: number }>;
  /** Where the cluster was reached (for error messages). */
  readonly endpoint?: string;
  readonly controller?: Slice<KarpenterController | undefined>;
  readonly podIdentityAssociations?: Slice<readonly PodIdentityAssociation[]>;
}
