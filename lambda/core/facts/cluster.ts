// Karpenter's in-cluster state, read through the Kubernetes API (cluster-state checks).
import type { Slice } from './slice.js';

export interface ClusterState {
  /** Whether the NodeClasses could be listed; `not-installed` when the CRD is absent. */
  readonly read: Slice<{ readonly nodeClassCount: number }>;
}
