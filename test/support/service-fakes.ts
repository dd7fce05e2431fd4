// In-memory implementations of the service ports, with the same conditional-write semantics as
// the DynamoDB store, for app and handler tests.
import { type ClusterIdentity, clusterKey } from '../../lambda/core/cluster-identity.js';
import type { NodeClassIndexEntry } from '../../lambda/core/event-index.js';
import type {
  FindingState,
  LifecycleChange,
  PendingPublish,
  ScanStamp,
  SilentClose,
  StoredFindings,
} from '../../lambda/core/lifecycle.js';
import type { Finding } from '../../lambda/core/model.js';
import type { OutgoingMessage } from '../../lambda/core/notify/message.js';
import type {
  AppLogger,
  FindingStore,
  NotificationPublisher,
  ServiceMetrics,
} from '../../lambda/core/ports/service.js';
import type { OversizedItem } from '../../lambda/core/storage-limits.js';
import { ItemTooLargeError } from '../../lambda/shared/errors.js';

/**
 * The DynamoDB store's conditions, in memory, keyed as it keys them: a finding by its cluster's
 * identity and its id (`InMemoryFindingStore.key`), an index entry by its cluster's identity and
 * its name (`<account>/<region>/<cluster>#<name>`). Every store request (one per item written, as
 * DynamoDB sees them) is recorded in `requests`; `failFrom` makes request number N (1-based,
 * counted over the store's life) and every later one throw, as an unreachable DynamoDB would.
 */
export class InMemoryFindingStore implements FindingStore {
  /** Stored states by `key(cluster, id)`. */
  public readonly findings = new Map<string, FindingState>();
  public readonly index = new Map<string, NodeClassIndexEntry>();
  /** The sequence of the scan that last wrote each finding (`scanSeq`), by `key(cluster, id)`. */
  public readonly scanSeqs = new Map<string, number>();
  /** Claims pending publish, by `key(cluster, id)`. */
  public readonly pending = new Map<string, PendingPublish>();
  /** Each cluster's counter, by `clusterKey`. */
  public readonly clusterSeqs = new Map<string, number>();
  public readonly requests: string[] = [];
  public failFrom: number | undefined;
  /** The first failing request takes effect before it throws (a response lost in transit). */
  public failAfterApplying = false;
  /**
   * The largest item the store holds, in JSON bytes of what the item keeps (a finding's state, an
   * index entry). A write of a larger one throws `ItemTooLargeError` without being a request, as
   * the DynamoDB store's does; `oversizedItems` reports them beforehand.
   */
  public maxItemBytes = Number.POSITIVE_INFINITY;

  /** The key of a finding of `cluster`. */
  public static key(cluster: ClusterIdentity, id: string): string {
    return `${clusterKey(cluster)}#${id}`;
  }

  /** The stored state of finding `id`, in whichever cluster (tests of one cluster). */
  public stateOf(id: string): FindingState | undefined {
    return [...this.findings.values()].find((state) => state.id === id);
  }

  private static entryKey(entry: NodeClassIndexEntry): string {
    const cluster = {
      account: entry.account ?? '',
      region: entry.region ?? '',
      name: entry.cluster,
    };
    return `${clusterKey(cluster)}#${entry.name}`;
  }

  private static bytes(value: unknown): number {
    return Buffer.byteLength(JSON.stringify(value));
  }

  private static findingItem(finding: Finding) {
    const { id, checkId, resource, status, severity, message, materialHash } = finding;
    return { id, checkId, resource, status, severity, message, materialHash };
  }

  private assertFits(what: string, value: unknown): void {
    const bytes = InMemoryFindingStore.bytes(value);
    if (bytes > this.maxItemBytes) throw new ItemTooLargeError(what, bytes, this.maxItemBytes);
  }

  private request<T>(name: string, apply: () => T): T {
    this.requests.push(name);
    const number = this.requests.length;
    if (this.failFrom !== undefined && number >= this.failFrom) {
      if (number === this.failFrom && this.failAfterApplying) apply();
      throw Object.assign(new Error(`DynamoDB unreachable (${name})`), {
        name: 'InternalServerError',
      });
    }
    return apply();
  }

  public async nextScanSeq(cluster: ClusterIdentity): Promise<number> {
    return this.request('nextScanSeq', () => {
      const next = (this.clusterSeqs.get(clusterKey(cluster)) ?? 0) + 1;
      this.clusterSeqs.set(clusterKey(cluster), next);
      return next;
    });
  }

  public async latestScanSeq(cluster: ClusterIdentity): Promise<number> {
    return this.request('latestScanSeq', () => this.clusterSeqs.get(clusterKey(cluster)) ?? 0);
  }

  public async loadFindings(cluster: ClusterIdentity): Promise<StoredFindings> {
    const prefix = `${clusterKey(cluster)}#`;
    const of = <T>(map: Map<string, T>) =>
      [...map].filter(([key]) => key.startsWith(prefix)).map(([, value]) => value);
    return this.request('loadFindings', () => ({
      states: of(this.findings),
      pending: of(this.pending),
    }));
  }

  public async claim(
    change: LifecycleChange,
    { stamp, message }: { readonly stamp: ScanStamp; readonly message: OutgoingMessage }
  ): Promise<boolean> {
    this.assertFits(`finding ${change.next.id}`, change.next);
    return this.request('claim', () => {
      const key = InMemoryFindingStore.key(stamp.cluster, change.next.id);
      if (this.findings.get(key)?.revision !== change.previous?.revision) return false;
      if (change.previous !== undefined) {
        if (this.pending.has(key)) return false;
        if ((this.scanSeqs.get(key) ?? 0) >= stamp.scanSeq) return false;
      }
      this.findings.set(key, change.next);
      this.scanSeqs.set(key, stamp.scanSeq);
      this.pending.set(key, {
        kind: change.kind,
        state: change.next,
        message,
        scanId: stamp.scanId,
        scanSeq: stamp.scanSeq,
        since: stamp.at,
      });
      return true;
    });
  }

  public async close({ previous, next }: SilentClose, stamp: ScanStamp): Promise<boolean> {
    return this.request('close', () => {
      const key = InMemoryFindingStore.key(stamp.cluster, next.id);
      if (this.findings.get(key)?.revision !== previous.revision || this.pending.has(key)) {
        return false;
      }
      if ((this.scanSeqs.get(key) ?? 0) >= stamp.scanSeq) return false;
      this.findings.set(key, next);
      this.scanSeqs.set(key, stamp.scanSeq);
      return true;
    });
  }

  public async adopt(pending: PendingPublish, stamp: ScanStamp): Promise<boolean> {
    return this.request('adopt', () => {
      const key = InMemoryFindingStore.key(stamp.cluster, pending.state.id);
      const current = this.pending.get(key);
      if (
        this.findings.get(key)?.revision !== pending.state.revision ||
        current?.scanSeq !== pending.scanSeq
      ) {
        return false;
      }
      this.pending.set(key, {
        ...current,
        scanId: stamp.scanId,
        scanSeq: stamp.scanSeq,
        since: stamp.at,
      });
      return true;
    });
  }

  public async clearPending(states: readonly FindingState[], stamp: ScanStamp): Promise<void> {
    for (const state of states) {
      this.request('clearPending', () => {
        const key = InMemoryFindingStore.key(stamp.cluster, state.id);
        if (
          this.findings.get(key)?.revision === state.revision &&
          this.pending.get(key)?.scanSeq === stamp.scanSeq
        ) {
          this.pending.delete(key);
        }
      });
    }
  }

  public async release(change: LifecycleChange, stamp: ScanStamp): Promise<void> {
    this.request('release', () => {
      const key = InMemoryFindingStore.key(stamp.cluster, change.next.id);
      if (this.findings.get(key)?.revision !== change.next.revision) return;
      this.pending.delete(key);
      if (change.previous) {
        this.findings.set(key, change.previous);
        this.scanSeqs.set(key, stamp.scanSeq);
      } else {
        this.findings.delete(key);
        this.scanSeqs.delete(key);
      }
    });
  }

  public async touch(states: readonly FindingState[], stamp: ScanStamp): Promise<void> {
    for (const state of states) {
      this.request('touch', () => {
        const key = InMemoryFindingStore.key(stamp.cluster, state.id);
        const current = this.findings.get(key);
        if (
          current?.revision === state.revision &&
          current.status === 'open' &&
          (this.scanSeqs.get(key) ?? 0) < stamp.scanSeq
        ) {
          this.findings.set(key, {
            ...current,
            lastSeen: state.lastSeen,
            ...(state.materialHash === undefined ? {} : { materialHash: state.materialHash }),
          });
          this.scanSeqs.set(key, stamp.scanSeq);
        }
      });
    }
  }

  public async oversizedItems(scan: {
    readonly findings: readonly Finding[];
    readonly index: readonly NodeClassIndexEntry[];
  }): Promise<readonly OversizedItem[]> {
    const maxBytes = this.maxItemBytes;
    const findings = scan.findings
      .filter((finding) => finding.status === 'fail' || finding.status === 'error')
      .map((finding) => ({
        item: 'finding-state' as const,
        finding,
        bytes: InMemoryFindingStore.bytes(InMemoryFindingStore.findingItem(finding)),
        maxBytes,
      }));
    const entries = scan.index.map((entry) => ({
      item: 'nodeclass-index' as const,
      entry: { cluster: entry.cluster, name: entry.name },
      bytes: InMemoryFindingStore.bytes(entry),
      maxBytes,
      largestField: Object.entries(entry)
        .map(([field, value]) => ({ field, bytes: InMemoryFindingStore.bytes(value) }))
        .sort((a, b) => b.bytes - a.bytes)[0]?.field as keyof NodeClassIndexEntry,
    }));
    return [...findings, ...entries].filter((item) => item.bytes > maxBytes);
  }

  public async loadIndex(): Promise<NodeClassIndexEntry[]> {
    return this.request('loadIndex', () => [...this.index.values()]);
  }

  public async replaceClusterIndex(
    cluster: ClusterIdentity,
    entries: readonly NodeClassIndexEntry[]
  ): Promise<void> {
    const existing = this.request('loadIndex', () =>
      [...this.index.keys()].filter((key) => key.startsWith(`${clusterKey(cluster)}#`))
    );
    if (entries.length === 0 && existing.length === 0) return;
    const current = entries.map((entry) => ({
      ...entry,
      cluster: cluster.name,
      account: cluster.account,
      region: cluster.region,
    }));
    for (const entry of current) this.assertFits(`index ${entry.cluster}#${entry.name}`, entry);
    this.request('batchWriteIndex', () => {
      for (const key of existing) this.index.delete(key);
      for (const entry of current) this.index.set(InMemoryFindingStore.entryKey(entry), entry);
    });
  }

  public async putIndexEntries(entries: readonly NodeClassIndexEntry[]): Promise<void> {
    if (entries.length === 0) return;
    for (const entry of entries) this.assertFits(`index ${entry.cluster}#${entry.name}`, entry);
    this.request('batchWriteIndex', () => {
      for (const entry of entries) this.index.set(InMemoryFindingStore.entryKey(entry), entry);
    });
  }
}

export class RecordingPublisher implements NotificationPublisher {
  public readonly sent: OutgoingMessage[] = [];
  /** Message ids to fail once. */
  public readonly failOnce = new Set<string>();

  public async publish(messages: readonly OutgoingMessage[]) {
    const failed = messages
      .filter((message) => this.failOnce.delete(message.id))
      .map((message) => ({ id: message.id, code: 'InternalError', message: 'injected' }));
    const failedIds = new Set(failed.map((f) => f.id));
    this.sent.push(...messages.filter((message) => !failedIds.has(message.id)));
    return { failed };
  }

  public changes(): string[] {
    return this.sent.map(
      (message) => `${message.attributes.change}:${message.attributes.cluster ?? ''}`
    );
  }
}

export class RecordingMetrics implements ServiceMetrics {
  public readonly records: { name: string; value: number; dimensions: Record<string, string> }[] =
    [];

  public clusterScanned(input: Parameters<ServiceMetrics['clusterScanned']>[0]): void {
    this.records.push({ name: 'ClustersScanned', value: 1, dimensions: {} });
    this.records.push({
      name: 'NodeClassesScanned',
      value: input.nodeClasses,
      dimensions: { Cluster: input.cluster },
    });
    for (const [severity, count] of Object.entries(input.openBySeverity ?? {})) {
      this.records.push({
        name: 'OpenFindings',
        value: count,
        dimensions: { Cluster: input.cluster, Severity: severity },
      });
    }
  }

  public sourceErrors(cluster: string, count: number): void {
    this.records.push({ name: 'SourceErrors', value: count, dimensions: { Cluster: cluster } });
  }

  public apiCalls(count: number): void {
    this.records.push({ name: 'AwsApiCalls', value: count, dimensions: {} });
  }

  public eventIgnored(reason: string): void {
    this.records.push({ name: 'EventsIgnored', value: 1, dimensions: { Reason: reason } });
  }

  public notificationsSent(count: number): void {
    this.records.push({ name: 'NotificationsSent', value: count, dimensions: {} });
  }

  public scanFailed(cluster: string): void {
    this.records.push({ name: 'ScanFailures', value: 1, dimensions: { Cluster: cluster } });
  }

  public total(name: string): number {
    return this.records.filter((r) => r.name === name).reduce((sum, r) => sum + r.value, 0);
  }
}

export const silentLogger: AppLogger = { info: () => {}, warn: () => {}, error: () => {} };
