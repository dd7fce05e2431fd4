// The deployed stack on loopback: the synthesized template's functions, run from their bundles
// against emulated AWS (authorization from the template) and one TLS Kubernetes API per cluster.
// A second region (the deployment's discovery region) has its own world, with no cluster until a
// scenario creates one (prod-euw1, or a prod-use1 of its own: two clusters of one name), and its
// AMI-event forwarding stack routes that region's events home.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateTableCommand,
  DeleteItemCommand,
  DeleteTableCommand,
  DynamoDBClient,
  ScanCommand,
} from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import { amiForwardingStackName, DEFAULT_STACK_NAME } from '../../infra/config.js';
import { parseWorld } from '../../lambda/adapters/world/load-world.js';
import type { World, WorldCluster } from '../../lambda/adapters/world/schema.js';
import { generatePki } from '../adapters/kube/tls-fixtures.js';
import { type Principal, TemplateAuthorizer } from './authorize.js';
import { REPO_ROOT, SIMULATION_CONTEXT } from './deployment-context.js';
import { AwsEmulator, type PublishedMessage, type QueuedMessage } from './emulator/aws.js';
import { type KubeEmulator, startKubeEmulator } from './emulator/kube.js';
import { EventRouter, type RuleDelivery } from './event-routing.js';
import { type Invocation, LambdaService } from './lambda-runner.js';
import { type Account, type DeployedFunction, DeployedTemplate } from './template.js';

const SCANNER_STACK = DEFAULT_STACK_NAME;
const WORLD_FILE = join(REPO_ROOT, 'examples/world.json');

/** The deployment's second region: clusters are discovered there, AMI events forwarded home. */
export const SECOND_REGION: string = SIMULATION_CONTEXT.discoveryRegions[0];

/** The cluster a scenario may create in the second region (scanned once discovery finds it). */
export const SECOND_REGION_CLUSTER = 'prod-euw1';

/**
 * The name of a cluster of the home region (prod-use1), which a scenario may also create in the
 * second region: two clusters of one name, told apart by their region.
 */
export const SAME_NAME_CLUSTER = 'prod-use1';

/**
 * The account as seen from another region: the same account and IAM (global), the same recorded
 * EC2 and SSM data answered as that region's, and no EKS cluster yet.
 */
function regionWorld(world: World, region: string): World {
  const copy = structuredClone(world);
  copy.region = region;
  copy.eks.clusters = [];
  return copy;
}

/**
 * A cluster `name` in `region` like prod-use1, holding only its `legacy` NodeClass (which pins an
 * image by id). The stack creates access entries in the home region only; here the scanning roles'
 * entries are the ones created by hand (README, "What to apply in each cluster").
 */
function secondRegionCluster(world: World, region: string, name: string): WorldCluster {
  const source = world.eks.clusters.find((cluster) => cluster.name === 'prod-use1');
  if (!source?.kubernetes) throw new Error('the world has no prod-use1 cluster to copy');
  const cluster = structuredClone(source);
  const kube = source.kubernetes;
  return {
    ...cluster,
    name,
    arn: `arn:${world.partition ?? 'aws'}:eks:${region}:${world.account}:cluster/${name}`,
    kubernetes: {
      ...structuredClone(kube),
      ec2NodeClasses: kube.ec2NodeClasses.filter(
        (object) => (object as { metadata?: { name?: string } }).metadata?.name === 'legacy'
      ),
      nodePools: [],
    },
  };
}

/**
 * The demo account, trimmed to the NodeClasses the scenarios need (an alias, a pinned image, a
 * node role the controller may not pass): every permission simulation runs at IAM's real rate
 * limit, so each NodeClass costs the simulation about a second.
 */
const SIMULATED_NODECLASSES: Readonly<Record<string, readonly string[]>> = {
  'prod-use1': ['default', 'legacy', 'analytics'],
  'staging-use1': ['default'],
};

/** The simulation's KMS keys for EBS: the account's default (usable) and a retired one. */
export const EBS_KEYS = {
  defaultKeyId: '0b1e6f3a-9c7d-4253-8000-00000000e850',
  retiredAlias: 'alias/analytics-data-2025',
  retiredKeyId: '0b1e6f3a-9c7d-4253-8000-00000000e851',
} as const;

/**
 * Every volume encrypted without a key uses the account's default EBS key, here a customer key
 * whose policy allows use through EC2 (Karpenter's troubleshooting guide); `analytics` also has a
 * data volume on a disabled key.
 */
function withEbsKeys(world: World): void {
  const arnOf = (id: string) => `arn:aws:kms:${world.region}:${world.account}:key/${id}`;
  const viaEc2 = {
    Version: '2012-10-17',
    Statement: [
      {
        Sid: 'Allow access through EBS for all principals in the account',
        Effect: 'Allow',
        Principal: { AWS: '*' },
        Action: [
          'kms:Encrypt',
          'kms:Decrypt',
          'kms:ReEncrypt*',
          'kms:GenerateDataKey*',
          'kms:CreateGrant',
          'kms:DescribeKey',
        ],
        Resource: '*',
        Condition: {
          StringEquals: {
            'kms:ViaService': `ec2.${world.region}.amazonaws.com`,
            'kms:CallerAccount': world.account,
          },
        },
      },
      {
        Sid: 'Enable IAM policies',
        Effect: 'Allow',
        Principal: { AWS: `arn:aws:iam::${world.account}:root` },
        Action: 'kms:*',
        Resource: '*',
      },
    ],
  };
  const key = (id: string, state: string, aliases: string[]) => ({
    KeyMetadata: {
      AWSAccountId: world.account,
      KeyId: id,
      Arn: arnOf(id),
      KeyState: state,
      KeyManager: 'CUSTOMER',
      KeyUsage: 'ENCRYPT_DECRYPT',
      KeySpec: 'SYMMETRIC_DEFAULT',
    },
    Aliases: aliases,
    Policy: JSON.stringify(viaEc2),
    Grants: [],
  });
  world.kms = {
    ...world.kms,
    keys: [
      key(EBS_KEYS.defaultKeyId, 'Enabled', ['alias/ebs-default']),
      key(EBS_KEYS.retiredKeyId, 'Disabled', [EBS_KEYS.retiredAlias]),
    ],
    ebsEncryptionDefaults: {
      [world.region]: { EbsEncryptionByDefault: false, KmsKeyId: arnOf(EBS_KEYS.defaultKeyId) },
    },
  };
  for (const cluster of world.eks.clusters) {
    for (const object of cluster.kubernetes?.ec2NodeClasses ?? []) {
      const nodeClass = object as {
        metadata?: { name?: string };
        spec?: { blockDeviceMappings?: unknown[] };
      };
      if (cluster.name !== 'prod-use1' || nodeClass.metadata?.name !== 'analytics') continue;
      nodeClass.spec?.blockDeviceMappings?.push({
        deviceName: '/dev/xvdb',
        ebs: {
          volumeSize: '200Gi',
          volumeType: 'gp3',
          encrypted: true,
          kmsKeyID: EBS_KEYS.retiredAlias,
        },
      });
    }
  }
}

function simulationWorld(): World {
  const world = parseWorld(readFileSync(WORLD_FILE, 'utf8'), WORLD_FILE);
  withEbsKeys(world);
  for (const cluster of world.eks.clusters) {
    const kept = SIMULATED_NODECLASSES[cluster.name] ?? [];
    const kube = cluster.kubernetes;
    if (!kube) continue;
    const named = (object: unknown) =>
      kept.includes(String((object as { metadata?: { name?: string } }).metadata?.name));
    const referencesKept = (object: unknown) =>
      kept.includes(
        String(
          (object as { spec?: { template?: { spec?: { nodeClassRef?: { name?: string } } } } }).spec
            ?.template?.spec?.nodeClassRef?.name
        )
      );
    kube.ec2NodeClasses = kube.ec2NodeClasses.filter(named);
    kube.nodePools = kube.nodePools.filter(referencesKept);
  }
  return world;
}

export interface EmailDelivery {
  readonly endpoint: string;
  readonly message: PublishedMessage;
}

/** SNS subscription filter policies of the kind the stack writes (attribute lists, `exists`). */
function filterMatches(policy: Record<string, unknown[]> | undefined, message: PublishedMessage) {
  if (policy === undefined) return true;
  return Object.entries(policy).every(([attribute, allowed]) => {
    const value = message.attributes[attribute];
    return allowed.some((rule) =>
      typeof rule === 'object' && rule !== null && 'exists' in rule
        ? (rule as { exists: boolean }).exists === (value !== undefined)
        : value !== undefined && String(rule) === value
    );
  });
}

export class Simulation {
  readonly functions: Map<string, DeployedFunction>;
  readonly principals = new Map<string, Principal>();
  /** The second region's world (its clusters, images…), as the emulators answer it. */
  secondRegionWorld: World;
  /** The cluster a scenario may add to the second region's world. */
  readonly secondRegionCluster: WorldCluster;
  /** A cluster named as one of the home region's, which a scenario may add to the second region. */
  readonly sameNameCluster: WorldCluster;
  private readonly events: EventRouter;

  private constructor(
    readonly template: DeployedTemplate,
    public world: World,
    readonly aws: AwsEmulator,
    readonly kube: KubeEmulator,
    /** The emulators' CA, trusted by the functions' processes. */
    readonly caFile: string,
    private readonly dynamo: { close(): void; endpoint: string },
    regional: {
      readonly world: World;
      readonly cluster: WorldCluster;
      readonly sameName: WorldCluster;
      forwarding: DeployedTemplate;
    }
  ) {
    this.functions = template.functions();
    this.baseWorld = world;
    this.secondRegionWorld = regional.world;
    this.baseSecondRegionWorld = regional.world;
    this.secondRegionCluster = regional.cluster;
    this.sameNameCluster = regional.sameName;
    this.events = new EventRouter(
      template,
      new Map([[SECOND_REGION, regional.forwarding]]),
      async (logicalId, event) => {
        const fn = [...this.functions.values()].find((entry) => entry.logicalId === logicalId);
        if (!fn) throw new Error(`a rule targets ${logicalId}, not a function of the stack`);
        this.eventInvocations.push({ fn: fn.name, invocation: await this.invoke(fn.name, event) });
      }
    );
  }

  private readonly baseWorld: World;
  private readonly baseSecondRegionWorld: World;
  /** The invocations of functions EventBridge rules made (putEvent), in order. */
  readonly eventInvocations: { readonly fn: string; readonly invocation: Invocation }[] = [];
  /** Warm execution environments live across scenarios, as they do across a deployment's events. */
  private readonly lambda = new LambdaService();

  static async start(assemblyDirectory: string): Promise<Simulation> {
    const world = simulationWorld();
    const account: Account = {
      id: world.account,
      region: world.region,
      partition: world.partition ?? 'aws',
    };
    const template = new DeployedTemplate(assemblyDirectory, SCANNER_STACK, account);
    const forwarding = new DeployedTemplate(
      assemblyDirectory,
      amiForwardingStackName(SCANNER_STACK, SECOND_REGION),
      { ...account, region: SECOND_REGION }
    );
    const secondWorld = regionWorld(world, SECOND_REGION);
    const secondCluster = secondRegionCluster(world, SECOND_REGION, SECOND_REGION_CLUSTER);
    const sameName = secondRegionCluster(world, SECOND_REGION, SAME_NAME_CLUSTER);
    const principalsByAccessKey = new Map<string, Principal>();
    for (const fn of template.functions().values()) {
      principalsByAccessKey.set(fn.roleLogicalId, {
        kind: 'role',
        roleLogicalId: fn.roleLogicalId,
        arn: fn.roleArn,
      });
    }
    const accessEntries = new Map<string, string[]>();
    for (const [, entry] of template.ofType('AWS::EKS::AccessEntry')) {
      const props = template.resolve(entry.Properties) as {
        ClusterName: string;
        PrincipalArn: string;
      };
      accessEntries.set(props.ClusterName, [
        ...(accessEntries.get(props.ClusterName) ?? []),
        props.PrincipalArn,
      ]);
    }
    const pki = generatePki();
    const scanningRoles = [...template.functions().values()]
      .filter((fn) => fn.name !== 'Dispatch')
      .map((fn) => fn.roleArn);
    const kube = await startKubeEmulator({
      pki,
      region: world.region,
      clusters: world.eks.clusters,
      otherRegions: new Map([[SECOND_REGION, [secondCluster, sameName]]]),
      // The stack's access entries are the home region's; the other region's are made by hand.
      accessEntries: (cluster, region) =>
        region === world.region ? (accessEntries.get(cluster) ?? []) : scanningRoles,
      principalsByAccessKey: new Map(
        [...principalsByAccessKey].map(([key, principal]) => [
          key,
          principal.kind === 'role' ? principal.arn : principal.service,
        ])
      ),
    });
    const db = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
    await new Promise<void>((resolve) => db.listen(0, '127.0.0.1', () => resolve()));
    const dynamoEndpoint = `http://127.0.0.1:${(db.address() as AddressInfo).port}`;
    const topics = new Set(template.ofType('AWS::SNS::Topic').map(([id]) => template.ref(id)));
    const aws = new AwsEmulator({
      account,
      world,
      now: new Date(),
      authorizer: new TemplateAuthorizer(template),
      principalsByAccessKey,
      topics,
      topicKeys: template.topicKeys(),
      kubeEndpoints: kube.endpoints,
      kubeCaPem: pki.caPem,
      dynamoEndpoint,
      tls: { key: pki.serverKeyPem, cert: pki.serverCertPem },
      regions: new Map([[SECOND_REGION, secondWorld]]),
    });
    template.sqsOrigin = await aws.start();
    const caFile = join(mkdtempSync(join(tmpdir(), 'deploy-sim-ca-')), 'ca.pem');
    writeFileSync(caFile, pki.caPem);
    const simulation = new Simulation(
      template,
      world,
      aws,
      kube,
      caFile,
      { endpoint: dynamoEndpoint, close: () => db.close() },
      { world: secondWorld, cluster: secondCluster, sameName, forwarding }
    );
    for (const [key, principal] of principalsByAccessKey) simulation.principals.set(key, principal);
    await simulation.resetState();
    return simulation;
  }

  async close(): Promise<void> {
    this.lambda.close();
    await this.aws.close();
    await this.kube.close();
    this.dynamo.close();
  }

  private dynamoClient(): DynamoDBClient {
    return new DynamoDBClient({
      region: this.template.account.region,
      endpoint: this.dynamo.endpoint,
      credentials: { accessKeyId: 'simulation', secretAccessKey: 'simulation' },
    });
  }

  private stateTable() {
    const [table] = this.template.ofType('AWS::DynamoDB::Table');
    if (!table) throw new Error('the template has no DynamoDB table');
    return table;
  }

  /** A fresh table (from the template's key schema), no messages, no faults. */
  async resetState(): Promise<void> {
    const [tableId, table] = this.stateTable();
    const client = this.dynamoClient();
    try {
      await client.send(new DeleteTableCommand({ TableName: tableId })).catch(() => undefined);
      await client.send(
        new CreateTableCommand({
          TableName: tableId,
          KeySchema: table.Properties?.KeySchema as never,
          AttributeDefinitions: table.Properties?.AttributeDefinitions as never,
          BillingMode: 'PAY_PER_REQUEST',
        })
      );
    } finally {
      client.destroy();
    }
    this.aws.published.length = 0;
    this.aws.queued.length = 0;
    this.aws.clearFaults();
    this.kube.faults.clear();
    this.eventInvocations.length = 0;
    this.setWorld(this.baseWorld);
    this.setSecondRegionWorld(this.baseSecondRegionWorld);
  }

  /** Every item of the state table (the simulation's view of DynamoDB). */
  async tableItems(): Promise<Record<string, unknown>[]> {
    const [tableId] = this.stateTable();
    const client = this.dynamoClient();
    try {
      const { Items = [] } = await client.send(new ScanCommand({ TableName: tableId }));
      return Items.map((item) =>
        Object.fromEntries(
          Object.entries(item).map(([key, value]) => [key, Object.values(value)[0]])
        )
      );
    } finally {
      client.destroy();
    }
  }

  /** Deletes the state table's items `matches` selects (a cache a scenario needs cold). */
  async deleteTableItems(matches: (item: Record<string, unknown>) => boolean): Promise<number> {
    const [tableId] = this.stateTable();
    const doomed = (await this.tableItems()).filter(matches);
    const client = this.dynamoClient();
    try {
      for (const item of doomed) {
        await client.send(
          new DeleteItemCommand({
            TableName: tableId,
            Key: { pk: { S: String(item.pk) }, sk: { S: String(item.sk) } },
          })
        );
      }
    } finally {
      client.destroy();
    }
    return doomed.length;
  }

  /** Changes the account and clusters the emulators answer for (a copy; the file is untouched). */
  setWorld(world: World): void {
    this.world = world;
    this.aws.setWorld(world);
    this.kube.setClusters(world.eks.clusters);
  }

  /** Changes what the second region holds (a cluster created, an image deregistered…). */
  setSecondRegionWorld(world: World): void {
    this.secondRegionWorld = world;
    this.aws.setRegionWorld(SECOND_REGION, world);
    this.kube.setClusters(world.eks.clusters, SECOND_REGION);
  }

  /**
   * An AWS service event as EventBridge delivers it: put on `region`'s default bus, then through
   * the synthesized rules (forwarding stacks included) to the functions they invoke, which run
   * (see `eventInvocations`). Returns what each matching rule did.
   */
  putEvent(region: string, event: { readonly region: string }): Promise<RuleDelivery[]> {
    return this.events.put(region, event);
  }

  fn(name: string): DeployedFunction {
    const fn = this.functions.get(name);
    if (!fn) throw new Error(`no function ${name} in the template (${[...this.functions.keys()]})`);
    return fn;
  }

  invoke(name: string, event: unknown): Promise<Invocation> {
    return this.lambda.invoke({
      fn: this.fn(name),
      event,
      endpoint: this.aws.endpoint,
      accountId: this.template.account.id,
      region: this.template.account.region,
      caFile: this.caFile,
    });
  }

  /** One SQS record as the event source mapping delivers it. */
  sqsEvent(message: QueuedMessage, receiveCount = 1) {
    return {
      Records: [
        {
          messageId: message.messageId,
          receiptHandle: `emulated-${message.messageId}`,
          body: message.body,
          attributes: {
            ApproximateReceiveCount: String(receiveCount),
            SentTimestamp: String(Date.now()),
            SenderId: 'AROAEMULATED',
            ApproximateFirstReceiveTimestamp: String(Date.now()),
          },
          messageAttributes: {},
          md5OfBody: '',
          eventSource: 'aws:sqs',
          eventSourceARN: message.queueArn,
          awsRegion: this.template.account.region,
        },
      ],
    };
  }

  /**
   * Delivers each queued message to the scan worker, once. Returns the messages the worker
   * reported as failed (SQS would make them visible again).
   */
  async deliverQueued(messages: readonly QueuedMessage[] = [...this.aws.queued]) {
    const failed: QueuedMessage[] = [];
    const invocations: Invocation[] = [];
    const worker = this.principals.get(this.fn('ScanCluster').roleLogicalId);
    if (!worker) throw new Error('the scan worker has no role');
    for (const message of messages) {
      // The event source mapping receives with the worker's role, then deletes the message or
      // lets it become visible again (reported failures).
      this.aws.authorize(worker, 'sqs', 'sqs:ReceiveMessage', message.queueArn);
      const invocation = await this.invoke('ScanCluster', this.sqsEvent(message));
      invocations.push(invocation);
      const failures =
        (invocation.result as { batchItemFailures?: { itemIdentifier: string }[] } | undefined)
          ?.batchItemFailures ?? [];
      if (invocation.error || failures.some((f) => f.itemIdentifier === message.messageId)) {
        this.aws.authorize(worker, 'sqs', 'sqs:ChangeMessageVisibility', message.queueArn);
        failed.push(message);
      } else {
        this.aws.authorize(worker, 'sqs', 'sqs:DeleteMessage', message.queueArn);
      }
    }
    return { failed, invocations };
  }

  /** What each email subscriber receives: topic messages through the subscription's filter. */
  emailDeliveries(): EmailDelivery[] {
    const deliveries: EmailDelivery[] = [];
    for (const [, subscription] of this.template.ofType('AWS::SNS::Subscription')) {
      const props = this.template.resolve(subscription.Properties) as {
        Protocol: string;
        Endpoint: string;
        TopicArn: string;
        FilterPolicy?: Record<string, unknown[]>;
      };
      if (props.Protocol !== 'email') continue;
      for (const message of this.aws.published) {
        if (message.topicArn === props.TopicArn && filterMatches(props.FilterPolicy, message)) {
          deliveries.push({ endpoint: props.Endpoint, message });
        }
      }
    }
    return deliveries;
  }
}
