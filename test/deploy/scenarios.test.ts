// The deployed service, end to end: the synthesized bundles run against emulated AWS that enforces
// the template's permissions. Each scenario asserts the alerts delivered, exactly. The oracle for
// "exactly" is the CLI's offline scan of the same world (`scan --world`), so an alert the deployed
// path loses, doubles or invents shows up as a difference.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GRANTS_KEPT_WITHOUT_USE } from '../../infra/permissions.js';
import type { World } from '../../lambda/adapters/world/schema.js';
import type { NamedPolicy } from '../../lambda/core/facts/permissions.js';
import { runCliCaptured, tempTree } from '../cli/support/run-cli.js';
import {
  policyVariants,
  type ReferencePolicyRelease,
  referenceControllerPolicies,
} from '../support/karpenter-controller-policy.js';
import { wildcardMatch } from './authorize.js';
import { ALERT_EMAIL, SIMULATION_CONTEXT } from './deployment-context.js';
import type { QueuedMessage } from './emulator/aws.js';
import {
  alertMessages,
  alertsOf,
  dispatchScanFor,
  event,
  redeliverScans,
} from './scenario-support.js';
import { Simulation } from './simulation.js';
import { synthesizedAssembly } from './synthesized-assembly.js';

const CLUSTERS = SIMULATION_CONTEXT.clusters;

/** What the CLI's offline scan of a world says, per `cluster findingId`. */
interface Oracle {
  /** Open findings that alert: fail/error, not a follow-on of another finding. */
  readonly open: ReadonlyMap<string, { readonly status: string; readonly materialHash: string }>;
  /** Findings that never alert: follow-ons (`causedBy`) and suppressed ones. */
  readonly quiet: ReadonlySet<string>;
  /** What each finding is about: its check and resource name. */
  readonly about: ReadonlyMap<string, { readonly checkId: string; readonly name: string }>;
}

/** An offline CLI scan of `world`, restricted to the deployed clusters. */
async function oracleOf(world: World, clusters: readonly string[] = CLUSTERS): Promise<Oracle> {
  const tree = tempTree({ 'world.json': JSON.stringify(world) });
  try {
    const run = await runCliCaptured(
      ['scan', '--world', join(tree.dir, 'world.json'), '--format', 'json', '--fail-on', 'none'],
      { now: new Date() }
    );
    const report = JSON.parse(run.stdout) as {
      findings: {
        id: string;
        checkId: string;
        status: string;
        materialHash: string;
        causedBy?: string;
        resource: { cluster: string; name: string };
      }[];
    };
    const open = new Map<string, { status: string; materialHash: string }>();
    const quiet = new Set<string>();
    const about = new Map<string, { checkId: string; name: string }>();
    for (const finding of report.findings) {
      if (!clusters.includes(finding.resource.cluster)) continue;
      const key = `${finding.resource.cluster} ${finding.id}`;
      about.set(key, { checkId: finding.checkId, name: finding.resource.name });
      if (finding.status === 'suppressed' || finding.causedBy !== undefined) quiet.add(key);
      else if (finding.status === 'fail' || finding.status === 'error') {
        open.set(key, { status: finding.status, materialHash: finding.materialHash });
      }
    }
    return { open, quiet, about };
  } finally {
    tree.cleanup();
  }
}

/** Alerting open findings (`cluster findingId`), sorted. */
async function expectedOpen(world: World, clusters: readonly string[] = CLUSTERS) {
  return [...(await oracleOf(world, clusters)).open.keys()].sort();
}

const asNew = (open: readonly string[]) => open.map((entry) => `new ${entry}`).sort();

/**
 * The alerts a change of the world from `before` to `after` must produce: new, resolved (not when
 * it merely became a follow-on or suppressed: that closes silently), and changed material facts
 * (not a failure that now errors: "could not look" stays silent).
 */
function changesBetween(before: Oracle, after: Oracle): string[] {
  const alerts: string[] = [];
  for (const [entry, now] of after.open) {
    const then = before.open.get(entry);
    if (then === undefined) alerts.push(`new ${entry}`);
    else if (!(then.status === 'fail' && now.status === 'error')) {
      if (then.materialHash !== now.materialHash) alerts.push(`changed ${entry}`);
    }
  }
  for (const entry of before.open.keys()) {
    if (!after.open.has(entry) && !after.quiet.has(entry)) alerts.push(`resolved ${entry}`);
  }
  return alerts.sort();
}

function copyWorld(world: World): World {
  return structuredClone(world);
}

let sim: Simulation;

beforeAll(async () => {
  sim = await Simulation.start((await synthesizedAssembly()).directory);
});

afterAll(async () => {
  await sim?.close();
});

/** The schedule's path: dispatch enqueues, the worker scans each message (failed ones redelivered). */
async function scheduledScan(options: { redeliveries?: number } = {}) {
  const dispatched = await sim.invoke('Dispatch', event('scheduled-event'));
  expect(dispatched.error).toBeUndefined();
  const messages = sim.aws.queued.splice(0);
  let pending = messages;
  for (let attempt = 0; attempt <= (options.redeliveries ?? 0) && pending.length > 0; attempt++) {
    pending = (await sim.deliverQueued(pending)).failed;
  }
  return { messages, failed: pending };
}

describe('schedule → dispatch → SQS → scan-cluster → SNS', () => {
  it('alerts every open finding of both clusters once, in one summary per cluster, by email above the threshold', async () => {
    // Prepare
    await sim.resetState();
    const open = await expectedOpen(sim.world);

    // Act
    const { messages, failed } = await scheduledScan();

    // Assess: a first scan is one summary per cluster, naming account, region and cluster
    expect(messages).toHaveLength(CLUSTERS.length);
    expect(failed).toEqual([]);
    expect(alertsOf(sim.aws.published)).toEqual(asNew(open));
    const summaries = alertMessages(sim.aws.published);
    expect(summaries.map((message) => message.attributes.change)).toEqual(
      CLUSTERS.map(() => 'summary')
    );
    expect(summaries.map((message) => message.attributes.cluster).sort()).toEqual([...CLUSTERS]);
    for (const message of summaries) {
      expect(message.attributes).toMatchObject({ account: sim.world.account, region: 'us-east-1' });
      expect(message.subject).toContain(`${message.attributes.cluster} in ${sim.world.account}`);
      expect(JSON.parse(message.message).email).toContain(
        `Where: cluster ${message.attributes.cluster}, account ${sim.world.account}, region us-east-1`
      );
    }
    const emailed = sim.emailDeliveries().filter((delivery) => delivery.endpoint === ALERT_EMAIL);
    expect(emailed.length).toBeGreaterThan(0);
    for (const { message } of emailed) {
      expect(['critical', 'high', undefined]).toContain(message.attributes.severity);
    }
    const digests = sim.aws.published.filter((message) => message.attributes.change === 'digest');
    expect(digests).toHaveLength(CLUSTERS.length);
  });

  it('stays quiet on the next schedule and on a duplicate delivery of the same message', async () => {
    // Prepare
    await sim.resetState();
    const { messages } = await scheduledScan();
    sim.aws.published.length = 0;

    // Act
    await scheduledScan();
    await sim.deliverQueued(messages);

    // Assess
    expect(sim.aws.published).toEqual([]);
  });
});

describe('event-driven rescans', () => {
  it('an AMI deregistration alerts the NodeClass pinning it, and nothing else', async () => {
    // Prepare: the legacy NodeClass pins this image by id.
    await sim.resetState();
    const imageId = 'ami-0b1e6f3a9c7d42531';
    await scheduledScan();
    const before = await oracleOf(sim.world);
    const world = copyWorld(sim.world);
    world.ec2.images = world.ec2.images.filter((image) => image.ImageId !== imageId);
    sim.setWorld(world);
    const after = await oracleOf(world);
    sim.aws.published.length = 0;
    const amiEvent = event('ami-state-change-deregistered');
    amiEvent.region = world.region;
    amiEvent.resources = [`arn:aws:ec2:${world.region}::image/${imageId}`];
    amiEvent.detail.ImageId = imageId;

    // Act
    const invocation = await sim.invoke('AmiEvent', amiEvent);

    // Assess
    expect(invocation.error).toBeUndefined();
    const appeared = [...after.open.keys()].filter((entry) => !before.open.has(entry));
    expect(appeared.length).toBeGreaterThan(0);
    expect(alertsOf(sim.aws.published)).toEqual(changesBetween(before, after));
  });

  it('an IAM edit forwarded from us-east-1 resolves the controller denial it fixed', async () => {
    // Prepare: the prod controller role may not pass its node role; the edit allows it.
    await sim.resetState();
    await scheduledScan();
    const before = await oracleOf(sim.world);
    const world = copyWorld(sim.world);
    world.iam.permissions = world.iam.permissions.filter(
      (row) =>
        !(
          row.principal.endsWith('KarpenterControllerRole-prod-use1') &&
          row.action === 'iam:PassRole'
        )
    );
    sim.setWorld(world);
    const after = await oracleOf(world);
    sim.aws.published.length = 0;
    const iamEvent = event('iam-put-role-policy');
    iamEvent.detail.requestParameters.roleName = 'KarpenterControllerRole-prod-use1';

    // Act
    const invocation = await sim.invoke('IamEvent', iamEvent);

    // Assess
    expect(invocation.error).toBeUndefined();
    const gone = [...before.open.keys()].filter((entry) => !after.open.has(entry));
    expect(gone.length).toBeGreaterThan(0);
    expect(alertsOf(sim.aws.published)).toEqual(changesBetween(before, after));
  });
});

/**
 * The world with each cluster's controller role carrying Karpenter's reference controller policy
 * of its release (prod-use1 runs v1.6.2: the v1.5.8 policy; staging-use1 v1.1.2: v1.1.10) as its
 * document, and no decision table: every simulation is evaluated by the IAM policy engine.
 */
function withReferencePolicies(
  world: World,
  edit: (cluster: string, policies: NamedPolicy[]) => NamedPolicy[] = (_, policies) => policies
): World {
  const copy = copyWorld(world);
  const releases: Record<string, ReferencePolicyRelease> = {
    'prod-use1': 'v1.5.8',
    'staging-use1': 'v1.1.10',
  };
  copy.iam.permissions = [];
  copy.iam.policies = Object.entries(releases).map(([cluster, release]) => {
    const [policy, ...more] = edit(
      cluster,
      referenceControllerPolicies(release, {
        partition: 'aws',
        region: copy.region,
        accountId: copy.account,
        clusterName: cluster,
        nodeRoleArn: `arn:aws:iam::${copy.account}:role/KarpenterNodeRole-${cluster}`,
      })
    );
    if (policy === undefined || more.length > 0) throw new Error(`${release}: one policy expected`);
    const name = `KarpenterControllerPolicy-${cluster}`;
    return {
      Arn: `arn:aws:iam::${copy.account}:policy/${name}`,
      PolicyName: name,
      DefaultVersionId: 'v1',
      Document: policy.document,
    };
  });
  return copy;
}

const PERMISSION_CHECK = /^controller-can-/;
/** The one class whose node role (KarpenterNodeRole-analytics) the reference policy does not name. */
const PASS_ROLE_ELSEWHERE = ['prod-use1 controller-can-pass-node-role analytics: fail'];

describe("Karpenter's reference controller policy, evaluated by an IAM policy engine", () => {
  it('passes every controller check of every NodeClass using the node role the policy names, and alerts what the CLI reports', async () => {
    // Prepare
    await sim.resetState();
    const world = withReferencePolicies(sim.world);
    sim.setWorld(world);
    sim.aws.published.length = 0;
    const oracle = await oracleOf(world);

    // Act
    await scheduledScan();

    // Assess: alerts are exactly the offline scan's open findings.
    expect(alertsOf(sim.aws.published)).toEqual(asNew([...oracle.open.keys()]));
    // No permission verdict is `error`; the only permission failures are PassRole on node roles
    // the reference policy does not name.
    const permissionFindings = [...oracle.open.entries()].flatMap(([entry, finding]) => {
      const about = oracle.about.get(entry);
      return about !== undefined && PERMISSION_CHECK.test(about.checkId)
        ? [`${entry.split(' ')[0]} ${about.checkId} ${about.name}: ${finding.status}`]
        : [];
    });
    expect(permissionFindings.sort()).toEqual(PASS_ROLE_ELSEWHERE);
  });

  it("a Deny on one NodeClass tag value alerts that class's controller-can-launch, and nothing else", async () => {
    // Prepare
    await sim.resetState();
    const before = withReferencePolicies(sim.world);
    sim.setWorld(before);
    await scheduledScan();
    const after = withReferencePolicies(sim.world, (cluster, policies) =>
      cluster === 'staging-use1' ? policyVariants.denyNodeClassByTag(policies, 'default') : policies
    );
    sim.setWorld(after);
    sim.aws.published.length = 0;

    // Act
    await scheduledScan();

    // Assess
    const alerts = alertsOf(sim.aws.published);
    expect(alerts).toEqual(changesBetween(await oracleOf(before), await oracleOf(after)));
    expect(alerts).toHaveLength(1);
    const [cluster, id] = (alerts[0] ?? '').split(' ').slice(1);
    expect(cluster).toBe('staging-use1');
    expect((await oracleOf(after)).about.get(`${cluster} ${id}`)).toEqual({
      checkId: 'controller-can-launch',
      name: 'default',
    });
  });
});

/** Redelivers failed scan requests up to `times` more. */
const redeliver = (messages: readonly QueuedMessage[], times = 3) =>
  redeliverScans(sim, messages, times);
const dispatchFor = (cluster: string) => dispatchScanFor(sim, cluster);

describe('failures and redelivery', () => {
  const cluster = 'prod-use1';

  it('SNS refusing the publish: the redelivery alerts once', async () => {
    // Prepare
    await sim.resetState();
    const message = await dispatchFor(cluster);
    sim.aws.setFault('sns', { kind: 'server-error', fromCall: 1 });

    // Act
    const { failed } = await sim.deliverQueued([message]);
    sim.aws.setFault('sns', undefined);
    const refused = sim.aws.published.length;
    const left = await redeliver(failed);

    // Assess
    expect(failed).toHaveLength(1);
    expect(refused).toBe(0);
    expect(left).toEqual([]);
    const delivered = alertsOf(sim.aws.published);
    expect(delivered).toEqual(asNew(await expectedOpen(sim.world, [cluster])));
  });
});

describe('two overlapping scans of one cluster', () => {
  const cluster = 'prod-use1';
  const scanRole = () => sim.fn('ScanCluster').roleLogicalId;

  /** The `default` NodeClass of prod-use1 with IMDSv1 allowed (imds-v2-required fails). */
  function withImdsV1(world: World): World {
    const copy = copyWorld(world);
    const prod = copy.eks.clusters.find((entry) => entry.name === cluster);
    const nodeClass = prod?.kubernetes?.ec2NodeClasses.find(
      (object) => (object as { metadata: { name: string } }).metadata.name === 'default'
    ) as { spec: { metadataOptions: Record<string, unknown> } } | undefined;
    if (!nodeClass) throw new Error('no default NodeClass in prod-use1');
    nodeClass.spec.metadataOptions.httpTokens = 'optional';
    return copy;
  }

  /**
   * The older scan reads the cluster, then waits at its first finding query while a newer scan
   * reads the changed cluster and publishes; then the older one finishes on its stale view.
   */
  async function overlap(start: World, changed: World) {
    await sim.resetState();
    sim.setWorld(start);
    await redeliver([await dispatchFor(cluster)], 1);
    const before = await oracleOf(start, [cluster]);
    const after = await oracleOf(changed, [cluster]);
    sim.aws.published.length = 0;

    const olderMessage = await dispatchFor(cluster);
    const gate = sim.aws.hold(
      (call) =>
        call.principal === scanRole() && call.service === 'dynamodb' && call.target === 'Query'
    );
    const older = sim.deliverQueued([olderMessage]);
    await gate.reached;
    sim.setWorld(changed);
    const newer = await sim.deliverQueued([await dispatchFor(cluster)]);
    gate.release();
    const olderFailed = (await older).failed;
    await redeliver(olderFailed);
    return { before, after, newerFailed: newer.failed };
  }

  it('a NodeClass broken between the reads: the stale scan publishes no RESOLVED', async () => {
    // Act
    await sim.resetState();
    const { before, after, newerFailed } = await overlap(sim.world, withImdsV1(sim.world));

    // Assess
    expect(newerFailed).toEqual([]);
    expect(after.open.size).toBeGreaterThan(before.open.size);
    expect(alertsOf(sim.aws.published)).toEqual(changesBetween(before, after));
  });

  it('a NodeClass fixed between the reads: the stale scan does not re-open it', async () => {
    // Act
    await sim.resetState();
    const broken = withImdsV1(sim.world);
    const { before, after, newerFailed } = await overlap(broken, sim.world);

    // Assess
    expect(newerFailed).toEqual([]);
    expect(before.open.size).toBeGreaterThan(after.open.size);
    expect(alertsOf(sim.aws.published)).toEqual(changesBetween(before, after));
  });
});

describe('NodePools forbidden (HTTP 403)', () => {
  it('resolves nothing: NodePool-dependent permission checks report error, not a verdict', async () => {
    // Prepare
    await sim.resetState();
    await redeliver([await dispatchFor('prod-use1')], 1);
    sim.aws.published.length = 0;
    sim.kube.faults.set('prod-use1', new Map([['/apis/karpenter.sh/v1/nodepools', 403]]));

    // Act
    await redeliver([await dispatchFor('prod-use1')], 1);

    // Assess: the read failure alerts; nothing is resolved
    const alerts = alertsOf(sim.aws.published);
    expect(alerts.filter((alert) => alert.startsWith('resolved'))).toEqual([]);
    const items = await sim.tableItems();
    const readFindings = items
      .filter((item) => item.checkId === 'scanner-can-read-cluster' && item.status === 'open')
      .map((item) => `new prod-use1 ${String(item.id)}`);
    expect(alerts.filter((alert) => readFindings.includes(alert)).length).toBeGreaterThan(0);
    // The launch check errors: shown under the read failure (a follow-on, closed silently if it
    // was open), or still open as an error; never a verdict, never notified as resolved.
    const launch = items.filter(
      (item) => item.checkId === 'controller-can-launch' && item.cluster === 'prod-use1'
    );
    const text = alertMessages(sim.aws.published)
      .map((message) => JSON.parse(message.message).email as string)
      .join('\n');
    const openErrors = launch.filter(
      (item) => item.status === 'open' && item.findingStatus === 'error'
    );
    expect(openErrors.length > 0 || text.includes('- controller-can-launch (error)')).toBe(true);
    for (const item of launch.filter((entry) => entry.status === 'resolved')) {
      expect(String(item.lastNotified) < String(item.resolvedAt)).toBe(true);
    }
  });
});

describe('alarms', () => {
  it('CloudWatch may publish every alarm to its topic, and the alert email receives it', async () => {
    // Prepare
    await sim.resetState();
    const alarms = sim.template.ofType('AWS::CloudWatch::Alarm');
    expect(alarms.length).toBeGreaterThan(0);

    // Act
    for (const [alarmId, alarm] of alarms) {
      const actions = sim.template.resolve([
        ...((alarm.Properties?.AlarmActions as unknown[]) ?? []),
        ...((alarm.Properties?.OKActions as unknown[]) ?? []),
      ]) as string[];
      expect(actions.length, alarmId).toBeGreaterThan(0);
      for (const topic of new Set(actions)) sim.aws.alarmPublish(topic, alarmId);
    }

    // Assess
    const emailed = sim.emailDeliveries().filter((delivery) => delivery.endpoint === ALERT_EMAIL);
    expect(emailed).toHaveLength(alarms.length);
  });
});

/** `cluster findingId` of each Security Hub finding in `state` (ACTIVE or ARCHIVED), sorted. */
function securityHubFindings(state: 'ACTIVE' | 'ARCHIVED'): string[] {
  return [...sim.aws.securityHub.values()]
    .filter((record) => record.finding.RecordState === state)
    .map((record) => {
      const fields = record.finding.ProductFields as Record<string, string>;
      return `${fields['nodeclass-scanner/cluster']} ${fields['nodeclass-scanner/findingId']}`;
    })
    .sort();
}

describe('Security Hub (securityHub on)', () => {
  it('imports every open finding once, then archives and resolves the fixed ones', async () => {
    // Prepare
    await sim.resetState();
    sim.aws.securityHub.clear();
    const before = await oracleOf(sim.world);

    // Act: a first scan, a quiet one, then the legacy NodeClass is removed (its findings fixed).
    await scheduledScan();
    const afterFirst = securityHubFindings('ACTIVE');
    await scheduledScan();
    const world = copyWorld(sim.world);
    const prod = world.eks.clusters.find((cluster) => cluster.name === 'prod-use1');
    if (prod?.kubernetes) {
      prod.kubernetes.ec2NodeClasses = prod.kubernetes.ec2NodeClasses.filter(
        (object) => (object as { metadata?: { name?: string } }).metadata?.name !== 'legacy'
      );
      prod.kubernetes.nodePools = prod.kubernetes.nodePools.filter(
        (object) =>
          (object as { spec?: { template?: { spec?: { nodeClassRef?: { name?: string } } } } }).spec
            ?.template?.spec?.nodeClassRef?.name !== 'legacy'
      );
    }
    sim.setWorld(world);
    const after = await oracleOf(world);
    sim.aws.published.length = 0;
    await scheduledScan();

    // Assess: every alerting finding was imported ACTIVE, once (the quiet scan imported nothing).
    expect(afterFirst).toEqual([...before.open.keys()].sort());
    const resolved = changesBetween(before, after)
      .filter((alert) => alert.startsWith('resolved '))
      .map((alert) => alert.slice('resolved '.length));
    expect(resolved.length).toBeGreaterThan(0);
    expect(alertsOf(sim.aws.published)).toEqual(changesBetween(before, after));
    expect(securityHubFindings('ACTIVE')).toEqual([...after.open.keys()].sort());
    for (const record of sim.aws.securityHub.values()) {
      const fields = record.finding.ProductFields as Record<string, string>;
      const key = `${fields['nodeclass-scanner/cluster']} ${fields['nodeclass-scanner/findingId']}`;
      if (resolved.includes(key)) {
        expect(record.finding.Compliance?.Status, key).toBe('PASSED');
        expect(record.workflowStatus, key).toBe('RESOLVED');
        expect(
          record.history.map((entry) => entry.replace(/ by .*$/, '')),
          key
        ).toEqual([
          expect.stringMatching(/^import ACTIVE (FAILED|NOT_AVAILABLE)$/),
          'import ARCHIVED PASSED',
          'workflow RESOLVED',
        ]);
      } else if (after.open.has(key)) {
        expect(record.history, key).toHaveLength(1);
        expect(record.workflowStatus, key).toBe('NEW');
      }
    }
    // Each finding is this account's, in the home region, under its default product.
    for (const record of sim.aws.securityHub.values()) {
      expect(record.finding.ProductArn).toBe(
        `arn:aws:securityhub:us-east-1:${sim.world.account}:product/${sim.world.account}/default`
      );
    }
  });

  it('Security Hub failing: the change waits, then reaches Security Hub and SNS once', async () => {
    // Prepare
    await sim.resetState();
    sim.aws.securityHub.clear();
    const open = await expectedOpen(sim.world);
    sim.aws.setFault('securityhub', { kind: 'server-error', fromCall: 1 });

    // Act: Security Hub down for a whole schedule, then back.
    await scheduledScan();
    const alertsWhileDown = alertsOf(sim.aws.published);
    sim.aws.clearFaults();
    await scheduledScan();
    await scheduledScan();

    // Assess: nothing was claimed while down; afterwards both sinks have every finding, once.
    expect(alertsWhileDown).toEqual([]);
    expect(alertsOf(sim.aws.published)).toEqual(asNew(open));
    expect(securityHubFindings('ACTIVE')).toEqual(open);
    for (const record of sim.aws.securityHub.values()) expect(record.history).toHaveLength(1);
  });
});

describe('permissions, as the template grants them', () => {
  /** Called by AWS on the function's behalf, never by its code. */
  const USED_BY_AWS: Readonly<Record<string, string>> = {
    'logs:CreateLogStream': 'the Lambda runtime writes the function logs',
    'logs:PutLogEvents': 'the Lambda runtime writes the function logs',
    'sqs:GetQueueAttributes': 'the SQS event source mapping reads the queue',
    'sqs:GetQueueUrl': 'the SQS event source mapping resolves the queue',
  };
  /** Granted, and reachable, but no scenario here takes that path. */
  const NOT_EXERCISED_HERE: Readonly<Record<string, string>> = {
    'AmiEvent: iam:GetRole':
      'the AMI scenario rescans a NodeClass that names an instance profile, not a role',
    'AmiEvent: securityhub:BatchUpdateFindings':
      'the AMI scenario only opens a finding; resolving through Security Hub is the schedule’s scenario',
  };

  it('denied no call any scenario made', () => {
    expect(sim.aws.calls.filter((call) => !call.allowed)).toEqual([]);
  });

  it('exercised every granted action, or names why it is kept', () => {
    const kept = new Map(GRANTS_KEPT_WITHOUT_USE.map(({ action, reason }) => [action, reason]));
    const unused: string[] = [];
    for (const fn of sim.functions.values()) {
      const used = sim.aws.calls
        .filter((call) => call.principal === fn.roleLogicalId && call.allowed)
        .map((call) => call.action);
      const granted = sim.template
        .roleStatements(fn.roleLogicalId)
        .filter((statement) => statement.Effect === 'Allow')
        .flatMap((statement) =>
          Array.isArray(statement.Action) ? statement.Action : [statement.Action ?? '']
        );
      for (const action of new Set(granted)) {
        const exercised = used.some((call) => wildcardMatch(action, call, true));
        const reason =
          kept.get(action) ?? USED_BY_AWS[action] ?? NOT_EXERCISED_HERE[`${fn.name}: ${action}`];
        if (!exercised && reason === undefined) {
          unused.push(`${fn.name}: ${action}`);
        }
      }
    }
    expect(unused).toEqual([]);
  });
});
