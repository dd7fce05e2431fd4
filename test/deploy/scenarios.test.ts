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
import type { PublishedMessage, QueuedMessage } from './emulator/aws.js';
import {
  alertMessages,
  alertsOf,
  dispatchScanFor,
  event,
  logLinesOf,
  redeliverScans,
} from './scenario-support.js';
import {
  EBS_KEYS,
  SAME_NAME_CLUSTER,
  SECOND_REGION,
  SECOND_REGION_CLUSTER,
  Simulation,
} from './simulation.js';
import { synthesizedAssembly } from './synthesized-assembly.js';

const CLUSTERS = SIMULATION_CONTEXT.clusters;

/** What the CLI's offline scan of a world says, per `cluster findingId`. */
interface Oracle {
  /** Open findings that alert: fail/error, not a follow-on of another finding. */
  readonly open: ReadonlyMap<string, { readonly status: string; readonly materialHash: string }>;
  /** Findings that never alert as open: follow-ons (`causedBy`) and suppressed ones. */
  readonly quiet: ReadonlySet<string>;
  /** The suppressed ones among them: an open one that becomes suppressed alerts `suppressed`. */
  readonly suppressed: ReadonlySet<string>;
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
    const suppressed = new Set<string>();
    const about = new Map<string, { checkId: string; name: string }>();
    for (const finding of report.findings) {
      if (!clusters.includes(finding.resource.cluster)) continue;
      const key = `${finding.resource.cluster} ${finding.id}`;
      about.set(key, { checkId: finding.checkId, name: finding.resource.name });
      if (finding.status === 'suppressed') suppressed.add(key);
      if (finding.status === 'suppressed' || finding.causedBy !== undefined) quiet.add(key);
      else if (finding.status === 'fail' || finding.status === 'error') {
        open.set(key, { status: finding.status, materialHash: finding.materialHash });
      }
    }
    return { open, quiet, suppressed, about };
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
 * it merely became a follow-on: that closes silently), suppressed (an open one an annotation or
 * rule now accepts), and changed material facts (not a failure that now errors: "could not look"
 * stays silent).
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
    if (after.suppressed.has(entry)) alerts.push(`suppressed ${entry}`);
    else if (!after.open.has(entry) && !after.quiet.has(entry)) alerts.push(`resolved ${entry}`);
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

describe('two clusters of one name in two regions', () => {
  /** `change cluster region findingId` for every change notified (summaries expanded), sorted. */
  const regionalAlerts = (messages: readonly PublishedMessage[]) =>
    alertMessages(messages)
      .flatMap((message) =>
        alertsOf([message]).map((alert) => {
          const [change, cluster, id] = alert.split(' ');
          return `${change} ${cluster} ${message.attributes.region} ${id}`;
        })
      )
      .sort();
  const inRegion = (open: readonly string[], region: string) =>
    open.map((entry) => {
      const [cluster, id] = entry.split(' ');
      return `new ${cluster} ${region} ${id}`;
    });

  it('alerts each once, naming its region, and then nothing for two more schedules', async () => {
    // Prepare: prod-use1 exists in the discovery region too (discovered there by the schedule),
    // holding an object of the home region's prod-use1: the same finding ids, in two clusters.
    await sim.resetState();
    sim.aws.securityHub.clear();
    const west = copyWorld(sim.secondRegionWorld);
    west.eks.clusters = [sim.sameNameCluster];
    sim.setSecondRegionWorld(west);
    const home = inRegion(await expectedOpen(sim.world), sim.world.region);
    const away = inRegion(await expectedOpen(west, [SAME_NAME_CLUSTER]), SECOND_REGION);
    const shared = away.filter((entry) =>
      home.includes(entry.replace(` ${SECOND_REGION} `, ` ${sim.world.region} `))
    );
    expect(shared.length).toBeGreaterThan(0);

    // Act: three schedules while nothing changes
    const rounds: { requests: unknown[]; published: PublishedMessage[] }[] = [];
    for (let round = 0; round < 3; round++) {
      sim.aws.published.length = 0;
      const { messages, failed } = await scheduledScan();
      expect(failed).toEqual([]);
      rounds.push({
        requests: messages.map((message) => JSON.parse(message.body)),
        published: [...sim.aws.published],
      });
    }

    // Assess: both were scanned each time, as two clusters
    for (const { requests } of rounds) {
      const sameName = (requests as { cluster: string; region?: string }[])
        .filter((request) => request.cluster === SAME_NAME_CLUSTER)
        .map((request) => request.region ?? 'home');
      expect(sameName.sort()).toEqual([SECOND_REGION, 'home']);
    }
    // The first schedule alerts every open finding of each, once, in its own region's messages
    const [first, second, third] = rounds;
    expect(regionalAlerts(first?.published ?? [])).toEqual([...home, ...away].sort());
    const summaries = alertMessages(first?.published ?? []).filter(
      (message) => message.attributes.cluster === SAME_NAME_CLUSTER
    );
    expect(summaries.map((message) => [message.attributes.region, message.subject]).sort()).toEqual(
      [
        [SECOND_REGION, expect.stringContaining(`on ${SAME_NAME_CLUSTER}@${SECOND_REGION} in `)],
        [sim.world.region, expect.stringContaining(`on ${SAME_NAME_CLUSTER} in `)],
      ]
    );
    // ...then nothing at all: no false RESOLVED, no false NEW, no digest
    expect(second?.published).toEqual([]);
    expect(third?.published).toEqual([]);
    // Each cluster's state is its own, and so are its Security Hub findings.
    const partitions = new Set(
      (await sim.tableItems())
        .filter((item) => String(item.sk).startsWith('FINDING#'))
        .map((item) => String(item.pk))
    );
    expect(partitions).toContain(
      `CLUSTER#${sim.world.account}/${SECOND_REGION}/${SAME_NAME_CLUSTER}`
    );
    expect(partitions).toContain(
      `CLUSTER#${sim.world.account}/${sim.world.region}/${SAME_NAME_CLUSTER}`
    );
    const imported = [...sim.aws.securityHub.values()]
      .filter((record) => record.finding.RecordState === 'ACTIVE')
      .map((record) => record.finding.Id);
    for (const entry of shared) {
      const id = entry.split(' ')[3];
      expect(imported).toContain(`nodeclass-scanner/${SECOND_REGION}/${id}`);
      expect(imported).toContain(`nodeclass-scanner/${sim.world.region}/${id}`);
    }
  });
});

describe('NodePools that cannot launch a node', () => {
  it('alerts each NodePool Karpenter could not launch for, and none of their healthy controls', async () => {
    // Prepare
    await sim.resetState();
    const oracle = await oracleOf(sim.world);

    // Act
    await scheduledScan();

    // Assess: the launchability alerts, by NodePool, are the offline scan's.
    const launchability = alertsOf(sim.aws.published).flatMap((alert) => {
      const [, cluster, id] = alert.split(' ');
      const about = oracle.about.get(`${cluster} ${id}`);
      return about?.checkId === 'nodepool-instance-types-offered'
        ? [`${cluster} ${about.name}`]
        : [];
    });
    expect(launchability.sort()).toEqual([
      // Limits without a unit: memory 1000 is 1000 bytes.
      'prod-use1 capped',
      // arm64, restricted to the x86-only families m7i and c7i.
      'prod-use1 graviton',
      // x2iedn is offered only in a zone without a subnet.
      'prod-use1 memory-optimized',
      // Its reservation is in us-east-1d, where the class has no subnet.
      'prod-use1 reserved-analytics',
    ]);
    // The controls: multi-architecture, limits with units, a reservation in a subnet's zone.
    const healthy = [...oracle.about.entries()].filter(
      ([entry, about]) =>
        about.checkId === 'nodepool-instance-types-offered' &&
        ['general', 'multi-arch', 'reserved-default', 'compute'].includes(about.name) &&
        oracle.open.has(entry)
    );
    expect(healthy).toEqual([]);
  });
});

describe('KMS keys for EBS', () => {
  it('alerts the NodeClass whose data volume uses a disabled key, none of the classes on the usable default key, and reads each key once', async () => {
    // Prepare
    await sim.resetState();
    const oracle = await oracleOf(sim.world);
    const callsBefore = sim.aws.calls.length;

    // Act
    await scheduledScan();

    // Assess: the alert, by NodeClass, is the offline scan's.
    const kmsAlerts = alertsOf(sim.aws.published).flatMap((alert) => {
      const [, cluster, id] = alert.split(' ');
      const about = oracle.about.get(`${cluster} ${id}`);
      return about?.checkId === 'ebs-kms-key-usable' ? [`${cluster} ${about.name}`] : [];
    });
    expect(kmsAlerts).toEqual([`prod-use1 analytics`]);
    // The controls: every class's root volume on the account's default key passes.
    const open = [...oracle.about.entries()]
      .filter(([entry, about]) => about.checkId === 'ebs-kms-key-usable' && oracle.open.has(entry))
      .map(([, about]) => about.name);
    expect(open).toEqual(['analytics']);
    // Read with the scanning function's own role: each key, its policy and grants.
    const kmsCalls = sim.aws.calls
      .slice(callsBefore)
      .filter(
        (call) =>
          ['kms:DescribeKey', 'kms:GetKeyPolicy', 'kms:ListGrants'].includes(call.action) &&
          call.principal === sim.fn('ScanCluster').roleLogicalId
      );
    expect(kmsCalls.every((call) => call.allowed)).toBe(true);
    const keyArn = (id: string) => `arn:aws:kms:${sim.world.region}:${sim.world.account}:key/${id}`;
    expect([...new Set(kmsCalls.map((call) => `${call.action} ${call.resource}`))].sort()).toEqual(
      [EBS_KEYS.defaultKeyId, EBS_KEYS.retiredKeyId]
        .flatMap((id) =>
          ['kms:DescribeKey', 'kms:GetKeyPolicy', 'kms:ListGrants'].map(
            (action) => `${action} ${keyArn(id)}`
          )
        )
        .sort()
    );
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

  it('an AMI deregistration in another scanned region, forwarded home, alerts only the NodeClass pinning it there', async () => {
    // Prepare: a cluster appears in the discovery region; its legacy NodeClass pins the image
    // the home region's legacy NodeClass pins too (an id names one region's image: the event's
    // region, not the id, must decide what is rescanned). The schedule discovers and scans it.
    await sim.resetState();
    const imageId = 'ami-0b1e6f3a9c7d42531';
    const west = copyWorld(sim.secondRegionWorld);
    west.eks.clusters = [sim.secondRegionCluster];
    sim.setSecondRegionWorld(west);
    const { messages, failed } = await scheduledScan();
    expect(failed).toEqual([]);
    expect(messages.map((message) => JSON.parse(message.body))).toContainEqual(
      expect.objectContaining({ cluster: SECOND_REGION_CLUSTER, region: SECOND_REGION })
    );
    const before = await oracleOf(west, [SECOND_REGION_CLUSTER]);
    const deregistered = copyWorld(west);
    deregistered.ec2.images = deregistered.ec2.images.filter((image) => image.ImageId !== imageId);
    sim.setSecondRegionWorld(deregistered);
    const after = await oracleOf(deregistered, [SECOND_REGION_CLUSTER]);
    sim.aws.published.length = 0;
    const firstCall = sim.aws.calls.length;
    const amiEvent = event('ami-state-change-deregistered');
    amiEvent.region = SECOND_REGION;
    amiEvent.resources = [`arn:aws:ec2:${SECOND_REGION}::image/${imageId}`];
    amiEvent.detail.ImageId = imageId;

    // Act: EC2 puts the event on the second region's bus; the synthesized rules take it from there.
    const deliveries = await sim.putEvent(SECOND_REGION, amiEvent);

    // Assess: forwarded to the home bus, then to the ami-event function, which ran cleanly.
    expect(deliveries.map((delivery) => delivery.target)).toEqual([
      `arn:aws:events:us-east-1:${sim.world.account}:event-bus/default`,
      sim.fn('AmiEvent').logicalId,
    ]);
    expect(sim.eventInvocations.map(({ fn }) => fn)).toEqual(['AmiEvent']);
    expect(sim.eventInvocations[0]?.invocation.error).toBeUndefined();
    const appeared = [...after.open.keys()].filter((entry) => !before.open.has(entry));
    expect(appeared.length).toBeGreaterThan(0);
    expect(alertsOf(sim.aws.published)).toEqual(changesBetween(before, after));
    for (const message of alertMessages(sim.aws.published)) {
      expect(message.attributes).toMatchObject({
        cluster: SECOND_REGION_CLUSTER,
        region: SECOND_REGION,
      });
    }
    // The image was looked up, and the cluster read, in the event's region only.
    const amiEventCalls = sim.aws.calls
      .slice(firstCall)
      .filter((call) => call.principal === sim.fn('AmiEvent').roleLogicalId);
    const regional = amiEventCalls.filter((call) => ['ec2', 'eks'].includes(call.service));
    expect(regional.length).toBeGreaterThan(0);
    expect(new Set(regional.map((call) => call.region))).toEqual(new Set([SECOND_REGION]));
  });

  it('an AMI event of a region the deployment does not scan reaches no function', async () => {
    // Prepare
    await sim.resetState();
    const elsewhere = event('ami-state-change-deregistered');
    elsewhere.region = 'ap-south-1';
    elsewhere.resources = [`arn:aws:ec2:ap-south-1::image/${elsewhere.detail.ImageId}`];

    // Act
    const deliveries = await sim.putEvent('ap-south-1', elsewhere);

    // Assess
    expect(deliveries).toEqual([]);
    expect(sim.eventInvocations).toEqual([]);
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

describe('an object too large to store beside a real regression', () => {
  const cluster = 'prod-use1';
  /** Karpenter's CRD bounds no selector term; the kube client reads up to 4 MiB. */
  const POISON_NAME = `${'a'.repeat(419_999)}*`;

  /**
   * prod-use1 with a NodeClass `poison` whose AMI name term has 420,000 characters, and its
   * `default` NodeClass switched to IMDSv1 (`httpTokens: optional`: imds-v2-required fails).
   */
  function withPoisonAndRegression(world: World): World {
    const copy = copyWorld(world);
    const classes = copy.eks.clusters.find((entry) => entry.name === cluster)?.kubernetes
      ?.ec2NodeClasses as
      | { metadata: Record<string, unknown>; spec: Record<string, unknown>; status?: unknown }[]
      | undefined;
    const base = classes?.find((object) => object.metadata.name === 'default');
    if (!classes || !base) throw new Error(`no default NodeClass in ${cluster}`);
    const { status: _status, ...poison } = structuredClone(base);
    classes.push({
      ...poison,
      metadata: { name: 'poison', generation: 1 },
      spec: { ...poison.spec, amiFamily: 'AL2023', amiSelectorTerms: [{ name: POISON_NAME }] },
    });
    (base.spec.metadataOptions as Record<string, unknown>).httpTokens = 'optional';
    return copy;
  }

  it('alerts the regression once; the poison yields bounded findings and no scan failure', async () => {
    // Prepare: the clusters' first scan, then both changes
    await sim.resetState();
    await scheduledScan();
    const before = await oracleOf(sim.world);
    const world = withPoisonAndRegression(sim.world);
    sim.setWorld(world);
    const after = await oracleOf(world);
    sim.aws.published.length = 0;

    // Act
    const dispatched = await sim.invoke('Dispatch', event('scheduled-event'));
    const { failed, invocations } = await sim.deliverQueued(sim.aws.queued.splice(0));

    // Assess: no scan failed, nor logged a failure
    expect(dispatched.error).toBeUndefined();
    expect(failed).toEqual([]);
    const logLines = logLinesOf(invocations);
    expect(logLines.filter((line) => line.message === 'Cluster scan failed')).toEqual([]);
    expect(logLines.filter((line) => 'ScanFailures' in line)).toEqual([]);
    // What the CLI reports changed is alerted, once, plus the one thing only the service meets:
    // the poison's index entry is over DynamoDB's item size, an error on that NodeClass.
    const items = await sim.tableItems();
    const refused = items.filter(
      (item) =>
        item.checkId === 'nodeclass-schema-valid' &&
        item.resourceName === 'poison' &&
        item.findingStatus === 'error' &&
        item.status === 'open'
    );
    expect(refused).toHaveLength(1);
    expect(String(refused[0]?.message)).toMatch(/^The scanner cannot store this EC2NodeClass/);
    const alerts = alertsOf(sim.aws.published);
    expect(alerts).toEqual(
      [...changesBetween(before, after), `new ${cluster} ${String(refused[0]?.id)}`].sort()
    );
    const regression = [...after.open.keys()].filter((entry) => {
      const about = after.about.get(entry);
      return (
        entry.startsWith(`${cluster} `) &&
        about?.checkId === 'imds-v2-required' &&
        about.name === 'default'
      );
    });
    expect(regression).toHaveLength(1);
    expect(alerts.filter((alert) => alert === `new ${regression[0]}`)).toHaveLength(1);
    // Bounded: stored items and messages; the name is never carried whole
    for (const item of items.filter((entry) => entry.resourceName === 'poison')) {
      expect(Buffer.byteLength(JSON.stringify(item))).toBeLessThan(8 * 1024);
    }
    for (const message of sim.aws.published) {
      expect(Buffer.byteLength(message.message)).toBeLessThan(256 * 1024);
      expect(message.message).not.toContain('a'.repeat(5_000));
    }
    expect(JSON.stringify(sim.aws.published)).toMatch(/bytes elided/);
    // The poison is not indexed (the log names it); the others are
    const indexed = items.filter((item) => item.pk === 'NODECLASS').map((item) => item.sk);
    const indexKey = `${sim.world.account}/${sim.world.region}/${cluster}`;
    expect(indexed).toContain(`${indexKey}#default`);
    expect(indexed).not.toContain(`${indexKey}#poison`);
    expect(
      logLines.filter(
        (line) => line.message === 'Item too large to store' && line.cluster === cluster
      )
    ).toMatchObject([{ object: 'EC2NodeClass/poison', item: 'nodeclass-index' }]);

    // Act: the next schedule
    sim.aws.published.length = 0;
    const next = await scheduledScan();

    // Assess: quiet (the bounded findings keep their ids and material hashes)
    expect(next.failed).toEqual([]);
    expect(alertsOf(sim.aws.published)).toEqual([]);
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

describe('ignore-check annotations (this deployment: annotationSuppression imds-*)', () => {
  const cluster = 'staging-use1';
  const IMDS = 'ignore-check.nodeclass-scanner/imds-v2-required';
  const ENCRYPTION = 'ignore-check.nodeclass-scanner/root-volume-encrypted';
  /** The deployment's annotationSuppression, as the CLI's config file gives it to the oracle. */
  const POLICY = `annotationSuppression: ${JSON.stringify(SIMULATION_CONTEXT.annotationSuppression)}\n`;

  /**
   * staging-use1's NodeClass allowing IMDSv1 (imds-v2-required fails) with an unencrypted root
   * volume (root-volume-encrypted fails), carrying `annotations`.
   */
  function brokenStaging(annotations: Record<string, string> = {}): World {
    const copy = copyWorld(sim.world);
    const staging = copy.eks.clusters.find((entry) => entry.name === cluster);
    const nodeClass = staging?.kubernetes?.ec2NodeClasses.find(
      (object) => (object as { metadata: { name: string } }).metadata.name === 'default'
    ) as
      | {
          metadata: { annotations?: Record<string, string> };
          spec: {
            metadataOptions: Record<string, unknown>;
            blockDeviceMappings: { ebs: Record<string, unknown> }[];
          };
        }
      | undefined;
    const rootVolume = nodeClass?.spec.blockDeviceMappings[0];
    if (!nodeClass || !rootVolume) throw new Error(`no default NodeClass in ${cluster}`);
    nodeClass.spec.metadataOptions.httpTokens = 'optional';
    rootVolume.ebs.encrypted = false;
    nodeClass.metadata.annotations = { ...nodeClass.metadata.annotations, ...annotations };
    return copy;
  }

  /** The CLI's offline scan of `world` (the oracle), with the deployment's policy unless `allow`. */
  async function cliFindings(world: World, policy: 'deployment' | 'allow' = 'deployment') {
    const tree = tempTree({ 'world.json': JSON.stringify(world), 'scan.yaml': POLICY });
    try {
      const run = await runCliCaptured(
        [
          'scan',
          '--world',
          join(tree.dir, 'world.json'),
          ...(policy === 'deployment' ? ['--config', join(tree.dir, 'scan.yaml')] : []),
          '--format',
          'json',
          '--fail-on',
          'none',
        ],
        { now: new Date() }
      );
      const report = JSON.parse(run.stdout) as {
        findings: {
          id: string;
          checkId: string;
          status: string;
          message: string;
          causedBy?: string;
          resource: { cluster: string };
        }[];
      };
      return report.findings.filter((finding) => finding.resource.cluster === cluster);
    } finally {
      tree.cleanup();
    }
  }

  const idOf = (findings: Awaited<ReturnType<typeof cliFindings>>, checkId: string) =>
    findings.find((finding) => finding.checkId === checkId)?.id ?? `no ${checkId} finding`;
  const scanStaging = async () =>
    expect(await redeliver([await dispatchFor(cluster)], 1)).toEqual([]);
  const securityHubRecord = (findingId: string) =>
    [...sim.aws.securityHub.values()].find(
      (record) =>
        (record.finding.ProductFields as Record<string, string>)['nodeclass-scanner/findingId'] ===
        findingId
    );

  it('an annotation on an open alert: exactly one SUPPRESSED message, SUPPRESSED in Security Hub; removed, NEW again', async () => {
    // Prepare: both checks alert
    await sim.resetState();
    sim.aws.securityHub.clear();
    const broken = brokenStaging();
    sim.setWorld(broken);
    await scanStaging();
    const imdsId = idOf(await cliFindings(broken), 'imds-v2-required');
    expect(alertsOf(sim.aws.published)).toContain(`new ${cluster} ${imdsId}`);
    sim.aws.published.length = 0;

    // Act: annotated, scanned twice (the second is quiet); then the annotation is removed
    const annotated = brokenStaging({ [IMDS]: 'GPU AMI needs IMDSv1; expires=2099-12-31' });
    sim.setWorld(annotated);
    await scanStaging();
    const suppressedAlerts = alertsOf(sim.aws.published);
    const messages = alertMessages(sim.aws.published);
    const hubWhileSuppressed = securityHubRecord(imdsId);
    const stateWhileSuppressed = (await sim.tableItems()).find((item) => item.id === imdsId);
    sim.aws.published.length = 0;
    await scanStaging();
    const quietAlerts = alertsOf(sim.aws.published);
    sim.setWorld(broken);
    await scanStaging();

    // Assess: one suppressed message, as the oracle has it, with who and why
    const oracle = await cliFindings(annotated);
    expect(oracle.find((finding) => finding.id === imdsId)?.status).toBe('suppressed');
    expect(suppressedAlerts).toEqual([`suppressed ${cluster} ${imdsId}`]);
    expect(messages).toHaveLength(1);
    expect(messages[0]?.attributes).toMatchObject({
      change: 'suppressed',
      suppressedBy: 'annotation',
      status: 'suppressed',
      checkId: 'imds-v2-required',
      cluster,
    });
    expect(JSON.parse(messages[0]?.message ?? '{}').email).toContain(
      `Suppressed by the annotation ${IMDS} on EC2NodeClass/default, until 2099-12-31: "GPU AMI needs IMDSv1"`
    );
    expect(stateWhileSuppressed).toMatchObject({ status: 'resolved' });
    expect(hubWhileSuppressed).toMatchObject({
      workflowStatus: 'SUPPRESSED',
      note: {
        text: `Suppressed by annotation ${IMDS} on the object until 2099-12-31: GPU AMI needs IMDSv1`,
        updatedBy: 'nodeclass-scanner',
      },
      finding: { RecordState: 'ARCHIVED', Compliance: { Status: 'WARNING' } },
    });
    expect(quietAlerts).toEqual([]);
    // Removed while the failure persists: new again, and Security Hub reopened to NEW.
    expect(alertsOf(sim.aws.published)).toEqual([`new ${cluster} ${imdsId}`]);
    expect(securityHubRecord(imdsId)).toMatchObject({
      workflowStatus: 'NEW',
      finding: { RecordState: 'ACTIVE', Compliance: { Status: 'FAILED' } },
    });
  });

  it('an annotation the setting refuses: nothing resolves or is suppressed, and the alert says why', async () => {
    // Prepare
    await sim.resetState();
    const broken = brokenStaging();
    sim.setWorld(broken);
    await scanStaging();
    const encryptionId = idOf(await cliFindings(broken), 'root-volume-encrypted');
    sim.aws.published.length = 0;

    // Act: root-volume-encrypted is not in imds-*: annotating its open alert changes nothing
    const annotated = brokenStaging({ [ENCRYPTION]: 'the SCP encrypts volumes anyway' });
    sim.setWorld(annotated);
    await scanStaging();
    const afterAnnotation = [...sim.aws.published];
    const state = (await sim.tableItems()).find((item) => item.id === encryptionId);
    // A cluster first scanned with the annotation in place alerts the finding, saying why.
    await sim.resetState();
    sim.setWorld(annotated);
    await scanStaging();

    // Assess
    expect(afterAnnotation).toEqual([]);
    expect(state).toMatchObject({ status: 'open' });
    const oracle = await cliFindings(annotated);
    expect(oracle.find((finding) => finding.id === encryptionId)?.status).toBe('fail');
    expect((await cliFindings(annotated, 'allow')).find((f) => f.id === encryptionId)?.status).toBe(
      'suppressed'
    );
    const open = oracle
      .filter(
        (finding) =>
          (finding.status === 'fail' || finding.status === 'error') &&
          finding.causedBy === undefined
      )
      .map((finding) => `new ${cluster} ${finding.id}`)
      .sort();
    expect(alertsOf(sim.aws.published)).toEqual(open);
    const summary = alertMessages(sim.aws.published).find(
      (message) => message.attributes.change === 'summary'
    );
    const item = (
      JSON.parse(JSON.parse(summary?.message ?? '{}').default) as {
        changes: { findingId: string; message: string }[];
      }
    ).changes.find((change) => change.findingId === encryptionId);
    expect(item?.message).toContain(
      `The annotation ${ENCRYPTION} ("the SCP encrypts volumes anyway") tried to suppress this finding; refused: the deployment's annotationSuppression setting does not let annotations suppress root-volume-encrypted, so it stays open.`
    );
  });
});

describe('concurrent scans share the account-wide IAM budget', () => {
  it('four clusters scanned at once stay within iamCallsPerSecond over every window', async () => {
    // Prepare: two clusters per region, fresh state (no cached verdicts: every scan simulates)
    await sim.resetState();
    const west = copyWorld(sim.secondRegionWorld);
    west.eks.clusters = [sim.secondRegionCluster, sim.sameNameCluster];
    sim.setSecondRegionWorld(west);
    const dispatched = await sim.invoke('Dispatch', event('scheduled-event'));
    expect(dispatched.error).toBeUndefined();
    const messages = sim.aws.queued.splice(0);
    expect(messages).toHaveLength(4);
    const rate = Number(sim.fn('ScanCluster').environment.IAM_CALLS_PER_SECOND);
    expect(rate).toBeGreaterThan(0);
    const firstCall = sim.aws.calls.length;

    // Act: the event source mapping hands each message to its own execution environment at once
    const invocations = await Promise.all(
      messages.map((message) => sim.invoke('ScanCluster', sim.sqsEvent(message)))
    );

    // Assess: every scan succeeded, and IAM saw at most a second's burst plus the rate in any
    // window. The emulator stamps a call when it handles it, so a busy emulator can bunch two
    // calls paced apart: windows get half a second of slack.
    for (const invocation of invocations) {
      expect(invocation.error).toBeUndefined();
      expect(invocation.result).toEqual({ batchItemFailures: [] });
    }
    const iamTimes = sim.aws.calls
      .slice(firstCall)
      .filter((call) => call.service === 'iam')
      .map((call) => call.at)
      .sort((a, b) => a - b);
    // More calls than the budget allows at once: environments pacing on their own would exceed it.
    expect(iamTimes.length).toBeGreaterThan(2 * rate);
    const excess: string[] = [];
    for (let start = 0; start < iamTimes.length; start++) {
      for (let end = start; end < iamTimes.length; end++) {
        const seconds = ((iamTimes[end] ?? 0) - (iamTimes[start] ?? 0)) / 1000;
        const allowed = rate + rate * (seconds + 0.5);
        if (end - start + 1 > allowed) excess.push(`${end - start + 1} calls in ${seconds} s`);
      }
    }
    expect(excess).toEqual([]);
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
