// In-memory implementations of the service ports, with the same conditional-write semantics as
// the DynamoDB store, for app and handler tests.
import type { NodeClassIndexEntry } from '../../lambda/core/event-index.js';
import type { FindingState, LifecycleChange } from '../../lambda/core/lifecycle.js';
import type { OutgoingMessage } from '../../lambda/core/notify/message.js';
import type {
  AppLogger,
  FindingStore,
  NotificationPublisher,
  ServiceMetrics,
} from '../../lambda/core/service-ports.js';

export class InMemoryFindingStore implements FindingStore {
  public readonly findings = new Map<string, FindingState>();
  public readonly index = new Map<string, NodeClassIndexEntry>();

  public async loadFindings(cluster: string): Promise<FindingState[]> {
    return [...this.findings.values()].filter((state) => state.resource.cluster === cluster);
  }

  public async claim(change: LifecycleChange): Promise<boolean> {
    const current = this.findings.get(change.next.id);
    const expected = change.previous?.revision;
    if (current?.revision !== expected) return false;
    this.findings.set(change.next.id, change.next);
    return true;
  }

  public async release(change: LifecycleChange): Promise<void> {
    if (this.findings.get(change.next.id)?.revision !== change.next.revision) return;
    if (change.previous) this.findings.set(change.next.id, change.previous);
    else this.findings.delete(change.next.id);
  }

  public async touch(states: readonly FindingState[]): Promise<void> {
    for (const state of states) {
      const current = this.findings.get(state.id);
      if (current?.revision === state.revision && current.status === 'open') {
        this.findings.set(state.id, { ...current, lastSeen: state.lastSeen });
      }
    }
  }

  public async loadIndex(): Promise<NodeClassIndexEntry[]> {
    return [...this.index.values()];
  }

  public async replaceClusterIndex(
    cluster: string,
    entries: readonly NodeClassIndexEntry[]
  ): Promise<void> {
    for (const key of [...this.index.keys()])
      if (key.startsWith(`${cluster}#`)) this.index.delete(key);
    await this.putIndexEntries(entries);
  }

  public async putIndexEntries(entries: readonly NodeClassIndexEntry[]): Promise<void> {
    for (const entry of entries) this.index.set(`${entry.cluster}#${entry.name}`, entry);
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
