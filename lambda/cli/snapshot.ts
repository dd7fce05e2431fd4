// `nodeclass-scan snapshot`: runs the collection half of a live scan with a recorder around the AWS
// facts adapter, then writes a world file holding exactly what the scan read (stdout or --output).
import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { type AwsFactsClients, createLiveAwsFacts } from '../adapters/aws/aws-facts-adapter.js';
import { type AwsClients, createAwsClients } from '../adapters/aws/clients.js';
import { createEksReader } from '../adapters/aws/eks-reader.js';
import { createEksTokenProvider } from '../adapters/aws/eks-token.js';
import { createIamRolePolicyReader, createIamSimulator } from '../adapters/aws/iam-simulator.js';
import { rateLimited } from '../adapters/aws/rate-limit.js';
import { createClusterSource } from '../adapters/kube/cluster-source.js';
import { buildWorld } from '../adapters/world/build-world.js';
import { createRecordingSimulator } from '../adapters/world/permissions.js';
import { createAwsRecorder } from '../adapters/world/recorder.js';
import type { World } from '../adapters/world/schema.js';
import { createAwsFactsEnricher } from '../app/collect-aws-facts.js';
import { createPermissionsEnricher } from '../app/collect-permissions.js';
import { collectInventory } from '../app/run-scan.js';
import type { ObjectSource } from '../core/ports/objects.js';
import type { PolicySimulatorPort, RolePolicyPort } from '../core/ports/permissions.js';
import { partitionOf } from '../core/region.js';
import { ConfigError } from '../shared/errors.js';
import { resolveRegion, verifyAwsAccess } from './aws-preflight.js';
import type { CommandContext } from './command-context.js';
import { terminalOutput, terminalSafe } from './terminal.js';

export interface SnapshotInput {
  readonly account: string;
  readonly region: string;
  readonly objects: ObjectSource;
  /** Live SDK senders; the recorder wraps them. */
  readonly aws: AwsFactsClients;
  /** Live policy simulator; its results are recorded as `iam.permissions` rows. */
  readonly simulator?: PolicySimulatorPort;
  /**
   * The controller roles' policies over the recorded IAM client, so simulations are grouped as a
   * live scan groups them and the documents read are recorded (a replay evaluates them).
   */
  readonly policies?: (iam: AwsFactsClients['iam']) => RolePolicyPort;
  readonly now: Date;
}

/** Collects what a scan of `objects` reads from AWS and returns it as a world file. */
async function recordSnapshot(input: SnapshotInput): Promise<World> {
  const recorder = createAwsRecorder(input.aws);
  const simulations = input.simulator ? createRecordingSimulator(input.simulator) : undefined;
  const { inventory } = await collectInventory(
    {
      objects: input.objects,
      enrichers: [
        createAwsFactsEnricher({ port: createLiveAwsFacts(recorder.clients), now: input.now }),
        ...(simulations
          ? [
              createPermissionsEnricher({
                simulator: simulations.simulator,
                ...(input.policies === undefined
                  ? {}
                  : { policies: input.policies(recorder.clients.iam) }),
              }),
            ]
          : []),
      ],
    },
    // The CRDs are recorded as read; a replay judges the objects by them.
    { admission: false }
  );
  return buildWorld({
    account: input.account,
    region: input.region,
    partition: partitionOf(input.region),
    recordedAt: input.now,
    recorded: recorder.recorded(),
    ...(simulations ? { permissions: simulations.rows() } : {}),
    loaded: inventory,
  });
}

export interface SnapshotDeps {
  readonly clients: (options: { region?: string; profile?: string }) => AwsClients;
  /** The live cluster source (DescribeCluster + Kubernetes API) for the named clusters. */
  readonly liveObjects: (options: {
    region: string;
    clusters: readonly string[];
    clients: AwsClients;
    now: () => Date;
  }) => ObjectSource;
}

const defaultSnapshotDeps: SnapshotDeps = {
  clients: (options) => createAwsClients(options),
  liveObjects: ({ region, clusters, clients, now }) =>
    createClusterSource({
      region,
      clusters,
      eks: createEksReader({ eks: clients.eks(region) }),
      tokens: createEksTokenProvider({
        region,
        credentials: () => clients.sts(region).config.credentials(),
        now,
      }),
    }),
};

interface SnapshotFlags {
  region?: string;
  cluster?: string[];
  profile?: string;
  output?: string;
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

export function registerSnapshotCommand(
  program: Command,
  { io }: CommandContext,
  deps: SnapshotDeps = defaultSnapshotDeps
): void {
  program
    .command('snapshot')
    .description(
      'Record the AWS facts and Kubernetes objects a scan of these clusters reads as a world file (no secrets).'
    )
    .option('--cluster <name>', 'EKS cluster to record (repeatable, at least one)', collect)
    .option('--region <region>', 'AWS region (default: the SDK default chain)')
    .option('--profile <profile>', 'named AWS profile')
    .option('--output <file>', 'write the world file here instead of stdout')
    .action(async (flags: SnapshotFlags) => {
      const clusters = flags.cluster ?? [];
      if (clusters.length === 0)
        throw new ConfigError('snapshot needs at least one --cluster NAME');
      const clients = deps.clients({
        ...(flags.region === undefined ? {} : { region: flags.region }),
        ...(flags.profile === undefined ? {} : { profile: flags.profile }),
      });
      const region = await resolveRegion(clients, flags.region);
      const { account } = await verifyAwsAccess(clients.sts(region), region);
      const world = await recordSnapshot({
        account,
        region,
        objects: deps.liveObjects({ region, clusters, clients, now: io.now }),
        aws: {
          ec2: clients.ec2(region),
          ssm: clients.ssm(region),
          iam: clients.iam(region),
          kms: clients.kms(region),
        },
        simulator: createIamSimulator(clients.iam(region), { limiter: clients.limiter }),
        policies: (iam) => createIamRolePolicyReader(rateLimited(iam, 'iam', clients.limiter)),
        now: io.now(),
      });
      const text = `${JSON.stringify(world, null, 2)}\n`;
      if (flags.output === undefined) io.stdout(text);
      // As on stdout: raw C1 or bidi characters in recorded strings become JSON escapes.
      else await writeFile(flags.output, terminalOutput(text, { sgr: false }), 'utf8');
      const calls = clients.counter.counts().calls;
      const total = Object.values(calls).reduce((sum, count) => sum + count, 0);
      io.stderr(
        `nodeclass-scan: recorded ${world.eks.clusters.length} cluster(s), ${world.ec2.images.length} image(s), ${world.ec2.subnets.length} subnet(s), ${world.ec2.securityGroups.length} security group(s), ${world.iam.roles.length} role(s) with ${total} AWS call(s)${flags.output === undefined ? '' : ` to ${terminalSafe(flags.output)}`}\n`
      );
    });
}
