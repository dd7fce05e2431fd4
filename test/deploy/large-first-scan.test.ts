// The deployed service on a very large first scan: a cluster whose first scan finds thousands of
// failures alerts ONCE (one summary), the scan does not fail, every item the scan writes to the
// state table stays under DynamoDB's 400 KB, and a redelivery of the same scan message sends
// nothing more. Its own file and simulation, so it runs beside the other scenarios.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReceivedRequest } from './emulator/aws.js';
import { alertMessages, dispatchScanFor } from './scenario-support.js';
import { Simulation } from './simulation.js';
import { synthesizedAssembly } from './synthesized-assembly.js';

const CLUSTER = 'prod-use1';

/**
 * NodeClasses added to the cluster, each failing on its own: more than the 500 changes an earlier
 * version split its summaries at, and more than twice what a summary lists (200), while the
 * scan and its redelivery stay short beside the other scenario files on 2 cores (3,000 took about
 * 15 s alone; the store's own tests carry 8,000 changes against dynalite and size every item for
 * 20,000).
 */
const ADDED_NODECLASSES = 550;

/** DynamoDB's item size limit (400 KB, counted in KiB). */
const MAX_ITEM_BYTES = 400 * 1024;
/**
 * What one failing NodeClass may cost the state table's writes, in wire JSON: its finding, its
 * index row and its share of the stored summary (measured: about 2 KB).
 */
const BYTES_PER_NODECLASS = 4 * 1024;

let sim: Simulation;

beforeAll(async () => {
  sim = await Simulation.start((await synthesizedAssembly()).directory);
});

afterAll(async () => {
  await sim?.close();
});

/**
 * `count` copies of the cluster's `default` NodeClass, each with IMDSv1 allowed (one failure of
 * its own); they share its role, images, subnets and security groups, so AWS is read once for all.
 */
function withFailingCopies(count: number): void {
  const world = structuredClone(sim.world);
  const kube = world.eks.clusters.find((cluster) => cluster.name === CLUSTER)?.kubernetes;
  const source = kube?.ec2NodeClasses.find(
    (object) => (object as { metadata?: { name?: string } }).metadata?.name === 'default'
  ) as { metadata: Record<string, unknown>; spec: Record<string, unknown> } | undefined;
  if (kube === undefined || source === undefined) throw new Error(`${CLUSTER} has no default`);
  for (let index = 0; index < count; index++) {
    const copy = structuredClone(source);
    copy.metadata = { ...copy.metadata, name: `bulk-${index}`, uid: `bulk-${index}` };
    copy.spec = {
      ...copy.spec,
      metadataOptions: {
        httpEndpoint: 'enabled',
        httpProtocolIPv6: 'disabled',
        httpPutResponseHopLimit: 1,
        httpTokens: 'optional',
      },
    };
    kube.ec2NodeClasses.push(copy);
  }
  sim.setWorld(world);
}

/**
 * Sizes of the items the scan puts in the state table (PutItem, and BatchWriteItem's puts), as
 * their wire JSON: type tags, quotes and names included, more than DynamoDB counts.
 */
function recordItemSizes(): { readonly sizes: number[] } {
  const sizes: number[] = [];
  const measure = (request: ReceivedRequest) => {
    const input = JSON.parse(request.body || '{}') as {
      Item?: unknown;
      RequestItems?: Record<string, { PutRequest?: { Item?: unknown } }[]>;
    };
    const items = [
      ...(input.Item === undefined ? [] : [input.Item]),
      ...Object.values(input.RequestItems ?? {})
        .flat()
        .flatMap((entry) => (entry.PutRequest?.Item === undefined ? [] : [entry.PutRequest.Item])),
    ];
    for (const item of items) sizes.push(Buffer.byteLength(JSON.stringify(item)));
  };
  // A fault that leaves every request alone (`except`): it only sees them.
  sim.aws.setFault('dynamodb', {
    kind: 'server-error',
    fromCall: Number.POSITIVE_INFINITY,
    except: (request) => {
      if (request.action === 'dynamodb:PutItem' || request.action === 'dynamodb:BatchWriteItem')
        measure(request);
      return true;
    },
  });
  return { sizes };
}

const clusterAlerts = () =>
  alertMessages(sim.aws.published).filter(
    (message) => message.attributes.cluster === CLUSTER && message.attributes.change !== undefined
  );

describe('a first scan of thousands of failures', () => {
  it('alerts once, with every item written under 400 KB, and a redelivery sends nothing more', async () => {
    // Prepare
    await sim.resetState();
    withFailingCopies(ADDED_NODECLASSES);
    const written = recordItemSizes();
    const message = await dispatchScanFor(sim, CLUSTER);

    // Act
    const first = await sim.deliverQueued([message]);
    const alerted = clusterAlerts();
    const redelivered = await sim.deliverQueued([message]);

    // Assess
    expect(first.failed).toEqual([]);
    expect(first.invocations[0]?.error).toBeUndefined();
    expect(alerted.map((alert) => alert.attributes.change)).toEqual(['summary']);
    const body = JSON.parse(JSON.parse(alerted[0]?.message ?? '{}').default) as {
      firstScan: boolean;
      counts: { new: number };
      changes: unknown[];
      omitted: number;
    };
    expect(body.firstScan).toBe(true);
    // Every NodeClass's failure is in it: listed, or counted as not listed.
    expect(body.counts.new).toBeGreaterThanOrEqual(ADDED_NODECLASSES);
    expect(body.changes.length + body.omitted).toBe(body.counts.new);
    expect(written.sizes.length).toBeGreaterThan(ADDED_NODECLASSES);
    expect(Math.max(...written.sizes)).toBeLessThan(MAX_ITEM_BYTES);
    // Each NodeClass's state and index row once, the summary once: not the summary per claim
    // (which was about 200 KB a claim at this size).
    const total = written.sizes.reduce((sum, size) => sum + size, 0);
    expect(total).toBeLessThan(ADDED_NODECLASSES * BYTES_PER_NODECLASS);
    expect(redelivered.failed).toEqual([]);
    expect(clusterAlerts()).toEqual(alerted);
  });

  it('denied no call the scans made', () => {
    expect(sim.aws.calls.filter((call) => !call.allowed)).toEqual([]);
  });
});
