// Known Karpenter defects by version (`#NNNN`: issues and pull requests of
// https://github.com/aws/karpenter-provider-aws). A defect applies when the running version is
// affected AND the NodeClass has what triggers it.
import { isIamPathOrArn } from './iam/arns.js';
import type { ClusterContext } from './inventory.js';
import type { Severity } from './model.js';
import { IMDS_IPV6_UNSUPPORTED_REGIONS } from './region.js';
import type { EC2NodeClass } from './schema.js';
import {
  compareVersions,
  isAtLeast,
  type KarpenterVersion,
  parseKarpenterVersion,
} from './version.js';

export interface KarpenterDefect {
  readonly id: string;
  readonly title: string;
  /** First affected release. */
  readonly introduced: string;
  /**
   * Releases with the fix: the last one is the mainline fix (every later release is fixed), the
   * others are backports that fix only their own minor line. Empty: no release has a fix yet.
   */
  readonly fixedIn: readonly string[];
  readonly severity: Severity;
  readonly references: readonly string[];
  /**
   * `cluster`: the defect is about the controller, whatever the NodeClass (reported once per
   * cluster and version, not once per NodeClass); `nodeclass`: it depends on the NodeClass.
   */
  readonly scope: 'cluster' | 'nodeclass';
  /**
   * Expected behaviour that is easily mistaken for a failure (nothing to fix): reported as a
   * `notice`, which informs without failing, alerting or reminding.
   */
  readonly notice?: true;
  /** Whether this NodeClass (in this cluster) has what triggers the defect. */
  appliesTo(nodeClass: EC2NodeClass, cluster: ClusterContext): boolean;
  /** What goes wrong, for this NodeClass and version. */
  describe(version: KarpenterVersion): string;
  readonly remediation: string;
}

function version(literal: string): KarpenterVersion {
  const parsed = parseKarpenterVersion(literal);
  if (!parsed) throw new RangeError(`invalid version literal ${literal}`);
  return parsed;
}

function sameLine(a: KarpenterVersion, b: KarpenterVersion): boolean {
  return a.major === b.major && a.minor === b.minor;
}

/**
 * True when `running` contains a change released in `releases`: the last is the mainline release
 * (every later version has it), the others are backports that cover only their own minor line.
 */
function hasChange(running: KarpenterVersion, releases: readonly string[]): boolean {
  const fixes = releases.map(version);
  const mainline = fixes.at(-1);
  if (mainline && compareVersions(running, mainline) >= 0) return true;
  return fixes
    .slice(0, -1)
    .some((fix) => sameLine(fix, running) && compareVersions(running, fix) >= 0);
}

/** True when `running` has the defect: introduced, and neither the mainline fix nor its line's backport. */
export function isAffected(defect: KarpenterDefect, running: KarpenterVersion): boolean {
  return isAtLeast(running, defect.introduced) && !hasChange(running, defect.fixedIn);
}

/** Validation creates a real launch template instead of a CreateLaunchTemplate dry-run (#8408). */
const REAL_LAUNCH_TEMPLATE_IN = ['1.4.1', '1.5.5', '1.6.4', '1.7.0'] as const;

function hasSearchedAmiTerms(nodeClass: EC2NodeClass): boolean {
  return nodeClass.spec.amiSelectorTerms.some(
    (term) => term.name !== undefined || (term.tags !== undefined && term.id === undefined)
  );
}

function instanceProfileIsPathOrArn(nodeClass: EC2NodeClass): boolean {
  const profile = nodeClass.spec.instanceProfile;
  return profile !== undefined && isIamPathOrArn(profile);
}

function dryRunDisabled(cluster: ClusterContext): boolean {
  const state = cluster.state?.controller;
  return state?.status === 'ok' && state.value?.env?.DISABLE_DRY_RUN === 'true';
}

export const KARPENTER_DEFECTS: readonly KarpenterDefect[] = [
  {
    id: 'pending-ami-selected',
    scope: 'nodeclass',
    title: 'AMI selectors can pick an image that is still pending',
    introduced: '0.0.0',
    fixedIn: ['1.2.2', '1.3.0'],
    severity: 'medium',
    references: ['#7652', '#7672', '#7685'],
    appliesTo: (nodeClass) => hasSearchedAmiTerms(nodeClass),
    describe: (running) =>
      `Karpenter ${running.raw} does not filter DescribeImages by state=available: a name or tag selector picks a freshly registered, still-pending image (for example while Packer builds) and launches fail until it is available.`,
    remediation: 'Upgrade Karpenter to 1.2.2 (1.2 line) or 1.3.0+; until then pin AMIs by id.',
  },
  {
    id: 'instance-profile-arn-silent',
    scope: 'nodeclass',
    title: 'An instance profile given as an ARN fails silently',
    introduced: '1.0.0',
    fixedIn: [],
    severity: 'medium',
    references: ['#8072', '#8312', '#9390'],
    appliesTo: (nodeClass) => instanceProfileIsPathOrArn(nodeClass),
    describe: (running) =>
      `Karpenter ${running.raw} reports InstanceProfileReady=True for an instance profile ARN and leaves ValidationSucceeded=Unknown; every launch fails with "Invalid IAM Instance Profile name" and nothing is logged. Only unreleased main (#9390) reports InstanceProfileNotFound.`,
    remediation:
      'Set spec.instanceProfile to the bare profile name (see instance-profile-is-name).',
  },
  {
    id: 'imds-ipv6-iso-region',
    scope: 'nodeclass',
    title: 'httpProtocolIPv6 is sent in isolated regions',
    introduced: '0.0.0',
    fixedIn: ['1.7.0'],
    severity: 'medium',
    references: ['#7081', '#7667', '#8404'],
    appliesTo: (_nodeClass, cluster) =>
      cluster.region !== undefined && IMDS_IPV6_UNSUPPORTED_REGIONS.includes(cluster.region),
    describe: (running) =>
      `Karpenter ${running.raw} sends HttpProtocolIpv6 (the CRD default fills it in) and EC2 rejects launches in this region (see imds-ipv6-supported).`,
    remediation: 'Upgrade Karpenter to 1.7.0+, or patch the CRD default as #8404 describes.',
  },
  {
    id: 'dry-run-without-subnet',
    scope: 'cluster',
    title: 'Validation dry-runs RunInstances without a subnet',
    introduced: '1.3.0',
    fixedIn: ['1.3.1'],
    severity: 'medium',
    references: ['#7834', '#7844'],
    appliesTo: (_nodeClass, cluster) => !dryRunDisabled(cluster),
    describe: (running) =>
      `Karpenter ${running.raw} sends the RunInstances validation dry-run without subnet or security groups: in accounts without a default VPC it fails ("VPCIdNotSpecified"/"MissingInput") and the NodeClass never becomes Ready.`,
    remediation: 'Upgrade Karpenter to 1.3.1 or later.',
  },
  {
    id: 'dry-run-fixed-instance-types',
    scope: 'cluster',
    title: 'Validation dry-runs use m5.large/m6g.large regardless of NodePools',
    introduced: '1.3.0',
    fixedIn: ['1.5.0'],
    severity: 'medium',
    references: ['#7928', '#7939'],
    appliesTo: (_nodeClass, cluster) => !dryRunDisabled(cluster),
    describe: (running) =>
      `Karpenter ${running.raw} validates with m5.large/m6g.large: IAM policies that restrict instance types, or a GPU AMI whose snapshot is larger than the root volume, fail validation although real launches would work.`,
    remediation: 'Upgrade Karpenter to 1.5.0 or later.',
  },
  {
    id: 'validation-rate-limited',
    scope: 'cluster',
    title: 'RequestLimitExceeded fails validation',
    introduced: '1.3.0',
    fixedIn: ['1.4.0'],
    severity: 'medium',
    references: ['#7891', '#7892'],
    appliesTo: (_nodeClass, cluster) => !dryRunDisabled(cluster),
    describe: (running) =>
      `Karpenter ${running.raw} records EC2 throttling of its validation dry-runs as an authorization failure (*AuthCheckFailed) instead of retrying.`,
    remediation: 'Upgrade Karpenter to 1.4.0 or later.',
  },
  {
    id: 'dry-run-412-noise',
    scope: 'cluster',
    notice: true,
    title: 'Validation dry-runs show as HTTP 412 in API metrics',
    introduced: '1.3.0',
    fixedIn: [],
    severity: 'info',
    references: ['#8015', '#7624', '#8408'],
    appliesTo: (_nodeClass, cluster) => !dryRunDisabled(cluster),
    describe: (running) =>
      `Expected, not an error: Karpenter ${running.raw} validates each NodeClass with EC2 dry-runs (${hasChange(running, REAL_LAUNCH_TEMPLATE_IN) ? 'CreateFleet and RunInstances' : 'CreateLaunchTemplate, CreateFleet and RunInstances'}), which succeed as HTTP 412 DryRunOperation; they appear as code="412" in aws_sdk_go_request_attempt_duration_seconds.`,
    remediation:
      'Exclude code="412" on CreateFleet/RunInstances/CreateLaunchTemplate from error alerts; set settings.disableDryRun only if you accept losing the validation.',
  },
];

/** The defects of `running` that apply to this NodeClass. */
export function applicableDefects(
  nodeClass: EC2NodeClass,
  cluster: ClusterContext,
  running: KarpenterVersion
): KarpenterDefect[] {
  return KARPENTER_DEFECTS.filter(
    (defect) => isAffected(defect, running) && defect.appliesTo(nodeClass, cluster)
  );
}
