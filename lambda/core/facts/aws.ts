// AWS facts as core types (adapters translate SDK shapes into these). Owned by the AWS-backed
// checks; extend here rather than leaking SDK types into checks.
import type { Slice } from './slice.js';

/** Facts about one cluster from the EKS API. */
export interface AwsClusterFacts {
  readonly kubernetesVersion?: string;
  readonly vpcId?: string;
  readonly authenticationMode?: string;
}

/** Facts resolved for one NodeClass (filled in by the AWS-backed checks issue). */
export interface AwsNodeClassFacts {
  readonly amis?: Slice<unknown>;
}
