// Which Karpenter release's CRD rules the built-in admission rules (crd-rules.ts, crd-fields.ts,
// kubelet-config-valid) evaluate, and the release each versioned rule arrived in. Read from
// pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml and karpenter.sh_nodepools.yaml at every tag
// v1.0.0 … v1.14.1 of https://github.com/aws/karpenter-provider-aws (no patch release changed a
// rule of the v1 schemas; docs/admission-by-release.md has the table).
import { compareVersions, type KarpenterVersion, parseKarpenterVersion } from './version.js';

/** The newest Karpenter release the built-in rules were read from. */
export const NEWEST_KNOWN_RELEASE = '1.14.1';
/** The first release serving karpenter.k8s.aws/v1 and karpenter.sh/v1. */
const FIRST_V1_RELEASE = '1.0.0';

/**
 * Rules of Karpenter's development branch after the newest known release (`main`): they apply to a
 * version newer than NEWEST_KNOWN_RELEASE only, since the next release is cut from that branch.
 */
const AFTER_NEWEST_RELEASE = 'after-newest';

type Since = string;

/** The release each rule that did not exist in v1.0.0 arrived in (or stopped applying at). */
export const SINCE = {
  // Both kinds
  /**
   * `v1beta1` no longer served: v1.0.x served it beside `v1` (conversion webhook) for the
   * migration, v1.1.0's CRDs serve `v1` only.
   */
  v1beta1Unserved: '1.1.0',
  // EC2NodeClass
  /** `capacityReservationSelectorTerms` and its rules. */
  capacityReservationTerms: '1.3.0',
  /** Selector `id`/`name` exclusivity messages say "in a subnet selector term", not "in subnetSelectorTerms". */
  selectorMessagesReworded: '1.3.0',
  /** `amiSelectorTerms[].ssmParameter`, counted by the "expected at least one" rule. */
  amiSsmParameter: '1.4.0',
  /** `ebs.volumeInitializationRate` (100–300) and its "snapshotID must be set" rule. */
  volumeInitializationRate: '1.5.0',
  /** `instanceMatchCriteria` on capacity reservation terms (enum, counted by the term rules). */
  instanceMatchCriteria: '1.8.0',
  /** `ipPrefixCount` (minimum 0). */
  ipPrefixCount: '1.8.0',
  /** `Windows2025`: amiFamily enum, alias family, family/alias rule. */
  windows2025: '1.9.0',
  networkInterfaces: '1.11.0',
  placementGroupSelector: '1.11.0',
  connectionTracking: '1.13.0',
  cpuOptions: '1.13.0',
  /** `spec.kubelet` an open map validated by the controller, not the CRD (#9461). */
  kubeletOpen: AFTER_NEWEST_RELEASE,
  // NodePool
  /** nodeClassRef group/kind/name may not be empty. */
  nodeClassRefNotEmpty: '1.1.0',
  /** `expireAfter`/`consolidateAfter` patterns anchored (before: `^(…)+)|(Never)$`). */
  anchoredDurations: '1.4.0',
  /** `replicas` and the static-NodePool rules (limits.nodes only, no weight). */
  staticNodePools: '1.8.0',
  /** `budgets[].reasons` at most 50 items. */
  budgetReasonsMaxItems: '1.8.0',
  /** Operators Gte/Lte; the `kubernetes.io`/`k8s.io` label-domain restriction removed. */
  boundOperatorsGteLte: '1.9.0',
  kubernetesLabelDomainsOpen: '1.9.0',
  /** `budgets[].reasons` a set (`x-kubernetes-list-type: set`): duplicates rejected. */
  budgetReasonsUnique: '1.13.0',
  /** consolidationPolicy `Balanced`. */
  balancedConsolidation: '1.14.0',
} as const satisfies Readonly<Record<string, Since>>;

/** The `karpenter.k8s.aws/*` labels a NodePool may use, with the release that allowed each. */
const KARPENTER_AWS_LABELS_SINCE: Readonly<Record<string, Since>> = {
  'instance-encryption-in-transit-supported': FIRST_V1_RELEASE,
  'instance-category': FIRST_V1_RELEASE,
  'instance-hypervisor': FIRST_V1_RELEASE,
  'instance-family': FIRST_V1_RELEASE,
  'instance-generation': FIRST_V1_RELEASE,
  'instance-local-nvme': FIRST_V1_RELEASE,
  'instance-size': FIRST_V1_RELEASE,
  'instance-cpu': FIRST_V1_RELEASE,
  'instance-cpu-manufacturer': FIRST_V1_RELEASE,
  'instance-memory': FIRST_V1_RELEASE,
  'instance-ebs-bandwidth': FIRST_V1_RELEASE,
  'instance-network-bandwidth': FIRST_V1_RELEASE,
  'instance-gpu-name': FIRST_V1_RELEASE,
  'instance-gpu-manufacturer': FIRST_V1_RELEASE,
  'instance-gpu-count': FIRST_V1_RELEASE,
  'instance-gpu-memory': FIRST_V1_RELEASE,
  'instance-accelerator-name': FIRST_V1_RELEASE,
  'instance-accelerator-manufacturer': FIRST_V1_RELEASE,
  'instance-accelerator-count': FIRST_V1_RELEASE,
  ec2nodeclass: '1.1.0',
  'instance-cpu-sustained-clock-speed-mhz': '1.1.0',
  'capacity-reservation-id': '1.3.0',
  'capacity-reservation-type': '1.6.0',
  'instance-capability-flex': '1.7.0',
  'instance-tenancy': '1.9.0',
  'capacity-reservation-interruptible': '1.10.0',
  'placement-group-id': '1.11.0',
  'placement-group-partition': '1.11.0',
  'nitro-sandbox': AFTER_NEWEST_RELEASE,
};

/** Why these rules: the version was given, unknown, newer than known, or older than v1. */
export type RuleBasis = 'given' | 'unknown' | 'newer' | 'older';

/** The rule set one object is checked with. */
export interface CrdRuleRelease {
  /** The version whose rules apply (v1.0.0 for versions before it, v1.14.1 when unknown). */
  readonly version: KarpenterVersion;
  /** The version the scan gave for the object, when it gave one. */
  readonly requested?: KarpenterVersion;
  readonly basis: RuleBasis;
  /** Whether the rule arriving in `since` applies. */
  has(since: Since): boolean;
  /** False only where spec.kubelet is open and Karpenter's controller validates it instead. */
  readonly kubeletInCrd: boolean;
  /** "Karpenter v1.8.3", or "Karpenter's main branch after v1.14.1" for newer versions. */
  readonly label: string;
  /** One sentence for a finding: which rules were used and why. */
  readonly note: string;
}

const NEWEST = parseKarpenterVersion(NEWEST_KNOWN_RELEASE) as KarpenterVersion;
const FIRST_V1 = parseKarpenterVersion(FIRST_V1_RELEASE) as KarpenterVersion;

function withV(raw: string): string {
  return raw.startsWith('v') ? raw : `v${raw}`;
}

/**
 * The rule set for a Karpenter version: that release's rules; the newest known release's when the
 * version is unknown (never an unreleased branch); for a version newer than every known release,
 * the rules of Karpenter's main branch after it (kubelet open, validated by the controller), since
 * the next release is cut from that branch; for a version before v1.0 (no v1 API), v1.0.0's.
 */
export function crdRuleRelease(requested: KarpenterVersion | undefined): CrdRuleRelease {
  let version: KarpenterVersion;
  let basis: RuleBasis;
  if (requested === undefined) {
    version = NEWEST;
    basis = 'unknown';
  } else if (compareVersions(requested, NEWEST) > 0) {
    version = requested;
    basis = 'newer';
  } else if (compareVersions(requested, FIRST_V1) < 0) {
    version = FIRST_V1;
    basis = 'older';
  } else {
    version = requested;
    basis = 'given';
  }
  const has = (since: Since): boolean => {
    if (since === AFTER_NEWEST_RELEASE) return basis === 'newer';
    const floor = parseKarpenterVersion(since);
    if (floor === undefined) throw new RangeError(`invalid release ${since}`);
    return compareVersions(version, floor) >= 0;
  };
  const newest = withV(NEWEST_KNOWN_RELEASE);
  const label =
    basis === 'newer'
      ? `Karpenter's main branch after ${newest}`
      : `Karpenter ${withV(version.raw)}`;
  const notes: Record<RuleBasis, string> = {
    given: `built-in rules of Karpenter ${withV(version.raw)}'s CRDs (no CRD at hand)`,
    unknown: `Karpenter version unknown: built-in rules of the newest release, ${newest} (no CRD at hand; pass --karpenter-version or annotate the object with nodeclass-scanner/karpenter-version)`,
    newer: `Karpenter ${withV(requested?.raw ?? '')} is newer than the newest release the scanner knows (${newest}): built-in rules of Karpenter's main branch after ${newest}, which the next release is cut from (no CRD at hand)`,
    older: `Karpenter ${withV(requested?.raw ?? '')} predates the v1 API: built-in rules of ${withV(FIRST_V1_RELEASE)}, the first release serving it (no CRD at hand)`,
  };
  return {
    version,
    ...(requested === undefined ? {} : { requested }),
    basis,
    has,
    kubeletInCrd: !has(SINCE.kubeletOpen),
    label,
    note: notes[basis],
  };
}

/** The `karpenter.k8s.aws/*` label keys a NodePool may use at this release. */
export function allowedKarpenterAwsLabels(release: CrdRuleRelease): string[] {
  return Object.entries(KARPENTER_AWS_LABELS_SINCE)
    .filter(([, since]) => release.has(since))
    .map(([name]) => `karpenter.k8s.aws/${name}`);
}
