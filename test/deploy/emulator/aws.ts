// Local AWS for the deployment simulation: one HTTP endpoint on loopback (the functions get it as
// AWS_ENDPOINT_URL) that routes each signed request by its SigV4 credential scope, identifies the
// calling function by its access key, authorizes the call against that function's role from the
// synthesized template (and the implied KMS grant of SSE topics), records it, injects faults, and
// answers: EC2/IAM/SSM/KMS from a world file, EKS with the emulated Kubernetes endpoints, SNS and SQS
// in memory, DynamoDB through a real implementation (dynalite). Regional services (EC2, SSM, KMS, EKS)
// answer from the world of the request's region when other regions are emulated; IAM and STS are
// global, SNS, SQS, DynamoDB and Security Hub live in the home region.
import { createHash, randomUUID } from 'node:crypto';
import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import * as ec2 from '@aws-sdk/client-ec2';
import * as iam from '@aws-sdk/client-iam';
import * as kms from '@aws-sdk/client-kms';
import * as ssm from '@aws-sdk/client-ssm';
import { createWorldSdk, type WorldSdk } from '../../../bench/world-sdk.js';
import type { World, WorldCluster } from '../../../lambda/adapters/world/schema.js';
import { asffErrors } from '../../cli/support/asff-schema.js';
import type { Principal, RequestContext, TemplateAuthorizer } from '../authorize.js';
import type { Account } from '../template.js';
import { kubeEndpointKey } from './kube.js';
import {
  operationSchemas,
  type QueryService,
  queryError,
  queryResponse,
  readQuery,
  toJson,
} from './wire.js';

export interface CallRecord {
  readonly principal: string;
  readonly service: string;
  /** The IAM action authorized (`sns:Publish` for PublishBatch). */
  readonly action: string;
  readonly resource: string;
  readonly allowed: boolean;
  readonly reason: string;
  /** The region the call was answered in (the home region for global services). */
  readonly region: string;
  /** When it was received (epoch milliseconds): rates across concurrent functions. */
  readonly at: number;
  /** DynamoDB: the partition key of a single-item request (IAM's `dynamodb:LeadingKeys`). */
  readonly leadingKey?: string;
}

export interface PublishedMessage {
  readonly topicArn: string;
  readonly publisher: string;
  readonly subject?: string;
  readonly message: string;
  readonly attributes: Readonly<Record<string, string>>;
}

export interface QueuedMessage {
  readonly messageId: string;
  readonly body: string;
  readonly queueArn: string;
}

/** A finding as Security Hub holds it: the last import, with the workflow customers manage. */
export interface SecurityHubRecord {
  readonly finding: Readonly<Record<string, unknown>> & {
    readonly Id: string;
    readonly RecordState?: string;
    readonly Compliance?: { readonly Status?: string };
  };
  readonly workflowStatus: 'NEW' | 'NOTIFIED' | 'RESOLVED' | 'SUPPRESSED';
  /** The last note BatchUpdateFindings set (`Note.Text`, `Note.UpdatedBy`). */
  readonly note?: { readonly text: string; readonly updatedBy: string };
  /** Imports and updates of this finding, in order. */
  readonly history: readonly string[];
}

/**
 * `throttle`: the service's own throttling error; `server-error`: HTTP 500; `reset`: the connection
 * dropped; `hang`: the request is read and never answered (only the client's timeouts end it).
 */
export type FaultKind = 'throttle' | 'server-error' | 'reset' | 'hang';

/** One HTTP request as received, before it is authorized or answered (counting, rate limits). */
export interface ReceivedRequest {
  readonly service: string;
  /** Query action or JSON target; `METHOD /path` for REST services (EKS, Security Hub). */
  readonly operation: string;
  /** The IAM action, as `CallRecord.action` names it (`ec2:DescribeImages`, `eks:DescribeCluster`). */
  readonly action: string;
  /** The SDK's `amz-sdk-invocation-id` header: one per command, equal across its retries. */
  readonly invocationId: string;
  readonly method: string;
  /** Path and query string. */
  readonly url: string;
  readonly body: string;
}

/** The error each service throttles with (IAM/STS/SNS `Throttling`, EC2 `RequestLimitExceeded`). */
function throttlingError(service: string): AwsError {
  if (service === 'ec2')
    return new AwsError('RequestLimitExceeded', 503, 'Request limit exceeded.');
  if (['iam', 'sts', 'sns'].includes(service))
    return new AwsError('Throttling', 400, 'Rate exceeded');
  return new AwsError('ThrottlingException', 400, 'Rate exceeded');
}

/**
 * From the `fromCall`-th request on (counted since the fault was set), `count` times; set for a
 * service (`ec2`) or for one IAM action of it (`ec2:DescribeImages`), which counts its own requests.
 */
export interface Fault {
  readonly kind: FaultKind;
  readonly fromCall: number;
  readonly count?: number;
  /** Requests the fault leaves alone: neither counted nor failed. */
  readonly except?: (request: ReceivedRequest) => boolean;
}

class AwsError extends Error {
  constructor(
    readonly code: string,
    readonly status: number,
    message: string
  ) {
    super(message);
  }
}

const denied = (action: string, resource: string, reason: string) =>
  new AwsError(
    'AccessDenied',
    403,
    `User is not authorized to perform: ${action} on resource: ${resource} (${reason})`
  );

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** `AWS4-HMAC-SHA256 Credential=AKID/date/region/service/aws4_request, …` */
function credentialScope(authorization: string | undefined) {
  const match = authorization?.match(/Credential=([^/]+)\/\d{8}\/([^/]+)\/([^/]+)\/aws4_request/);
  return match
    ? { accessKey: match[1] ?? '', region: match[2] ?? '', service: match[3] ?? '' }
    : undefined;
}

/** Services whose answers depend on the region asked (the others are global or home-region only). */
const REGIONAL_SERVICES: ReadonlySet<string> = new Set(['ec2', 'ssm', 'kms', 'eks']);

const IAM_ACTION_OF: Readonly<Record<string, string>> = {
  'sns:PublishBatch': 'sns:Publish',
  'sqs:SendMessageBatch': 'sqs:SendMessage',
  'sqs:DeleteMessageBatch': 'sqs:DeleteMessage',
};

/** The operation a REST request (EKS, Security Hub) calls, as the `eks()` route answers it. */
function restOperation(service: string, method: string, path: string): string {
  const [root, name, sub, item] = path.split('/').filter(Boolean);
  if (service === 'securityhub') {
    if (path.startsWith('/findings/import')) return 'BatchImportFindings';
    if (path.startsWith('/findings/batchupdate')) return 'BatchUpdateFindings';
  }
  if (service === 'eks' && root === 'clusters') {
    if (name === undefined) return 'ListClusters';
    if (sub === undefined) return 'DescribeCluster';
    if (sub === 'access-entries') {
      return item === undefined ? 'ListAccessEntries' : 'DescribeAccessEntry';
    }
    if (sub === 'pod-identity-associations') {
      return item === undefined ? 'ListPodIdentityAssociations' : 'DescribePodIdentityAssociation';
    }
  }
  return `${method} ${path}`;
}

export class AwsEmulator {
  readonly calls: CallRecord[] = [];
  readonly published: PublishedMessage[] = [];
  readonly queued: QueuedMessage[] = [];
  /** Every request a fault failed (or left unanswered), in order: proof a fault was met. */
  readonly injected: { readonly action: string; readonly kind: FaultKind }[] = [];
  /** Security Hub's findings by `Id` (BatchImportFindings / BatchUpdateFindings). */
  readonly securityHub = new Map<string, SecurityHubRecord>();
  private readonly faults = new Map<string, Fault & { seen: number }>();
  private sdk: WorldSdk;
  private world: World;
  /** The worlds of the other emulated regions, with their SDKs. */
  private readonly regional = new Map<string, { world: World; sdk: WorldSdk }>();
  private holds: {
    matches: (call: { principal: string; service: string; target: string }) => boolean;
    reached: () => void;
    released: Promise<void>;
  }[] = [];
  private readonly topicKeys: Map<string, string>;
  private server: Server | undefined;
  endpoint = '';

  constructor(
    private readonly options: {
      readonly account: Account;
      readonly world: World;
      readonly now: Date;
      /** The template's authorizer (or any policy: the CLI benchmark allows everything). */
      readonly authorizer: Pick<TemplateAuthorizer, 'authorize'> &
        Partial<Pick<TemplateAuthorizer, 'setResourcePolicy'>>;
      readonly principalsByAccessKey: ReadonlyMap<string, Principal>;
      readonly topics: ReadonlySet<string>;
      readonly topicKeys: ReadonlyMap<string, string>;
      /** Each cluster's Kubernetes API, by `kubeEndpointKey(region, name)`. */
      readonly kubeEndpoints: ReadonlyMap<string, string>;
      readonly kubeCaPem: string;
      readonly dynamoEndpoint: string;
      /** The emulator's TLS certificate (clients trust its CA through NODE_EXTRA_CA_CERTS). */
      readonly tls: { readonly key: string; readonly cert: string };
      /** Sees every request first; false answers it with the service's throttling error. */
      readonly admit?: (request: ReceivedRequest) => boolean;
      /**
       * Worlds of regions other than the account's, by region. When given, a regional request
       * (EC2, SSM, EKS) for a region that is neither home nor listed fails; without it, every
       * region answers from the home world.
       */
      readonly regions?: ReadonlyMap<string, World>;
    }
  ) {
    this.world = options.world;
    this.sdk = createWorldSdk(options.world, { now: options.now });
    this.topicKeys = new Map(options.topicKeys);
    for (const [region, world] of options.regions ?? []) this.setRegionWorld(region, world);
  }

  async start(): Promise<string> {
    this.server = createServer(this.options.tls, (req, res) => {
      this.handle(req, res).catch((error: unknown) => {
        // A client that gave up (its request timeout) leaves a half-written answer: drop it.
        if (res.headersSent) res.destroy();
        else res.writeHead(500).end(String(error));
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.endpoint = `https://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.endpoint;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Answers from another world from now on (an AMI deregistered, a policy edited…). */
  setWorld(world: World): void {
    this.world = world;
    this.sdk = createWorldSdk(world, { now: this.options.now });
  }

  /** Answers `region`'s regional requests from `world` from now on. */
  setRegionWorld(region: string, world: World): void {
    if (region === this.options.account.region) throw new Error(`${region} is home: setWorld`);
    if (world.region !== region) throw new Error(`the world of ${region} says ${world.region}`);
    this.regional.set(region, { world, sdk: createWorldSdk(world, { now: this.options.now }) });
  }

  /** The world (and SDK) a regional request of `region` is answered from. */
  private regionOf(region: string): { world: World; sdk: WorldSdk } {
    const regional = this.regional.get(region);
    if (regional) return regional;
    if (region === this.options.account.region || this.options.regions === undefined) {
      return { world: this.world, sdk: this.sdk };
    }
    throw new AwsError('UnrecognizedClientException', 400, `region ${region} is not emulated`);
  }

  /**
   * Holds the first request matching `matches` (principal = the role's logical id; target = the
   * JSON target or Query action) until `release` is called; `reached` resolves when it arrives.
   */
  hold(matches: (call: { principal: string; service: string; target: string }) => boolean): {
    reached: Promise<void>;
    release: () => void;
  } {
    let reached = () => {};
    let release = () => {};
    const reachedPromise = new Promise<void>((resolve) => {
      reached = resolve;
    });
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.holds.push({ matches, reached, released });
    return { reached: reachedPromise, release };
  }

  /** Faults the requests of `target`: a service (`ec2`) or one IAM action (`ec2:DescribeImages`). */
  setFault(target: string, fault: Fault | undefined): void {
    if (fault === undefined) this.faults.delete(target);
    else this.faults.set(target, { ...fault, seen: 0 });
  }

  clearFaults(): void {
    this.faults.clear();
  }

  /** Authorizes a call as AWS would and records it. */
  authorize(
    principal: Principal,
    service: string,
    action: string,
    resource: string,
    context: RequestContext = {},
    region: string = this.options.account.region
  ): void {
    const decision = this.options.authorizer.authorize(principal, action, resource, {
      'aws:SourceAccount': this.options.account.id,
      ...context,
    });
    this.calls.push({
      principal: principal.kind === 'role' ? principal.roleLogicalId : principal.service,
      service,
      action,
      resource,
      allowed: decision.allowed,
      reason: decision.reason,
      region,
      at: Date.now(),
      ...(context['dynamodb:LeadingKeys'] === undefined
        ? {}
        : { leadingKey: context['dynamodb:LeadingKeys'] }),
    });
    if (!decision.allowed) throw denied(action, resource, decision.reason);
  }

  /**
   * Publishing to an SSE topic: SNS uses the topic's key on the publisher's behalf, so the
   * publisher (or the service principal) needs kms:GenerateDataKey* and kms:Decrypt on it.
   */
  private authorizeTopicKey(principal: Principal, topicArn: string): void {
    const key = this.topicKeys.get(topicArn);
    if (key === undefined) return;
    try {
      this.authorize(principal, 'kms', 'kms:GenerateDataKey', key);
      this.authorize(principal, 'kms', 'kms:Decrypt', key);
    } catch (error) {
      throw new AwsError(
        'KMSAccessDenied',
        400,
        `KMS.AccessDeniedException: ${(error as Error).message}`
      );
    }
  }

  /** What a CloudWatch alarm action does: publish to the topic as cloudwatch.amazonaws.com. */
  alarmPublish(topicArn: string, alarmName: string): void {
    const principal: Principal = { kind: 'service', service: 'cloudwatch.amazonaws.com' };
    this.authorize(principal, 'sns', 'sns:Publish', topicArn);
    this.authorizeTopicKey(principal, topicArn);
    this.published.push({
      topicArn,
      publisher: 'cloudwatch.amazonaws.com',
      subject: `ALARM: "${alarmName}"`,
      message: JSON.stringify({ AlarmName: alarmName, NewStateValue: 'ALARM' }),
      attributes: {},
    });
  }

  /** The action's own fault when it has one, else the service's. */
  private injectedFault(service: string, request: ReceivedRequest): Fault | undefined {
    const fault = this.faults.get(request.action) ?? this.faults.get(service);
    if (!fault || fault.except?.(request)) return undefined;
    fault.seen += 1;
    const last = fault.fromCall + (fault.count ?? Number.POSITIVE_INFINITY) - 1;
    if (fault.seen < fault.fromCall || fault.seen > last) return undefined;
    this.injected.push({ action: request.action, kind: fault.kind });
    return fault;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await bodyOf(req);
    const scope = credentialScope(req.headers.authorization);
    const principal = scope && this.options.principalsByAccessKey.get(scope.accessKey);
    const service = scope?.service ?? 'unknown';
    // Global and home-region services are answered as the home region's.
    const region =
      REGIONAL_SERVICES.has(service) && scope?.region ? scope.region : this.options.account.region;
    const target =
      String(req.headers['x-amz-target'] ?? '')
        .split('.')
        .pop() ||
      new URLSearchParams(body.toString()).get('Action') ||
      (req.url ?? '');
    const caller = principal?.kind === 'role' ? principal.roleLogicalId : '';
    const held = this.holds.findIndex((entry) =>
      entry.matches({ principal: caller, service, target })
    );
    if (held >= 0) {
      const [entry] = this.holds.splice(held, 1);
      entry?.reached();
      await entry?.released;
    }
    const operation = req.headers['x-amz-target']
      ? target
      : new URLSearchParams(body.toString()).get('Action') ||
        `${req.method} ${(req.url ?? '').split('?')[0]}`;
    const action = operation.includes(' ')
      ? restOperation(service, req.method ?? '', (req.url ?? '').split('?')[0] ?? '')
      : operation;
    const received: ReceivedRequest = {
      service,
      operation,
      action: IAM_ACTION_OF[`${service}:${action}`] ?? `${service}:${action}`,
      invocationId: String(req.headers['amz-sdk-invocation-id'] ?? ''),
      method: req.method ?? '',
      url: req.url ?? '',
      body: body.toString(),
    };
    const fault = this.injectedFault(service, received);
    if (fault?.kind === 'reset') {
      req.socket.destroy();
      return;
    }
    // Never answered: the client gives up (its timeout) or close() drops the connection.
    if (fault?.kind === 'hang') return;
    try {
      const admitted = this.options.admit?.(received);
      if (admitted === false) throw throttlingError(service);
      if (!principal) throw new AwsError('InvalidClientTokenId', 403, 'unknown access key');
      if (fault) {
        throw fault.kind === 'throttle'
          ? throttlingError(service)
          : new AwsError(
              service === 'dynamodb' ? 'InternalServerError' : 'InternalFailure',
              500,
              'injected'
            );
      }
      switch (service) {
        case 'ec2':
        case 'iam':
        case 'sns':
        case 'sts':
          return await this.query(
            service,
            principal,
            new URLSearchParams(body.toString()),
            res,
            region
          );
        case 'ssm':
        case 'sqs':
        case 'kms':
          return await this.json(service, principal, req, body, res, region);
        case 'eks':
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify(this.eks(principal, req, region)));
          return;
        case 'dynamodb':
          return await this.dynamodb(principal, req, body, res);
        case 'securityhub':
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify(this.securityHubCall(principal, req, body, scope?.region ?? '')));
          return;
        default:
          throw new AwsError('UnknownService', 400, `service ${service} is not emulated`);
      }
    } catch (error) {
      this.writeError(service, req, res, error);
    }
  }

  private writeError(service: string, req: IncomingMessage, res: ServerResponse, error: unknown) {
    const failure =
      error instanceof AwsError
        ? error
        : new AwsError(
            (error as { name?: string }).name ?? 'InternalFailure',
            (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode ?? 500,
            (error as Error).message
          );
    if (['ec2', 'iam', 'sns', 'sts'].includes(service)) {
      res
        .writeHead(failure.status, { 'content-type': 'text/xml' })
        .end(queryError(service as QueryService, failure.code, failure.message));
      return;
    }
    const isJson = req.headers['x-amz-target'] !== undefined;
    res
      .writeHead(failure.status, {
        'content-type': isJson ? 'application/x-amz-json-1.0' : 'application/json',
        'x-amzn-errortype': failure.code,
      })
      .end(JSON.stringify({ __type: failure.code, message: failure.message }));
  }

  private async query(
    service: QueryService,
    principal: Principal,
    form: URLSearchParams,
    res: ServerResponse,
    region: string
  ): Promise<void> {
    const action = form.get('Action') ?? '';
    const { input: inputSchema } = operationSchemas(service, action);
    const input = readQuery(inputSchema, form, service === 'ec2') as Record<string, unknown>;
    const output = await this.answerQuery(service, principal, action, input, region);
    res.writeHead(200, { 'content-type': 'text/xml' }).end(queryResponse(service, action, output));
  }

  private roleArnOf(name: string): string {
    const role = this.world.iam.roles.find((entry) => entry.RoleName === name);
    return (
      role?.Arn ??
      `arn:${this.options.account.partition}:iam::${this.options.account.id}:role/${name}`
    );
  }

  private async answerQuery(
    service: QueryService,
    principal: Principal,
    action: string,
    input: Record<string, unknown>,
    region: string
  ): Promise<unknown> {
    const { id, partition } = this.options.account;
    const iamAction = IAM_ACTION_OF[`${service}:${action}`] ?? `${service}:${action}`;
    if (service === 'sts') {
      if (action !== 'GetCallerIdentity') this.authorize(principal, service, iamAction, '*');
      const arn = principal.kind === 'role' ? principal.arn : principal.service;
      return { Account: id, Arn: arn, UserId: `AROAEMULATED:${principal.kind}` };
    }
    if (service === 'ec2') {
      const { sdk } = this.regionOf(region);
      this.authorize(principal, service, iamAction, '*', {}, region);
      const Command = commandOf(ec2, action);
      return sdk.ec2.send(new Command(input) as never);
    }
    if (service === 'iam') {
      const resource =
        typeof input.PolicySourceArn === 'string'
          ? input.PolicySourceArn
          : typeof input.PolicyArn === 'string'
            ? input.PolicyArn
            : typeof input.RoleName === 'string'
              ? this.roleArnOf(input.RoleName)
              : typeof input.InstanceProfileName === 'string'
                ? `arn:${partition}:iam::${id}:instance-profile/${input.InstanceProfileName}`
                : '*';
      this.authorize(principal, service, iamAction, resource);
      const Command = commandOf(iam, action);
      return this.sdk.iam.send(new Command(input) as never);
    }
    // SNS
    const topicArn = String(input.TopicArn ?? '');
    this.authorize(principal, service, iamAction, topicArn);
    if (!this.options.topics.has(topicArn))
      throw new AwsError('NotFound', 404, `Topic does not exist: ${topicArn}`);
    this.authorizeTopicKey(principal, topicArn);
    const publisher = principal.kind === 'role' ? principal.roleLogicalId : principal.service;
    const attributesOf = (map: unknown) =>
      Object.fromEntries(
        Object.entries((map ?? {}) as Record<string, { StringValue?: string }>).map(
          ([name, value]) => [name, value.StringValue ?? '']
        )
      );
    const record = (entry: Record<string, unknown>) =>
      this.published.push({
        topicArn,
        publisher,
        ...(typeof entry.Subject === 'string' ? { subject: entry.Subject } : {}),
        message: String(entry.Message ?? ''),
        attributes: attributesOf(entry.MessageAttributes),
      });
    if (action === 'Publish') {
      record(input);
      return { MessageId: randomUUID() };
    }
    if (action === 'PublishBatch') {
      const entries = (input.PublishBatchRequestEntries ?? []) as Record<string, unknown>[];
      for (const entry of entries) record(entry);
      return {
        Successful: entries.map((entry) => ({ Id: entry.Id, MessageId: randomUUID() })),
        Failed: [],
      };
    }
    throw new AwsError('UnsupportedOperation', 400, `sns ${action}`);
  }

  private async json(
    service: 'ssm' | 'sqs' | 'kms',
    principal: Principal,
    req: IncomingMessage,
    body: Buffer,
    res: ServerResponse,
    requestRegion: string
  ): Promise<void> {
    const target = String(req.headers['x-amz-target'] ?? '');
    const action = target.split('.').pop() ?? '';
    const input = JSON.parse(body.toString() || '{}') as Record<string, unknown>;
    const iamAction = IAM_ACTION_OF[`${service}:${action}`] ?? `${service}:${action}`;
    const { id, region, partition } = this.options.account;
    let output: unknown;
    if (service === 'ssm') {
      const { sdk } = this.regionOf(requestRegion);
      const names = action === 'GetParameters' ? (input.Names as string[]) : [String(input.Name)];
      for (const name of names) {
        const path = name.startsWith('/') ? name : `/${name}`;
        const owner = path.startsWith('/aws/service/') ? '' : id;
        this.authorize(
          principal,
          service,
          iamAction,
          `arn:${partition}:ssm:${requestRegion}:${owner}:parameter${path}`,
          {},
          requestRegion
        );
      }
      const Command = commandOf(ssm, action);
      output = await sdk.ssm.send(new Command(input) as never);
    } else if (service === 'kms') {
      // KMS authorizes on the key an id, ARN or alias resolves to; an unknown one is NotFound.
      const { sdk } = this.regionOf(requestRegion);
      const keyArn = await sdk.kms
        .send(new kms.DescribeKeyCommand({ KeyId: String(input.KeyId ?? '') }))
        .then((described) => described.KeyMetadata?.Arn)
        .catch(() => undefined);
      if (keyArn !== undefined) {
        // The world's key policy decides with the function's identity policy, as KMS does.
        const policy = await sdk.kms
          .send(new kms.GetKeyPolicyCommand({ KeyId: keyArn, PolicyName: 'default' }))
          .then((answer) => answer.Policy)
          .catch(() => undefined);
        if (policy !== undefined) {
          const statements = (JSON.parse(policy) as { Statement?: unknown }).Statement ?? [];
          this.options.authorizer.setResourcePolicy?.(
            keyArn,
            (Array.isArray(statements) ? statements : [statements]) as never
          );
        }
        this.authorize(principal, service, iamAction, keyArn, {}, requestRegion);
      }
      const Command = commandOf(kms, action);
      output = await sdk.kms.send(new Command(input) as never);
    } else {
      const url = String(input.QueueUrl ?? '');
      const queueArn = `arn:${partition}:sqs:${region}:${id}:${url.split('/').pop() ?? ''}`;
      this.authorize(principal, service, iamAction, queueArn);
      const md5 = (text: string) => createHash('md5').update(text).digest('hex');
      const enqueue = (messageBody: string) => {
        const messageId = randomUUID();
        this.queued.push({ messageId, body: messageBody, queueArn });
        return { MessageId: messageId, MD5OfMessageBody: md5(messageBody) };
      };
      if (action === 'SendMessage') output = enqueue(String(input.MessageBody));
      else if (action === 'SendMessageBatch') {
        const entries = (input.Entries ?? []) as { Id: string; MessageBody: string }[];
        output = {
          Successful: entries.map((entry) => ({ Id: entry.Id, ...enqueue(entry.MessageBody) })),
          Failed: [],
        };
      } else if (action === 'GetQueueAttributes') output = { Attributes: {} };
      else throw new AwsError('UnsupportedOperation', 400, `sqs ${action}`);
    }
    const { output: schema } = operationSchemas(service, action);
    res
      .writeHead(200, { 'content-type': 'application/x-amz-json-1.1' })
      .end(JSON.stringify(toJson(schema, stripMetadata(output))));
  }

  private eksCluster(world: World, name: string): WorldCluster {
    const cluster = world.eks.clusters.find((entry) => entry.name === name);
    if (!cluster)
      throw new AwsError('ResourceNotFoundException', 404, `No cluster found for name: ${name}.`);
    return cluster;
  }

  /** The REST-JSON EKS operations the scanner calls; returns the response body. */
  private eks(principal: Principal, req: IncomingMessage, region: string): unknown {
    const { id, partition } = this.options.account;
    const { world } = this.regionOf(region);
    const authorize = (action: string, resource: string) =>
      this.authorize(principal, 'eks', action, resource, {}, region);
    const url = new URL(req.url ?? '/', 'http://localhost');
    const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    const clusterArn = (name: string) => `arn:${partition}:eks:${region}:${id}:cluster/${name}`;
    const [root, name, sub, item] = parts;
    if (root !== 'clusters') throw new AwsError('NotFound', 404, url.pathname);
    if (name === undefined) {
      authorize('eks:ListClusters', '*');
      return { clusters: world.eks.clusters.map((cluster) => cluster.name) };
    }
    if (sub === undefined) {
      authorize('eks:DescribeCluster', clusterArn(name));
      const cluster = this.eksCluster(world, name);
      const {
        accessEntries: _entries,
        podIdentityAssociations: _pods,
        kubernetes: _kube,
        ...rest
      } = cluster;
      return {
        cluster: {
          ...rest,
          arn: cluster.arn ?? clusterArn(name),
          status: cluster.status ?? 'ACTIVE',
          endpoint: this.options.kubeEndpoints.get(kubeEndpointKey(region, name)),
          certificateAuthority: { data: Buffer.from(this.options.kubeCaPem).toString('base64') },
        },
      };
    }
    const cluster = this.eksCluster(world, name);
    if (sub === 'access-entries' && item === undefined) {
      authorize('eks:ListAccessEntries', clusterArn(name));
      return { accessEntries: cluster.accessEntries.map((entry) => entry.principalArn) };
    }
    if (sub === 'access-entries' && item !== undefined) {
      const roleName = item.split('/').pop() ?? '';
      authorize(
        'eks:DescribeAccessEntry',
        `arn:${partition}:eks:${region}:${id}:access-entry/${name}/role/${id}/${roleName}/emulated`
      );
      const entry = cluster.accessEntries.find((candidate) => candidate.principalArn === item);
      if (!entry) throw new AwsError('ResourceNotFoundException', 404, `no access entry ${item}`);
      return { accessEntry: { clusterName: name, ...entry } };
    }
    if (sub === 'pod-identity-associations' && item === undefined) {
      authorize('eks:ListPodIdentityAssociations', clusterArn(name));
      const namespace = url.searchParams.get('namespace');
      const serviceAccount = url.searchParams.get('serviceAccount');
      const associations = cluster.podIdentityAssociations
        .filter((entry) => namespace === null || entry.namespace === namespace)
        .filter((entry) => serviceAccount === null || entry.serviceAccount === serviceAccount)
        .map((entry, index) => ({
          clusterName: name,
          namespace: entry.namespace,
          serviceAccount: entry.serviceAccount,
          associationId: entry.associationId ?? `a-emulated${index}`,
        }));
      return { associations };
    }
    if (sub === 'pod-identity-associations' && item !== undefined) {
      authorize(
        'eks:DescribePodIdentityAssociation',
        `arn:${partition}:eks:${region}:${id}:podidentityassociation/${name}/${item}`
      );
      const entry = cluster.podIdentityAssociations.find(
        (candidate, index) => (candidate.associationId ?? `a-emulated${index}`) === item
      );
      if (!entry) throw new AwsError('ResourceNotFoundException', 404, `no association ${item}`);
      return { association: { clusterName: name, associationId: item, ...entry } };
    }
    throw new AwsError('NotFound', 404, url.pathname);
  }

  /**
   * Security Hub (REST JSON): BatchImportFindings authorizes each finding's product ARN, which must
   * be this account's default product in the request's region; a finding that is not valid ASFF
   * fails as `InvalidInput`. BatchUpdateFindings authorizes with the `ASFFSyntaxPath` condition key
   * of the workflow it sets. Reopening (ARCHIVED → ACTIVE, or PASSED → anything else) resets a
   * NOTIFIED or RESOLVED workflow to NEW, as Security Hub does.
   */
  private securityHubCall(
    principal: Principal,
    req: IncomingMessage,
    body: Buffer,
    region: string
  ): unknown {
    const { id, partition } = this.options.account;
    const input = JSON.parse(body.toString() || '{}') as Record<string, unknown>;
    const caller = principal.kind === 'role' ? principal.roleLogicalId : principal.service;
    if (req.method === 'POST' && req.url?.startsWith('/findings/import')) {
      const findings = (input.Findings ?? []) as SecurityHubRecord['finding'][];
      const product = `arn:${partition}:securityhub:${region}:${id}:product/${id}/default`;
      for (const arn of new Set(findings.map((finding) => String(finding.ProductArn)))) {
        this.authorize(principal, 'securityhub', 'securityhub:BatchImportFindings', arn);
      }
      const failed: { Id: string; ErrorCode: string; ErrorMessage: string }[] = [];
      for (const finding of findings) {
        const problems = asffErrors([finding]);
        if (finding.ProductArn !== product || finding.AwsAccountId !== id) {
          problems.push(`ProductArn/AwsAccountId must be ${product} / ${id}`);
        }
        if (problems.length > 0) {
          failed.push({
            Id: finding.Id,
            ErrorCode: 'InvalidInput',
            ErrorMessage: problems[0] ?? '',
          });
          continue;
        }
        const previous = this.securityHub.get(finding.Id);
        const reopened =
          previous !== undefined &&
          ((previous.finding.RecordState === 'ARCHIVED' && finding.RecordState === 'ACTIVE') ||
            (previous.finding.Compliance?.Status === 'PASSED' &&
              finding.Compliance?.Status !== 'PASSED'));
        const workflow = previous?.workflowStatus ?? 'NEW';
        this.securityHub.set(finding.Id, {
          finding,
          workflowStatus:
            reopened && (workflow === 'NOTIFIED' || workflow === 'RESOLVED') ? 'NEW' : workflow,
          history: [
            ...(previous?.history ?? []),
            `import ${finding.RecordState} ${finding.Compliance?.Status} by ${caller}`,
          ],
        });
      }
      return {
        FailedCount: failed.length,
        SuccessCount: findings.length - failed.length,
        FailedFindings: failed,
      };
    }
    if (req.method === 'PATCH' && req.url?.startsWith('/findings/batchupdate')) {
      const identifiers = (input.FindingIdentifiers ?? []) as { Id: string; ProductArn: string }[];
      const status = (
        input.Workflow as { Status?: SecurityHubRecord['workflowStatus'] } | undefined
      )?.Status;
      this.authorize(principal, 'securityhub', 'securityhub:BatchUpdateFindings', '*', {
        ...(status === undefined ? {} : { 'securityhub:ASFFSyntaxPath/Workflow.Status': status }),
      });
      // A note needs both fields, each at most 512 characters (NoteUpdate).
      const note = input.Note as { Text?: unknown; UpdatedBy?: unknown } | undefined;
      if (
        note !== undefined &&
        (typeof note.Text !== 'string' ||
          typeof note.UpdatedBy !== 'string' ||
          note.Text.length === 0 ||
          note.Text.length > 512 ||
          note.UpdatedBy.length > 512)
      ) {
        throw new AwsError('InvalidInputException', 400, 'Note needs Text and UpdatedBy (≤ 512)');
      }
      const processed: { Id: string; ProductArn: string }[] = [];
      const unprocessed: unknown[] = [];
      for (const identifier of identifiers) {
        const record = this.securityHub.get(identifier.Id);
        if (record === undefined) {
          unprocessed.push({
            FindingIdentifier: identifier,
            ErrorCode: 'FindingNotFound',
            ErrorMessage: 'Finding Not Found',
          });
          continue;
        }
        this.securityHub.set(identifier.Id, {
          ...record,
          workflowStatus: status ?? record.workflowStatus,
          ...(note === undefined
            ? {}
            : { note: { text: String(note.Text), updatedBy: String(note.UpdatedBy) } }),
          history: [...record.history, `workflow ${status} by ${caller}`],
        });
        processed.push(identifier);
      }
      return { ProcessedFindings: processed, UnprocessedFindings: unprocessed };
    }
    throw new AwsError('UnsupportedOperation', 400, `securityhub ${req.method} ${req.url}`);
  }

  /** Authorizes, then hands the signed request to dynalite unchanged. */
  private async dynamodb(
    principal: Principal,
    req: IncomingMessage,
    body: Buffer,
    res: ServerResponse
  ): Promise<void> {
    const action =
      String(req.headers['x-amz-target'] ?? '')
        .split('.')
        .pop() ?? '';
    const input = JSON.parse(body.toString() || '{}') as {
      TableName?: string;
      Key?: { pk?: { S?: string } };
      Item?: { pk?: { S?: string } };
      RequestItems?: Record<string, unknown>;
      TransactItems?: Record<string, { TableName?: string }>[];
    };
    const leadingKey = (input.Key ?? input.Item)?.pk?.S;
    const { id, region, partition } = this.options.account;
    const tables = new Set<string>([
      ...(input.TableName ? [input.TableName] : []),
      ...Object.keys(input.RequestItems ?? {}),
      ...(input.TransactItems ?? []).flatMap((entry) =>
        Object.values(entry).flatMap((operation) =>
          operation.TableName ? [operation.TableName] : []
        )
      ),
    ]);
    for (const table of tables) {
      this.authorize(
        principal,
        'dynamodb',
        `dynamodb:${action}`,
        `arn:${partition}:dynamodb:${region}:${id}:table/${table}`,
        leadingKey === undefined ? {} : { 'dynamodb:LeadingKeys': leadingKey }
      );
    }
    const target = new URL(this.options.dynamoEndpoint);
    await new Promise<void>((resolve, reject) => {
      const forward = httpRequest(
        {
          host: target.hostname,
          port: target.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: target.host },
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 500, answer.headers);
          answer.pipe(res);
          answer.on('end', resolve);
        }
      );
      forward.on('error', reject);
      forward.end(body);
    });
  }
}

/** The SDK command class of an operation, to hand the parsed input to the world's fake client. */
function commandOf(module: object, action: string): new (input: unknown) => unknown {
  const Command = (module as Record<string, new (input: unknown) => unknown>)[`${action}Command`];
  if (!Command) throw new AwsError('UnsupportedOperation', 400, action);
  return Command;
}

function stripMetadata(output: unknown): unknown {
  if (output === null || typeof output !== 'object') return output;
  const { $metadata: _metadata, ...rest } = output as Record<string, unknown>;
  return rest;
}
