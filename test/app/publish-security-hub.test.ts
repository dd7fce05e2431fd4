import { beforeEach, describe, expect, it } from 'vitest';
import {
  deliverToSecurityHub,
  type SecurityHubSink,
} from '../../lambda/app/publish-security-hub.js';
import { type ScanAndPublishDeps, scanAndPublish } from '../../lambda/app/scan-and-publish.js';
import type {
  AsffFinding,
  SecurityHubFailure,
  SecurityHubFailureKind,
  SecurityHubPort,
  WorkflowUpdate,
} from '../../lambda/core/asff.js';
import { CHECKS } from '../../lambda/core/checks/index.js';
import type { LifecycleChange } from '../../lambda/core/lifecycle.js';
import { findingId } from '../../lambda/core/model.js';
import { asffErrors } from '../cli/support/asff-schema.js';
import { aNodeClassObject } from '../support/builders.js';
import { aFinding, aStoredState } from '../support/findings.js';
import {
  ARN_PROFILE,
  brokenNodeClass as broken,
  fixedNodeClass as fixed,
  planFactoryOf,
  type ScanWorld as World,
} from '../support/scan-world.js';
import {
  InMemoryFindingStore,
  RecordingMetrics,
  RecordingPublisher,
  silentLogger,
} from '../support/service-fakes.js';

const CHECK = 'instance-profile-is-name';

/** Security Hub as a map of the records it holds, with failures to inject. */
class FakeSecurityHub implements SecurityHubPort {
  readonly held = new Map<
    string,
    AsffFinding & { Workflow?: { Status: string }; Note?: { Text: string } }
  >();
  readonly importCalls: AsffFinding[][] = [];
  readonly resolveCalls: string[][] = [];
  readonly workflowCalls: WorkflowUpdate[][] = [];
  /** Fail the next import calls with this kind (for every finding). */
  failImports: SecurityHubFailureKind[] = [];
  failResolves: SecurityHubFailureKind[] = [];
  failWorkflows: SecurityHubFailureKind[] = [];

  async importFindings(findings: readonly AsffFinding[]): Promise<SecurityHubFailure[]> {
    this.importCalls.push([...findings]);
    const kind = this.failImports.shift();
    if (kind) return findings.map((f) => ({ id: f.Id, code: 'X', message: 'x', kind }));
    for (const finding of findings) {
      const previous = this.held.get(finding.Id);
      // Security Hub's reset rule: reopening (ARCHIVED → ACTIVE) sets the workflow back to NEW.
      const reopened = previous?.RecordState === 'ARCHIVED' && finding.RecordState === 'ACTIVE';
      this.held.set(finding.Id, {
        ...finding,
        Workflow: { Status: reopened ? 'NEW' : (previous?.Workflow?.Status ?? 'NEW') },
      });
    }
    return [];
  }

  async markResolved(
    findings: readonly { Id: string; ProductArn: string }[]
  ): Promise<SecurityHubFailure[]> {
    this.resolveCalls.push(findings.map((finding) => finding.Id));
    const kind = this.failResolves.shift();
    if (kind) return findings.map((f) => ({ id: f.Id, code: 'X', message: 'x', kind }));
    for (const { Id } of findings) {
      const record = this.held.get(Id);
      if (record) this.held.set(Id, { ...record, Workflow: { Status: 'RESOLVED' } });
    }
    return [];
  }

  async updateWorkflow(updates: readonly WorkflowUpdate[]): Promise<SecurityHubFailure[]> {
    this.workflowCalls.push([...updates]);
    const kind = this.failWorkflows.shift();
    if (kind) return updates.map((u) => ({ id: u.Id, code: 'X', message: 'x', kind }));
    for (const update of updates) {
      const record = this.held.get(update.Id);
      if (!record) continue;
      this.held.set(update.Id, {
        ...record,
        Workflow: { Status: update.status },
        ...(update.note === undefined ? {} : { Note: { Text: update.note } }),
      });
    }
    return [];
  }

  record(findingId: string) {
    return this.held.get(`nodeclass-scanner/eu-west-1/${findingId}`);
  }
}

const sinkOf = (port: SecurityHubPort): SecurityHubSink => ({
  port,
  target: { account: '111122223333', region: 'eu-west-1', partition: 'aws' },
  checks: new Map(CHECKS.map((check) => [check.id, check])),
});

let store: InMemoryFindingStore;
let publisher: RecordingPublisher;
let hub: FakeSecurityHub;
let now: Date;

function deps(world: World): ScanAndPublishDeps {
  return {
    planFor: planFactoryOf(world),
    store,
    publisher,
    metrics: new RecordingMetrics(),
    logger: silentLogger,
    clock: () => now,
    settings: { reminderIntervalMs: 24 * 3_600_000, digest: 'never' },
    securityHub: sinkOf(hub),
  };
}

const scan = (world: World, scanId: string) =>
  scanAndPublish(deps(world), { scanId, trigger: 'schedule', clusters: [{ cluster: 'prod' }] });

const openRecords = () =>
  [...hub.held.values()].filter(
    (record) =>
      record.GeneratorId === `nodeclass-scanner/${CHECK}` && record.RecordState === 'ACTIVE'
  );

beforeEach(() => {
  store = new InMemoryFindingStore();
  publisher = new RecordingPublisher();
  hub = new FakeSecurityHub();
  now = new Date('2026-11-01T00:00:00Z');
});

describe('scanAndPublish with Security Hub', () => {
  it('imports a new finding, and archives and resolves it once fixed', async () => {
    const world: World = new Map([['prod', [broken()]]]);
    await scan(world, 's1');
    const [record] = openRecords();
    expect(record).toMatchObject({
      Compliance: { Status: 'FAILED' },
      RecordState: 'ACTIVE',
      Workflow: { Status: 'NEW' },
      ProductArn: 'arn:aws:securityhub:eu-west-1:111122223333:product/111122223333/default',
      UpdatedAt: '2026-11-01T00:00:00.000Z',
    });
    expect(asffErrors([...hub.held.values()].map(({ Workflow: _, ...rest }) => rest))).toEqual([]);

    world.set('prod', [fixed()]);
    now = new Date('2026-11-01T01:00:00Z');
    await scan(world, 's2');
    const resolved = hub.held.get(record?.Id ?? '');
    expect(resolved).toMatchObject({
      Compliance: { Status: 'PASSED' },
      RecordState: 'ARCHIVED',
      Workflow: { Status: 'RESOLVED' },
      CreatedAt: record?.CreatedAt,
      UpdatedAt: '2026-11-01T01:00:00.000Z',
    });
    expect(openRecords()).toEqual([]);
  });

  it('sends nothing to Security Hub for an unchanged finding', async () => {
    const world: World = new Map([['prod', [broken()]]]);
    await scan(world, 's1');
    const calls = hub.importCalls.length;
    now = new Date('2026-11-01T00:10:00Z');
    await scan(world, 's2');
    expect(hub.importCalls).toHaveLength(calls);
  });

  it('holds back a change Security Hub could not take, then delivers it to both at the next scan', async () => {
    const world: World = new Map([['prod', [broken()]]]);
    hub.failImports = ['transient'];
    await scan(world, 's1');
    // Neither sink has it: the change was not claimed.
    expect(openRecords()).toEqual([]);
    expect(publisher.sent).toEqual([]);

    now = new Date('2026-11-01T00:05:00Z');
    await scan(world, 's2');
    expect(openRecords()).toHaveLength(1);
    expect(publisher.sent.length).toBeGreaterThan(0);
    // And only once: a third scan sends nothing more to either.
    const sent = publisher.sent.length;
    const imports = hub.importCalls.length;
    now = new Date('2026-11-01T00:10:00Z');
    await scan(world, 's3');
    expect(publisher.sent).toHaveLength(sent);
    expect(hub.importCalls).toHaveLength(imports);
  });

  it('holds back a resolve whose RESOLVED mark failed, and finishes it at the next scan', async () => {
    const world: World = new Map([['prod', [broken()]]]);
    await scan(world, 's1');
    const [record] = openRecords();
    world.set('prod', [fixed()]);
    hub.failResolves = ['transient'];
    now = new Date('2026-11-01T01:00:00Z');
    await scan(world, 's2');
    expect(hub.held.get(record?.Id ?? '')?.Workflow?.Status).toBe('NEW');
    const sentAfterFirstTry = publisher.sent.length;

    now = new Date('2026-11-01T02:00:00Z');
    await scan(world, 's3');
    expect(hub.held.get(record?.Id ?? '')?.Workflow?.Status).toBe('RESOLVED');
    expect(publisher.sent.length).toBeGreaterThan(sentAfterFirstTry);
  });

  it('never holds alerts back when Security Hub refuses for good (not enabled)', async () => {
    const world: World = new Map([['prod', [broken()]]]);
    hub.failImports = ['refused'];
    await scan(world, 's1');
    expect(publisher.sent.length).toBeGreaterThan(0);
    expect(openRecords()).toEqual([]);
  });

  it('reopens a resolved finding as ACTIVE, which Security Hub sets back to NEW', async () => {
    const world: World = new Map([['prod', [broken()]]]);
    await scan(world, 's1');
    world.set('prod', [fixed()]);
    now = new Date('2026-11-01T01:00:00Z');
    await scan(world, 's2');
    world.set('prod', [broken()]);
    now = new Date('2026-11-01T02:00:00Z');
    await scan(world, 's3');
    expect(openRecords()).toEqual([
      expect.objectContaining({ Workflow: { Status: 'NEW' }, Compliance: { Status: 'FAILED' } }),
    ]);
  });

  const suppressedBy = (value: string) =>
    aNodeClassObject({
      name: 'default',
      metadata: { annotations: { [`ignore-check.nodeclass-scanner/${CHECK}`]: value } },
      spec: { role: undefined, instanceProfile: ARN_PROFILE },
    });

  it('archives a finding that became suppressed as WARNING, SUPPRESSED with the reason as a note', async () => {
    // Prepare
    const world: World = new Map([['prod', [broken()]]]);
    await scan(world, 's1');
    const [record] = openRecords();
    world.set('prod', [suppressedBy('accepted until the migration; expires=2026-12-31')]);
    now = new Date('2026-11-01T01:00:00Z');
    // Act
    await scan(world, 's2');
    // Assess
    expect(hub.held.get(record?.Id ?? '')).toMatchObject({
      Compliance: { Status: 'WARNING' },
      RecordState: 'ARCHIVED',
      Workflow: { Status: 'SUPPRESSED' },
      Note: {
        Text: `Suppressed by annotation ignore-check.nodeclass-scanner/${CHECK} on the object until 2026-12-31: accepted until the migration`,
      },
      ProductFields: {
        'nodeclass-scanner/status': 'suppressed',
        'nodeclass-scanner/suppressionSource': 'annotation',
        'nodeclass-scanner/suppressionExpires': '2026-12-31',
      },
    });
    expect(hub.resolveCalls.flat()).not.toContain(record?.Id);
  });

  it('sets a suppressed finding back to NEW when it fails again (Security Hub keeps SUPPRESSED)', async () => {
    // Prepare: alerted, suppressed, then the annotation is removed
    const world: World = new Map([['prod', [broken()]]]);
    await scan(world, 's1');
    const [record] = openRecords();
    world.set('prod', [suppressedBy('accepted')]);
    now = new Date('2026-11-01T01:00:00Z');
    await scan(world, 's2');
    world.set('prod', [broken()]);
    now = new Date('2026-11-01T02:00:00Z');
    // Act
    await scan(world, 's3');
    // Assess
    expect(hub.held.get(record?.Id ?? '')).toMatchObject({
      Compliance: { Status: 'FAILED' },
      RecordState: 'ACTIVE',
      Workflow: { Status: 'NEW' },
    });
    expect(hub.workflowCalls.flat().map((update) => update.status)).toEqual(['SUPPRESSED', 'NEW']);
  });

  it('holds back a suppression whose SUPPRESSED mark failed: no message, then both at the next scan', async () => {
    // Prepare
    const world: World = new Map([['prod', [broken()]]]);
    await scan(world, 's1');
    const [record] = openRecords();
    const sentBefore = publisher.sent.length;
    world.set('prod', [suppressedBy('accepted')]);
    hub.failWorkflows = ['transient'];
    now = new Date('2026-11-01T01:00:00Z');
    // Act
    await scan(world, 's2');
    const sentWhileFailing = publisher.sent.length;
    now = new Date('2026-11-01T02:00:00Z');
    await scan(world, 's3');
    // Assess
    expect(sentWhileFailing).toBe(sentBefore);
    expect(hub.held.get(record?.Id ?? '')?.Workflow?.Status).toBe('SUPPRESSED');
    expect(publisher.sent.slice(sentBefore).map((message) => message.attributes.change)).toEqual([
      'suppressed',
    ]);
  });
});

describe('scanAndPublish with Security Hub: the 412 dry-run notice', () => {
  const VERSION_CHECK = 'karpenter-version-supported';
  const cluster = { cluster: 'prod', kind: 'Cluster' as const, name: 'prod' };
  const noticeId = findingId(VERSION_CHECK, cluster, 'dry-run-412-noise');
  const healthy = () =>
    aNodeClassObject({
      name: 'default',
      metadata: { annotations: { 'nodeclass-scanner/karpenter-version': '1.7.0' } },
      spec: { role: undefined, instanceProfile: 'KarpenterNodeProfile' },
    });

  it('imports nothing for a notice that was never stored', async () => {
    await scan(new Map([['prod', [healthy()]]]), 's1');
    expect(hub.importCalls).toEqual([]);
  });

  it('closes the FAILED record a previous version imported as PASSED, INFORMATIONAL, archived and resolved', async () => {
    // Prepare: the previous version stored the notice open (an info `fail`) and imported it FAILED
    const legacy = aFinding({
      id: noticeId,
      checkId: VERSION_CHECK,
      severity: 'info',
      resource: cluster,
      message: 'Expected, not an error: validation dry-runs succeed as HTTP 412.',
    });
    store.findings.set(
      InMemoryFindingStore.key({ account: '', region: '', name: 'prod' }, noticeId),
      aStoredState(legacy, '2026-10-31T00:00:00.000Z')
    );
    // Act
    await scan(new Map([['prod', [healthy()]]]), 's1');
    // Assess: closed in Security Hub, and no alert anywhere
    expect(hub.record(noticeId)).toMatchObject({
      Compliance: { Status: 'PASSED' },
      RecordState: 'ARCHIVED',
      Severity: { Label: 'INFORMATIONAL', Original: 'info' },
      Workflow: { Status: 'RESOLVED' },
      ProductFields: { 'nodeclass-scanner/status': 'notice' },
    });
    expect(publisher.sent).toEqual([]);
    expect(store.stateOf(noticeId)?.status).toBe('resolved');
  });
});

describe('deliverToSecurityHub', () => {
  const stamp = {
    cluster: { account: '111122223333', region: 'eu-west-1', name: 'prod' },
    scanId: 's',
    scanSeq: 1,
    at: '2026-11-02T00:00:00.000Z',
  };

  it('does nothing without a sink', async () => {
    const outcome = await deliverToSecurityHub(
      undefined,
      { cluster: 'prod', stamp, changes: [], silenced: [] },
      silentLogger
    );
    expect(outcome.held.size).toBe(0);
  });

  it('names resources in the cluster’s region and imports in the home region', async () => {
    const finding = aFinding();
    const next = aStoredState(finding, '2026-11-01T00:00:00.000Z');
    const change: LifecycleChange = { kind: 'new', next, finding };
    await deliverToSecurityHub(
      sinkOf(hub),
      { cluster: 'prod', region: 'us-west-2', stamp, changes: [change], silenced: [] },
      silentLogger
    );
    const [record] = hub.importCalls[0] ?? [];
    expect(record?.ProductArn).toBe(
      'arn:aws:securityhub:eu-west-1:111122223333:product/111122223333/default'
    );
    expect(record?.Id).toBe(`nodeclass-scanner/us-west-2/${finding.id}`);
    expect(record?.Resources.map((resource) => resource.Region)).toEqual([
      'us-west-2',
      'us-west-2',
    ]);
    expect(record?.FirstObservedAt).toBe('2026-11-01T00:00:00.000Z');
    expect(record?.UpdatedAt).toBe(stamp.at);
  });
});
