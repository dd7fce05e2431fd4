// The deployed service, end to end: the synthesized bundles run against emulated AWS that enforces
// the template's permissions. Each scenario asserts the alerts delivered, exactly. The oracle for
// "exactly" is the CLI's offline scan of the same world (`scan --world`), so an alert the deployed
// path loses, doubles or invents shows up as a difference.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { World } from '../../lambda/adapters/world/schema.js';
import { runCliCaptured, tempTree } from '../cli/support/run-cli.js';
import type { PublishedMessage } from './emulator/aws.js';
import { ALERT_EMAIL, REPO_ROOT, SIMULATION_CONTEXT, Simulation } from './simulation.js';

const CLUSTERS = SIMULATION_CONTEXT.clusters;
const event = (name: string) =>
  JSON.parse(readFileSync(join(REPO_ROOT, 'examples/events', `${name}.json`), 'utf8'));

interface Alert {
  readonly change: string;
  readonly cluster: string;
  readonly findingId: string;
}

/** `change cluster findingId` for every finding message (digests excluded), sorted. */
function alertsOf(messages: readonly PublishedMessage[]): string[] {
  return messages
    .filter(
      (message) =>
        message.attributes.change !== 'digest' && message.publisher !== 'cloudwatch.amazonaws.com'
    )
    .map((message) => {
      const body = JSON.parse(JSON.parse(message.message).default) as {
        change: string;
        finding: { id: string; resource: { cluster: string } };
      };
      const alert: Alert = {
        change: body.change,
        cluster: body.finding.resource.cluster,
        findingId: body.finding.id,
      };
      return `${alert.change} ${alert.cluster} ${alert.findingId}`;
    })
    .sort();
}

/** Open (fail/error) finding ids of an offline CLI scan of `world`, per the deployed clusters. */
async function expectedOpen(
  world: World,
  clusters: readonly string[] = CLUSTERS
): Promise<string[]> {
  const tree = tempTree({ 'world.json': JSON.stringify(world) });
  try {
    const run = await runCliCaptured(
      ['scan', '--world', join(tree.dir, 'world.json'), '--format', 'json', '--fail-on', 'none'],
      { now: new Date() }
    );
    const report = JSON.parse(run.stdout) as {
      findings: { id: string; status: string; resource: { cluster: string } }[];
    };
    return report.findings
      .filter((finding) => finding.status === 'fail' || finding.status === 'error')
      .filter((finding) => clusters.includes(finding.resource.cluster))
      .map((finding) => `${finding.resource.cluster} ${finding.id}`)
      .sort();
  } finally {
    tree.cleanup();
  }
}

const asNew = (open: readonly string[]) => open.map((entry) => `new ${entry}`).sort();

function copyWorld(world: World): World {
  return structuredClone(world);
}

let sim: Simulation;

beforeAll(async () => {
  sim = await Simulation.start(inject('assemblyDirectory'));
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
  it('alerts every open finding of both clusters once, by email above the threshold', async () => {
    // Prepare
    await sim.resetState();
    const open = await expectedOpen(sim.world);

    // Act
    const { messages, failed } = await scheduledScan();

    // Assess
    expect(messages).toHaveLength(CLUSTERS.length);
    expect(failed).toEqual([]);
    expect(alertsOf(sim.aws.published)).toEqual(asNew(open));
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
    const before = await expectedOpen(sim.world);
    const world = copyWorld(sim.world);
    world.ec2.images = world.ec2.images.filter((image) => image.ImageId !== imageId);
    sim.setWorld(world);
    const after = await expectedOpen(world);
    sim.aws.published.length = 0;
    const amiEvent = event('ami-state-change-deregistered');
    amiEvent.region = world.region;
    amiEvent.resources = [`arn:aws:ec2:${world.region}::image/${imageId}`];
    amiEvent.detail.ImageId = imageId;

    // Act
    const invocation = await sim.invoke('AmiEvent', amiEvent);

    // Assess
    expect(invocation.error).toBeUndefined();
    const appeared = after.filter((entry) => !before.includes(entry));
    expect(appeared.length).toBeGreaterThan(0);
    expect(alertsOf(sim.aws.published)).toEqual(
      asNew(appeared.filter((entry) => entry.includes('legacy') || entry.startsWith('prod-use1')))
    );
  });

  it('an IAM edit forwarded from us-east-1 resolves the controller denial it fixed', async () => {
    // Prepare: the prod controller role may not pass its node role; the edit allows it.
    await sim.resetState();
    await scheduledScan();
    const before = await expectedOpen(sim.world);
    const world = copyWorld(sim.world);
    world.iam.permissions = world.iam.permissions.filter(
      (row) =>
        !(
          row.principal.endsWith('KarpenterControllerRole-prod-use1') &&
          row.action === 'iam:PassRole'
        )
    );
    sim.setWorld(world);
    const after = await expectedOpen(world);
    sim.aws.published.length = 0;
    const iamEvent = event('iam-put-role-policy');
    iamEvent.detail.requestParameters.roleName = 'KarpenterControllerRole-prod-use1';

    // Act
    const invocation = await sim.invoke('IamEvent', iamEvent);

    // Assess
    expect(invocation.error).toBeUndefined();
    const gone = before.filter((entry) => !after.includes(entry));
    expect(gone.length).toBeGreaterThan(0);
    expect(alertsOf(sim.aws.published)).toEqual(gone.map((entry) => `resolved ${entry}`).sort());
  });
});
