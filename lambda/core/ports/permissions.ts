// Ports the permission enricher talks through; implemented by the live IAM/EC2 adapters and by the
// offline world-file adapter.
import type { Role, Tags } from '../facts/aws.js';
import type { DryRunOutcome, SimulationRequest, SimulationResult } from '../facts/permissions.js';
import type { RolePolicySet } from '../iam/simulation-cache.js';

export interface PolicySimulatorPort {
  /**
   * Simulates every action on every resource of the request for its principal and context, all
   * pages. Throws `SourceUnavailableError` (reason `throttled`, `access-denied`, …) when it cannot.
   */
  simulate(request: SimulationRequest): Promise<readonly SimulationResult[]>;
}

/** Reads what a principal's own policies are, to learn which context values they compare. */
export interface RolePolicyPort {
  /**
   * The JSON of every identity policy of the role (inline and attached, default versions) and of
   * its permissions boundary. Throws when any of them cannot be read.
   */
  documents(roleArn: string): Promise<readonly string[]>;
  /**
   * The same documents with the boundary apart (what a cached verdict is keyed on). Optional: a
   * reader without it gets no cached verdicts. `known`: the role as this scan already read it
   * (GetRole + ListAttachedRolePolicies, when it is also a node role), so it is not read twice.
   */
  policySet?(roleArn: string, known?: Role): Promise<RolePolicySet>;
  /**
   * Whether a role of that name exists in the account (IAM GetRole; NoSuchEntity → false). Throws
   * when it cannot tell. Optional: without it, the Spot service-linked role is unknown.
   */
  roleExists?(roleName: string): Promise<boolean>;
}

/** What an EC2 DryRun of Karpenter's launch needs for one NodeClass. */
export interface DryRunLaunch {
  readonly nodeClassName: string;
  readonly imageId: string;
  readonly architecture?: string;
  readonly subnetId: string;
  readonly securityGroupIds: readonly string[];
  /** Bare instance profile name (spec.instanceProfile, or status.instanceProfile in role mode). */
  readonly instanceProfile: string;
  readonly tags: Tags;
}

export interface DryRunPort {
  /** DryRun RunInstances and CreateFleet; never throws for an EC2 verdict, only returns it. */
  probe(launch: DryRunLaunch): Promise<readonly DryRunOutcome[]>;
}
