// Ports of the running service (Lambdas): finding state, publishing, the scan queue, metrics and
// the IAM lookups the IAM-event path needs. Adapters implement them; the app layer uses only these.
import * as z from 'zod';
import type { ClusterIdentity } from '../cluster-identity.js';
import type { NodeClassIndexEntry } from '../event-index.js';
import type {
  FindingState,
  LifecycleChange,
  PendingPublish,
  ScanStamp,
  SilentClose,
  StoredFindings,
} from '../lifecycle.js';
import type { Finding, Severity } from '../model.js';
import type { OutgoingMessage } from '../notify/message.js';
import type { OversizedItem } from '../storage-limits.js';

/**
 * Per-finding state, a per-cluster scan counter and the NodeClass index (DynamoDB in production),
 * each kept per cluster identity (account, region, name): a finding write belongs to the cluster
 * of its `ScanStamp`. Every finding write is conditional on the stored `revision` and on the
 * writing scan's sequence being newer than the one stored (`ScanStamp.scanSeq`), so neither a
 * duplicate delivery nor a scan with an older view can overwrite a fresher state. Methods throw
 * `SourceUnavailableError` when the store cannot be reached.
 */
export interface FindingStore {
  /** Takes the next scan sequence number of a cluster (atomic, strictly increasing). */
  nextScanSeq(cluster: ClusterIdentity): Promise<number>;
  /** The last sequence number handed out for a cluster (0 if none). */
  latestScanSeq(cluster: ClusterIdentity): Promise<number>;
  /**
   * Every stored finding state of a cluster, open and resolved (not yet expired), and the claims
   * still pending publish. The first load of a cluster identity adopts the state an earlier
   * version stored under the cluster's name alone, when it is that cluster's (DynamoDB store).
   */
  loadFindings(cluster: ClusterIdentity): Promise<StoredFindings>;
  /**
   * Writes `change.next`, marked pending publish with `message`, only if the stored revision is
   * still `change.previous?.revision` (absent for a first sighting), no publish is pending on it,
   * and no newer scan wrote it. False when that condition fails: do not notify then.
   */
  claim(
    change: LifecycleChange,
    claim: { readonly stamp: ScanStamp; readonly message: OutgoingMessage }
  ): Promise<boolean>;
  /**
   * Claims a first scan's summary as one unit (every change a first sighting, all carried by
   * `message`): true when this scan holds it and no newer scan of the cluster had started; false
   * claims none. The summary and its changes are stored once, not per change, so a batch of any
   * size stays within the store's item limit. Optional: a store without it gets one `claim` each.
   */
  claimBatch?(
    changes: readonly LifecycleChange[],
    claim: { readonly stamp: ScanStamp; readonly message: OutgoingMessage }
  ): Promise<boolean>;
  /**
   * Writes a silent close (`close.next`, never notified) under the same conditions as a claim,
   * without a pending publish. False when the condition fails.
   */
  close(close: SilentClose, stamp: ScanStamp): Promise<boolean>;
  /** Takes over a pending publish (see `adoptablePending`); false when someone else moved it. */
  adopt(pending: PendingPublish, stamp: ScanStamp): Promise<boolean>;
  /** Clears the pending mark of published claims this scan owns (a lost condition is ignored). */
  clearPending(states: readonly FindingState[], stamp: ScanStamp): Promise<void>;
  /** Undoes a claim whose notification SNS refused, so a later scan claims and notifies it again. */
  release(change: LifecycleChange, stamp: ScanStamp): Promise<void>;
  /**
   * Refreshes `lastSeen` (and `materialHash`, for states stored before hashes) of unchanged open
   * findings: no revision bump, never notifies.
   */
  touch(states: readonly FindingState[], stamp: ScanStamp): Promise<void>;
  /**
   * The items a scan would write that the store cannot hold (DynamoDB: 400 KB per item), measured
   * before anything is written: the state of each `fail`/`error` finding, with room for the
   * notification a claim carries, and each index entry. Writes of such an item throw
   * `ItemTooLargeError` without reaching the store.
   */
  oversizedItems(scan: {
    readonly findings: readonly Finding[];
    readonly index: readonly NodeClassIndexEntry[];
  }): Promise<readonly OversizedItem[]>;
  loadIndex(): Promise<NodeClassIndexEntry[]>;
  /**
   * Replaces a cluster's index with the entries of a full scan (removes NodeClasses now gone).
   * The entries carry the cluster's account and region.
   */
  replaceClusterIndex(
    cluster: ClusterIdentity,
    entries: readonly NodeClassIndexEntry[]
  ): Promise<void>;
  /** Upserts entries (carrying their cluster's account and region) after a restricted scan. */
  putIndexEntries(entries: readonly NodeClassIndexEntry[]): Promise<void>;
}

export interface PublishFailure {
  readonly id: string;
  readonly code: string;
  readonly message: string;
}

/** SNS in production. Never throws for per-message failures: it returns them. */
export interface NotificationPublisher {
  publish(
    messages: readonly OutgoingMessage[]
  ): Promise<{ readonly failed: readonly PublishFailure[] }>;
}

/** The message one `scan-cluster` worker consumes (SQS body). */
export const ClusterScanRequestSchema = z.object({
  version: z.literal(1),
  cluster: z.string().regex(/^[0-9A-Za-z][A-Za-z0-9_-]{0,99}$/, 'not an EKS cluster name'),
  region: z
    .string()
    .regex(/^[a-z]{2}(-[a-z]+)+-\d+$/, 'not a region name')
    .optional(),
  trigger: z.string().min(1).max(100),
  requestedAt: z.iso.datetime(),
});
export type ClusterScanRequest = z.infer<typeof ClusterScanRequestSchema>;

/** SQS in production. */
export interface ScanQueue {
  enqueue(
    requests: readonly ClusterScanRequest[]
  ): Promise<{ readonly failed: readonly PublishFailure[] }>;
}

/**
 * CloudWatch EMF in production (no API calls). `cluster` is the cluster's label (`clusterLabel`:
 * its name, `name@region` outside the home region), the `Cluster` dimension.
 */
export interface ServiceMetrics {
  clusterScanned(input: {
    readonly cluster: string;
    readonly durationMs: number;
    readonly nodeClasses: number;
    /** Omitted when the cluster's state is unknown (no `OpenFindings` gauge then). */
    readonly openBySeverity?: Readonly<Record<Severity, number>>;
  }): void;
  sourceErrors(cluster: string, count: number): void;
  /**
   * AWS calls: with `cluster`, those made while scanning that cluster (`Cluster` dimension);
   * without, the rest of the invocation's calls (digest, event lookups).
   */
  apiCalls(count: number, cluster?: string): void;
  eventIgnored(reason: string): void;
  notificationsSent(count: number): void;
  /** A cluster scan that did not complete: thrown, or some notifications not published. */
  scanFailed(cluster: string): void;
}

/** The IAM lookups that map a changed policy or role to the roles and profiles it affects. */
export interface IamEntityReader {
  /** Role names a managed policy is attached to (`iam:ListEntitiesForPolicy`). */
  rolesAttachedToPolicy(policyArn: string): Promise<string[]>;
  /** Instance profiles holding a role (`iam:ListInstanceProfilesForRole`); [] when the role is gone. */
  instanceProfilesForRole(roleName: string): Promise<string[]>;
}

/** Structured log lines from the app layer (Powertools Logger in production). */
export interface AppLogger {
  info(message: string, attributes?: Record<string, unknown>): void;
  warn(message: string, attributes?: Record<string, unknown>): void;
  error(message: string, attributes?: Record<string, unknown>): void;
}
