// A finding as an AWS Security Finding Format (ASFF) record for Security Hub's BatchImportFindings.
// Pure: the account, region, partition and times are parameters. Required fields and limits:
// https://docs.aws.amazon.com/securityhub/latest/userguide/asff-required-attributes.html
// https://docs.aws.amazon.com/securityhub/1.0/APIReference/API_BatchImportFindings.html
import { clusterLabel } from './cluster-identity.js';
import type { FindingStatus, ResourceRef, Severity, Suppression } from './model.js';
import { originLabel } from './model.js';

const ASFF_SCHEMA_VERSION = '2018-10-08';
/** BatchImportFindings and BatchUpdateFindings take at most this many findings per call. */
export const ASFF_BATCH_LIMIT = 100;
/** Security Hub rejects a finding larger than 240 KB. */
export const ASFF_MAX_FINDING_BYTES = 240 * 1024;
/** Field limits of the ASFF reference. */
export const ASFF_LIMITS = {
  id: 512,
  generatorId: 512,
  title: 256,
  description: 1024,
  recommendationText: 512,
  productFieldKey: 128,
  productFieldValue: 2048,
  otherDetailValue: 1024,
} as const;

/** Namespace/category/classifier: configuration checks, in the only taxonomy category that fits. */
const ASFF_FINDING_TYPE =
  'Software and Configuration Checks/AWS Security Best Practices/Karpenter EC2NodeClass';

/** Where a check has no public reference: Karpenter's own NodeClass documentation. */
export const DEFAULT_REMEDIATION_URL = 'https://karpenter.sh/docs/concepts/nodeclasses/';

const PROVIDER_NAME = 'nodeclass-scanner';

type AsffSeverityLabel = 'INFORMATIONAL' | 'LOW' | 'MEDIUM' | 'HIGH' | 'CRITICAL';
export type AsffComplianceStatus = 'PASSED' | 'WARNING' | 'FAILED' | 'NOT_AVAILABLE';
export type AsffRecordState = 'ACTIVE' | 'ARCHIVED';

const SEVERITY_LABELS: Readonly<Record<Severity, AsffSeverityLabel>> = {
  critical: 'CRITICAL',
  high: 'HIGH',
  medium: 'MEDIUM',
  low: 'LOW',
  info: 'INFORMATIONAL',
};

/** Partitions Security Hub names in `Resources[].Partition`; others leave the field out. */
const ASFF_PARTITIONS = ['aws', 'aws-cn', 'aws-us-gov'] as const;

/** Where the findings go: the account and region Security Hub imports them in. */
export interface AsffTarget {
  readonly account: string;
  readonly region: string;
  readonly partition: string;
  /** The cluster's region when it is not the import region (the service imports in its own). */
  readonly resourceRegion?: string;
}

/** What the mapping reads of a finding (a stored state of a resolved one has no evidence). */
export interface AsffSubject {
  /** The finding's stable id (`findingId`): the ASFF `Id` derives from it, never from text. */
  readonly id: string;
  readonly checkId: string;
  readonly severity: Severity;
  readonly status: FindingStatus;
  readonly resource: ResourceRef;
  readonly message: string;
  readonly remediation?: string;
  readonly suppression?: Suppression;
  readonly causedBy?: string;
}

/** What the mapping reads of the check (`CheckMeta`). */
export interface AsffCheck {
  readonly title: string;
  readonly remediation: string;
  /** Public references: the first URL becomes the remediation link. */
  readonly references: readonly string[];
}

interface AsffTimes {
  /** When the scanner first saw the finding open (the scan time when it has no history). */
  readonly firstObservedAt: string;
  readonly lastObservedAt: string;
  /** This record's time: a later value than the stored one makes Security Hub take the update. */
  readonly updatedAt: string;
}

interface AsffResource {
  readonly Type: string;
  readonly Id: string;
  readonly Partition?: string;
  readonly Region?: string;
  readonly Details?: {
    readonly AwsEksCluster?: { readonly Name: string; readonly Arn: string };
    readonly Other?: Readonly<Record<string, string>>;
  };
}

/** The ASFF fields this scanner writes (a subset of `AwsSecurityFinding`). */
export interface AsffFinding {
  readonly SchemaVersion: typeof ASFF_SCHEMA_VERSION;
  readonly Id: string;
  readonly ProductArn: string;
  readonly ProductName: string;
  readonly CompanyName: string;
  readonly GeneratorId: string;
  readonly AwsAccountId: string;
  readonly Region: string;
  readonly Types: readonly string[];
  readonly FirstObservedAt: string;
  readonly LastObservedAt: string;
  readonly CreatedAt: string;
  readonly UpdatedAt: string;
  readonly Severity: { readonly Label: AsffSeverityLabel; readonly Original: string };
  readonly FindingProviderFields: {
    readonly Severity: { readonly Label: AsffSeverityLabel; readonly Original: string };
    readonly Types: readonly string[];
  };
  readonly Title: string;
  readonly Description: string;
  readonly Remediation: {
    readonly Recommendation: { readonly Text: string; readonly Url: string };
  };
  readonly ProductFields: Readonly<Record<string, string>>;
  readonly Resources: readonly AsffResource[];
  readonly Compliance: { readonly Status: AsffComplianceStatus };
  readonly RecordState: AsffRecordState;
}

/** `arn:<partition>:securityhub:<region>:<account>:product/<account>/default` (own findings). */
export function defaultProductArn(target: AsffTarget): string {
  return `arn:${target.partition}:securityhub:${target.region}:${target.account}:product/${target.account}/default`;
}

/**
 * Stable across scans: the finding id already names check, cluster, kind, name and origin; the
 * cluster's region tells apart same-named clusters of two regions (and of two regions that report
 * to one aggregation region), and the account is the product's (`ProductArn`): the Id names the
 * cluster by its whole identity, account, region and name.
 */
export function asffFindingId(findingId: string, target: AsffTarget): string {
  return `${PROVIDER_NAME}/${target.resourceRegion ?? target.region}/${findingId}`;
}

function asffGeneratorId(checkId: string): string {
  return truncate(`${PROVIDER_NAME}/${checkId}`, ASFF_LIMITS.generatorId);
}

/**
 * The documented mapping of a finding's status:
 * - `fail` → FAILED, ACTIVE; `error` (could not look) → NOT_AVAILABLE, ACTIVE;
 * - `pass` → PASSED, ARCHIVED (a fixed finding of an earlier import closes under the same Id);
 * - `notice` → PASSED, ARCHIVED: nothing failed, the record only informs (its severity label is
 *   INFORMATIONAL, as for every PASSED record), and an import of an earlier version, which sent
 *   the notice as FAILED, is closed under the same Id;
 * - `suppressed` → WARNING, ARCHIVED (accepted by an annotation or an ignore rule: not a pass,
 *   not open work; Security Hub has no "muted" status);
 * - a follow-on of another finding (`causedBy`) is ARCHIVED: it never counts on its own.
 * `not-applicable` findings are not exported (`isAsffExported`).
 */
export function complianceOf(subject: Pick<AsffSubject, 'status' | 'causedBy'>): {
  status: AsffComplianceStatus;
  recordState: AsffRecordState;
} {
  const archivedIfQuiet: AsffRecordState = subject.causedBy === undefined ? 'ACTIVE' : 'ARCHIVED';
  switch (subject.status) {
    case 'fail':
      return { status: 'FAILED', recordState: archivedIfQuiet };
    case 'error':
      return { status: 'NOT_AVAILABLE', recordState: archivedIfQuiet };
    case 'suppressed':
      return { status: 'WARNING', recordState: 'ARCHIVED' };
    case 'notice':
    case 'pass':
    case 'not-applicable':
      return { status: 'PASSED', recordState: 'ARCHIVED' };
  }
}

/** A check that did not apply to an object says nothing Security Hub should hold. */
export function isAsffExported(subject: Pick<AsffSubject, 'status'>): boolean {
  return subject.status !== 'not-applicable';
}

/** Shortened to `max` characters (code points), ending in `…` when cut. */
export function truncate(text: string, max: number): string {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}

function publicUrl(reference: string): string | undefined {
  const trimmed = reference.trim();
  const issue = /^#(\d+)$/.exec(trimmed);
  if (issue) return `https://github.com/aws/karpenter-provider-aws/issues/${issue[1]}`;
  return /^https:\/\/\S+$/.test(trimmed) ? trimmed : undefined;
}

function clusterArn(cluster: string, target: AsffTarget): string {
  const region = target.resourceRegion ?? target.region;
  return `arn:${target.partition}:eks:${region}:${target.account}:cluster/${cluster}`;
}

function resourcesOf(resource: ResourceRef, target: AsffTarget): AsffResource[] {
  const partition = (ASFF_PARTITIONS as readonly string[]).includes(target.partition)
    ? { Partition: target.partition }
    : {};
  const where = { ...partition, Region: target.resourceRegion ?? target.region };
  const cluster: AsffResource[] =
    resource.cluster === ''
      ? []
      : [
          {
            Type: 'AwsEksCluster',
            Id: clusterArn(resource.cluster, target),
            ...where,
            Details: {
              AwsEksCluster: {
                Name: resource.cluster,
                Arn: clusterArn(resource.cluster, target),
              },
            },
          },
        ];
  // A cluster-level finding of a manifest scan names no EKS cluster ("manifests"): ASFF needs at
  // least one resource, so it is the scan's own, as `Other`.
  if (resource.kind === 'Cluster') {
    return cluster.length > 0
      ? cluster
      : [
          {
            Type: 'Other',
            Id: truncate(`cluster/${resource.name}`, ASFF_LIMITS.id),
            ...where,
            Details: {
              Other: {
                kind: 'Cluster',
                name: truncate(resource.name, ASFF_LIMITS.otherDetailValue),
              },
            },
          },
        ];
  }
  const origin = resource.origin === undefined ? undefined : originLabel(resource.origin);
  const path = `${resource.kind === 'EC2NodeClass' ? 'ec2nodeclass' : 'nodepool'}/${resource.name}`;
  const objectId =
    resource.cluster === ''
      ? `${path}${origin === undefined ? '' : `@${origin}`}`
      : `${clusterArn(resource.cluster, target)}/${path}`;
  const details: Record<string, string> = {
    kind: resource.kind,
    name: truncate(resource.name, ASFF_LIMITS.otherDetailValue),
    ...(resource.cluster === '' ? {} : { cluster: resource.cluster }),
    ...(origin === undefined ? {} : { origin: truncate(origin, ASFF_LIMITS.otherDetailValue) }),
  };
  return [
    {
      Type: 'Other',
      Id: truncate(objectId, ASFF_LIMITS.id),
      ...where,
      Details: { Other: details },
    },
    ...cluster,
  ];
}

function productFields(subject: AsffSubject): Record<string, string> {
  const { resource } = subject;
  const fields: Record<string, string | undefined> = {
    ProviderName: PROVIDER_NAME,
    'nodeclass-scanner/findingId': subject.id,
    'nodeclass-scanner/checkId': subject.checkId,
    'nodeclass-scanner/status': subject.status,
    'nodeclass-scanner/severity': subject.severity,
    'nodeclass-scanner/cluster': resource.cluster === '' ? undefined : resource.cluster,
    'nodeclass-scanner/kind': resource.kind,
    'nodeclass-scanner/name': resource.name,
    'nodeclass-scanner/origin':
      resource.origin === undefined ? undefined : originLabel(resource.origin),
    'nodeclass-scanner/causedBy': subject.causedBy,
    'nodeclass-scanner/suppressionReason': subject.suppression?.reason,
    'nodeclass-scanner/suppressionSource': subject.suppression?.source,
    'nodeclass-scanner/suppressedStatus': subject.suppression?.status,
    'nodeclass-scanner/suppressionExpires': subject.suppression?.expires,
  };
  return Object.fromEntries(
    Object.entries(fields).flatMap(([key, value]) =>
      value === undefined || value === ''
        ? []
        : [[key, truncate(value, ASFF_LIMITS.productFieldValue)]]
    )
  );
}

export interface AsffOptions {
  readonly target: AsffTarget;
  readonly times: AsffTimes;
  /** The check's metadata; the check id stands in for a check this build does not know. */
  readonly check?: AsffCheck;
  /** Overrides the status mapping (a resolved finding: PASSED, ARCHIVED). */
  readonly compliance?: { status: AsffComplianceStatus; recordState: AsffRecordState };
}

/** The ASFF record of one finding; every field within Security Hub's limits. */
export function toAsffFinding(subject: AsffSubject, options: AsffOptions): AsffFinding {
  const { target, times, check } = options;
  const { resource } = subject;
  // A cluster outside the import (home) region reads `name@region`, as in the alerts.
  const cluster =
    resource.cluster === ''
      ? ''
      : clusterLabel(
          { name: resource.cluster, region: target.resourceRegion ?? target.region },
          target.region
        );
  const qualified = [cluster, resource.kind, resource.name].filter((part) => part !== '').join('/');
  const compliance = options.compliance ?? complianceOf(subject);
  // Passed findings carry no risk, as Security Hub's own control findings show them; the check's
  // severity stays in `Original`.
  const label =
    compliance.status === 'PASSED' ? 'INFORMATIONAL' : SEVERITY_LABELS[subject.severity];
  const severity = { Label: label, Original: subject.severity };
  const url =
    check?.references.map(publicUrl).find((candidate) => candidate !== undefined) ??
    DEFAULT_REMEDIATION_URL;
  const remediation = subject.remediation || check?.remediation || 'See the check documentation.';
  return {
    SchemaVersion: ASFF_SCHEMA_VERSION,
    Id: truncate(asffFindingId(subject.id, target), ASFF_LIMITS.id),
    ProductArn: defaultProductArn(target),
    ProductName: PROVIDER_NAME,
    CompanyName: PROVIDER_NAME,
    GeneratorId: asffGeneratorId(subject.checkId),
    AwsAccountId: target.account,
    Region: target.region,
    Types: [ASFF_FINDING_TYPE],
    FirstObservedAt: times.firstObservedAt,
    LastObservedAt: times.lastObservedAt,
    CreatedAt: times.firstObservedAt,
    UpdatedAt: times.updatedAt,
    Severity: severity,
    FindingProviderFields: { Severity: severity, Types: [ASFF_FINDING_TYPE] },
    Title: truncate(`${check?.title ?? subject.checkId}: ${qualified}`, ASFF_LIMITS.title),
    Description: truncate(subject.message || qualified, ASFF_LIMITS.description),
    Remediation: {
      Recommendation: { Text: truncate(remediation, ASFF_LIMITS.recommendationText), Url: url },
    },
    ProductFields: productFields(subject),
    Resources: resourcesOf(resource, target),
    Compliance: { Status: compliance.status },
    RecordState: compliance.recordState,
  };
}

/** The record's size as Security Hub counts it: UTF-8 bytes of its JSON. */
export function asffSizeBytes(finding: AsffFinding): number {
  return new TextEncoder().encode(JSON.stringify(finding)).length;
}

/** Why Security Hub did not take a finding, as far as retrying goes. */
export type SecurityHubFailureKind =
  /** Throttled, an internal failure, a concurrent update: the next attempt may succeed. */
  | 'transient'
  /** Security Hub is not enabled, or the role may not import: nothing succeeds until that changes. */
  | 'refused'
  /** The record itself is invalid: sending it again cannot help. */
  | 'rejected';

export interface SecurityHubFailure {
  /** The ASFF `Id`. */
  readonly id: string;
  readonly code: string;
  readonly message: string;
  readonly kind: SecurityHubFailureKind;
}

/** BatchUpdateFindings takes a note of at most 512 characters. */
const ASFF_NOTE_MAX_CHARS = 512;
/** Who the notes this scanner writes are `UpdatedBy`. */
export const ASFF_NOTE_AUTHOR = PROVIDER_NAME;

/**
 * A workflow change beyond RESOLVED: `SUPPRESSED` (with a note: who suppressed the finding and
 * why) when a finding becomes suppressed, and `NEW` when a finding fails again after it was closed
 * (Security Hub resets NOTIFIED and RESOLVED to NEW by itself, never SUPPRESSED).
 */
export interface WorkflowUpdate {
  readonly Id: string;
  readonly ProductArn: string;
  readonly status: 'NEW' | 'SUPPRESSED';
  readonly note?: string;
}

/** The note of a suppressed finding: source, reason and expiry, within Security Hub's limit. */
export function suppressionNote(subject: Pick<AsffSubject, 'checkId' | 'suppression'>): string {
  const { suppression } = subject;
  if (suppression === undefined) return 'Suppressed.';
  const by =
    suppression.source === 'annotation'
      ? `annotation ignore-check.nodeclass-scanner/${subject.checkId} on the object`
      : 'an ignore rule of the configuration';
  const until = suppression.expires === undefined ? '' : ` until ${suppression.expires}`;
  return truncate(`Suppressed by ${by}${until}: ${suppression.reason}`, ASFF_NOTE_MAX_CHARS);
}

/** The service's Security Hub: imports and resolves findings, reporting what it did not take. */
export interface SecurityHubPort {
  /** BatchImportFindings, at most 100 per call; failures are returned, never thrown. */
  importFindings(findings: readonly AsffFinding[]): Promise<readonly SecurityHubFailure[]>;
  /** BatchUpdateFindings `Workflow.Status: RESOLVED`; failures are returned, never thrown. */
  markResolved(
    findings: readonly { readonly Id: string; readonly ProductArn: string }[]
  ): Promise<readonly SecurityHubFailure[]>;
  /**
   * BatchUpdateFindings `Workflow.Status` SUPPRESSED (with its note) or NEW, one request per
   * status and note; failures are returned, never thrown.
   */
  updateWorkflow(updates: readonly WorkflowUpdate[]): Promise<readonly SecurityHubFailure[]>;
}
