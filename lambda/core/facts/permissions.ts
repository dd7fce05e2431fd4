// Results of simulating the Karpenter controller role's permissions (controller-* checks).
import type { Tags } from './aws.js';
import type { Slice, UnavailableReason } from './slice.js';

/** How the controller role was determined. */
export type ControllerRoleSource = 'override' | 'irsa' | 'pod-identity';

interface ControllerRoleEvidence {
  /** What the scanner looked at, in order (shown in `controller-role-found` evidence). */
  readonly lookedAt: readonly string[];
  /** Precedence decisions and other remarks (e.g. "IRSA wins over Pod Identity"). */
  readonly notes: readonly string[];
}

export interface ControllerRoleFound extends ControllerRoleEvidence {
  readonly status: 'found';
  readonly roleArn: string;
  readonly source: ControllerRoleSource;
  /**
   * Session tags the controller's sessions carry as `aws:PrincipalTag/*` (Pod Identity, unless the
   * association disables them). Values that cannot be known from outside (pod name/uid) are absent.
   */
  readonly sessionTags: Tags;
}

export interface ControllerRoleNotFound extends ControllerRoleEvidence {
  readonly status: 'not-found';
}

/** The cluster state needed to find the role could not be read. */
export interface ControllerRoleUnavailable extends ControllerRoleEvidence {
  readonly status: 'unavailable';
  readonly reason: UnavailableReason;
  readonly message: string;
}

export type ControllerRoleResolution =
  | ControllerRoleFound
  | ControllerRoleNotFound
  | ControllerRoleUnavailable;

/** Which controller-* check a simulation belongs to. */
export type PermissionGroup =
  | 'launch'
  | 'pass-node-role'
  | 'manage-instance-profile'
  | 'discover'
  | 'spot-service-linked-role'
  | 'ebs-kms-key';

/** Which Karpenter request a simulation stands for; selects the remediation statement. */
export type SimulationKind =
  | 'create-launch-template'
  | 'create-fleet'
  | 'run-instances'
  | 'use-launch-template'
  | 'use-existing-resources'
  | 'pass-node-role'
  | 'manage-instance-profile'
  | 'list-instance-profiles'
  | 'describe-ec2'
  | 'read-ssm-parameters'
  | 'describe-cluster'
  | 'create-spot-service-linked-role'
  | 'use-ebs-kms-key';

/** A `ContextEntries` item of SimulatePrincipalPolicy. */
export interface ContextEntry {
  readonly key: string;
  readonly type: 'string' | 'stringList' | 'boolean';
  readonly values: readonly string[];
}

/** One SimulatePrincipalPolicy call: every action × every resource, under one request context. */
export interface SimulationRequest {
  /** Identical simulations (across NodeClasses) share this key and are simulated once. */
  readonly key: string;
  readonly kind: SimulationKind;
  readonly group: PermissionGroup;
  readonly principalArn: string;
  readonly actions: readonly string[];
  readonly resourceArns: readonly string[];
  readonly context: readonly ContextEntry[];
  /**
   * The context lists every tag the resources have (Karpenter's own launch templates and instance
   * profiles, resources being created, existing resources whose tags were read): a resource-tag
   * key it lacks is absent at launch too.
   */
  readonly resourceTagsKnown?: boolean;
}

export type SimulationDecision = 'allowed' | 'implicitDeny' | 'explicitDeny';

export interface MatchedStatement {
  readonly sourcePolicyId?: string;
  readonly sourcePolicyType?: string;
}

/** The simulator's verdict for one action on one resource. */
export interface SimulationResult {
  readonly action: string;
  readonly resource: string;
  readonly decision: SimulationDecision;
  /** `OrganizationsDecisionDetail.AllowedByOrganizations`; false means an SCP denied. */
  readonly allowedByOrganizations?: boolean;
  /** `PermissionsBoundaryDecisionDetail.AllowedByPermissionsBoundary`. */
  readonly allowedByPermissionsBoundary?: boolean;
  readonly matchedStatements: readonly MatchedStatement[];
  /** Condition keys the policies use that the request context did not supply. */
  readonly missingContextValues: readonly string[];
}

export interface SimulationOutcome {
  readonly request: SimulationRequest;
  readonly results: Slice<readonly SimulationResult[]>;
}

/** A simulation that could not be built (its inputs are unknown), so its check cannot pass. */
export interface SimulationGap {
  readonly group: PermissionGroup;
  readonly reason: UnavailableReason;
  readonly message: string;
}

/** Result of one opt-in EC2 DryRun call made with an assumed role. */
export interface DryRunOutcome {
  readonly operation: 'RunInstances' | 'CreateFleet';
  /** `allowed` = DryRunOperation (HTTP 412); `rejected` = any other EC2 error code. */
  readonly outcome: 'allowed' | 'unauthorized' | 'rejected' | 'skipped' | 'unavailable';
  readonly code?: string;
  readonly message: string;
  /** `sts:DecodeAuthorizationMessage` output for UnauthorizedOperation, when permitted. */
  readonly decodedMessage?: string;
}

/** A policy as read, with the name IAM reports as `SourcePolicyId`. */
export interface NamedPolicy {
  readonly name: string;
  readonly document: string;
}

/** The identity policies (inline, then attached) and the permissions boundary of a role. */
export interface ReadPolicies {
  readonly identity: readonly NamedPolicy[];
  readonly boundary?: NamedPolicy;
}

/**
 * What a NodeClass' simulations stood on besides the controller role's own policies and the class'
 * resolved resources (policy documents given to the scan, wildcard resource ARNs): said in the
 * evidence of the checks it concerns.
 */
export interface PermissionNote {
  /** The check group it concerns; every group when absent. */
  readonly group?: PermissionGroup;
  readonly message: string;
}

/** Permission facts for one NodeClass. */
export interface PermissionFacts {
  readonly controllerRole: ControllerRoleResolution;
  /**
   * The controller role's policies as the scan read them (shared by the role's NodeClasses), to
   * tell which missing context keys can change a verdict. Absent when they could not be read.
   */
  readonly controllerPolicies?: ReadPolicies;
  readonly simulations: readonly SimulationOutcome[];
  readonly gaps: readonly SimulationGap[];
  /** Present only when DryRun mode is enabled. */
  readonly dryRun?: readonly DryRunOutcome[];
  /** Present only when the simulations stood on something the findings must say. */
  readonly notes?: readonly PermissionNote[];
  /**
   * Whether the account has EC2 Spot's service-linked role (`AWSServiceRoleForEC2Spot`, IAM
   * GetRole), on the NodeClasses of NodePools that allow Spot only. When it is absent, they also
   * carry the `create-spot-service-linked-role` simulation.
   */
  readonly spotServiceLinkedRole?: Slice<boolean>;
}
