// The synthesized template as the simulation deploys it: CloudFormation intrinsics resolved to
// the physical names the emulator uses (physical name = logical id), the functions with their
// bundle, role and environment, and the resource policies AWS would enforce.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Account {
  readonly id: string;
  readonly region: string;
  readonly partition: string;
}

interface Resource {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
  readonly Metadata?: Record<string, unknown>;
}

export interface PolicyStatement {
  readonly Sid?: string;
  readonly Effect: 'Allow' | 'Deny';
  readonly Action?: string | string[];
  readonly NotAction?: string | string[];
  readonly Resource?: string | string[];
  readonly NotResource?: string | string[];
  readonly Principal?: '*' | Record<string, string | string[]>;
  readonly Condition?: Record<string, Record<string, string | string[] | boolean>>;
}

export interface DeployedFunction {
  /** Construct id: `Dispatch`, `ScanCluster`, `AmiEvent`, `IamEvent`. */
  readonly name: string;
  readonly logicalId: string;
  readonly bundleDirectory: string;
  /** `index.handler` → file `index.mjs`, export `handler`. */
  readonly handler: string;
  readonly environment: Readonly<Record<string, string>>;
  readonly roleLogicalId: string;
  readonly roleArn: string;
  readonly timeoutSeconds: number;
  readonly memoryMb: number;
}

export class DeployedTemplate {
  readonly resources: Readonly<Record<string, Resource>>;
  /**
   * Where the emulated SQS lives: queue URLs are this origin plus `/<account>/<name>`, as local
   * emulators hand them out (the SDK sends SQS requests to the queue URL's host).
   */
  sqsOrigin = 'https://sqs.us-east-1.amazonaws.com';

  constructor(
    readonly assemblyDirectory: string,
    readonly stackName: string,
    readonly account: Account
  ) {
    const template = JSON.parse(
      readFileSync(join(assemblyDirectory, `${stackName}.template.json`), 'utf8')
    ) as { Resources: Record<string, Resource> };
    this.resources = template.Resources;
  }

  ofType(type: string): [string, Resource][] {
    return Object.entries(this.resources).filter(([, resource]) => resource.Type === type);
  }

  /** The physical value of `Ref`. */
  ref(logicalId: string): string {
    const { id, region, partition } = this.account;
    const pseudo: Record<string, string> = {
      'AWS::Partition': partition,
      'AWS::AccountId': id,
      'AWS::Region': region,
      'AWS::URLSuffix': 'amazonaws.com',
      'AWS::StackName': this.stackName,
      'AWS::NoValue': '',
    };
    if (pseudo[logicalId] !== undefined) return pseudo[logicalId];
    switch (this.resources[logicalId]?.Type) {
      case 'AWS::SNS::Topic':
        return `arn:${partition}:sns:${region}:${id}:${logicalId}`;
      case 'AWS::SQS::Queue':
        return `${this.sqsOrigin}/${id}/${logicalId}`;
      case 'AWS::Logs::LogGroup':
        return `/aws/lambda/${logicalId}`;
      case undefined:
        throw new Error(`template: Ref to unknown ${logicalId}`);
      default:
        return logicalId;
    }
  }

  getAtt(logicalId: string, attribute: string): string {
    const { id, region, partition } = this.account;
    const type = this.resources[logicalId]?.Type;
    const arns: Record<string, string> = {
      'AWS::SQS::Queue': `arn:${partition}:sqs:${region}:${id}:${logicalId}`,
      'AWS::DynamoDB::Table': `arn:${partition}:dynamodb:${region}:${id}:table/${logicalId}`,
      'AWS::KMS::Key': `arn:${partition}:kms:${region}:${id}:key/${logicalId}`,
      'AWS::IAM::Role': `arn:${partition}:iam::${id}:role/${logicalId}`,
      'AWS::Lambda::Function': `arn:${partition}:lambda:${region}:${id}:function:${logicalId}`,
      'AWS::Logs::LogGroup': `arn:${partition}:logs:${region}:${id}:log-group:/aws/lambda/${logicalId}:*`,
      'AWS::SNS::Topic': `arn:${partition}:sns:${region}:${id}:${logicalId}`,
      'AWS::Events::Rule': `arn:${partition}:events:${region}:${id}:rule/${logicalId}`,
    };
    if (attribute === 'Arn' && type !== undefined) {
      const service = type.split('::')[1]?.toLowerCase() ?? 'unknown';
      return arns[type] ?? `arn:${partition}:${service}:${region}:${id}:${logicalId}`;
    }
    if (attribute === 'QueueName' || attribute === 'TopicName') return logicalId;
    if (attribute === 'QueueUrl') return this.ref(logicalId);
    throw new Error(`template: no emulated value for ${logicalId}.${attribute} (${type})`);
  }

  /** Resolves Ref, Fn::GetAtt, Fn::Join, Fn::Select, Fn::Split and Fn::Sub anywhere in `value`. */
  resolve(value: unknown): unknown {
    if (Array.isArray(value)) return value.map((item) => this.resolve(item));
    if (value === null || typeof value !== 'object') return value;
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record);
    if (keys.length === 1) {
      const [key] = keys as [string];
      const argument = record[key];
      if (key === 'Ref') return this.ref(String(argument));
      if (key === 'Fn::GetAtt') {
        const [logicalId, attribute] = argument as [string, string];
        return this.getAtt(logicalId, attribute);
      }
      if (key === 'Fn::Join') {
        const [separator, parts] = argument as [string, unknown[]];
        return (this.resolve(parts) as unknown[]).join(separator);
      }
      if (key === 'Fn::Select') {
        const [index, list] = argument as [number | string, unknown];
        return (this.resolve(list) as unknown[])[Number(index)];
      }
      if (key === 'Fn::Split') {
        const [separator, source] = argument as [string, unknown];
        return String(this.resolve(source)).split(separator);
      }
      if (key === 'Fn::Sub') {
        const text = typeof argument === 'string' ? argument : (argument as [string])[0];
        return text.replace(/\$\{([^}]+)\}/g, (_, name: string) => {
          const [logicalId, attribute] = name.split('.') as [string, string | undefined];
          return attribute === undefined ? this.ref(logicalId) : this.getAtt(logicalId, attribute);
        });
      }
      if (key.startsWith('Fn::')) throw new Error(`template: unsupported intrinsic ${key}`);
    }
    return Object.fromEntries(keys.map((key) => [key, this.resolve(record[key])]));
  }

  private cdkPath(logicalId: string): string {
    return String(this.resources[logicalId]?.Metadata?.['aws:cdk:path'] ?? '');
  }

  /** The functions, keyed by construct id (the path segment above `/Function/Resource`). */
  functions(): Map<string, DeployedFunction> {
    const functions = new Map<string, DeployedFunction>();
    for (const [logicalId, resource] of this.ofType('AWS::Lambda::Function')) {
      const path = this.cdkPath(logicalId).split('/');
      const name = path[path.length - 3];
      const asset = resource.Metadata?.['aws:asset:path'];
      const props = resource.Properties ?? {};
      const role = props.Role as { 'Fn::GetAtt': [string, string] } | undefined;
      if (name === undefined || typeof asset !== 'string' || role === undefined) continue;
      const variables = (props.Environment as { Variables?: Record<string, unknown> } | undefined)
        ?.Variables;
      functions.set(name, {
        name,
        logicalId,
        bundleDirectory: join(this.assemblyDirectory, asset),
        handler: String(props.Handler),
        environment: this.resolve(variables ?? {}) as Record<string, string>,
        roleLogicalId: role['Fn::GetAtt'][0],
        roleArn: this.getAtt(role['Fn::GetAtt'][0], 'Arn'),
        timeoutSeconds: Number(props.Timeout ?? 3),
        memoryMb: Number(props.MemorySize ?? 128),
      });
    }
    return functions;
  }

  /** Identity-policy statements of a role: its inline policies and every AWS::IAM::Policy naming it. */
  roleStatements(roleLogicalId: string): PolicyStatement[] {
    const statements: PolicyStatement[] = [];
    const role = this.resources[roleLogicalId];
    for (const policy of (role?.Properties?.Policies ?? []) as { PolicyDocument: unknown }[]) {
      statements.push(...this.statementsOf(policy.PolicyDocument));
    }
    for (const [, policy] of [
      ...this.ofType('AWS::IAM::Policy'),
      ...this.ofType('AWS::IAM::ManagedPolicy'),
    ]) {
      const roles = (policy.Properties?.Roles ?? []) as { Ref?: string }[];
      if (roles.some((entry) => entry.Ref === roleLogicalId)) {
        statements.push(...this.statementsOf(policy.Properties?.PolicyDocument));
      }
    }
    return statements;
  }

  statementsOf(document: unknown): PolicyStatement[] {
    const resolved = this.resolve(document) as { Statement?: PolicyStatement[] } | undefined;
    return resolved?.Statement ?? [];
  }

  /** AWS managed policies attached to a role (by ARN). */
  managedPolicyArns(roleLogicalId: string): string[] {
    const arns = this.resources[roleLogicalId]?.Properties?.ManagedPolicyArns ?? [];
    return (this.resolve(arns) as string[]).map(String);
  }

  /** Resource policies by the ARN they protect: topic, queue and key policies. */
  resourcePolicies(): Map<string, PolicyStatement[]> {
    const policies = new Map<string, PolicyStatement[]>();
    const add = (arn: string, statements: PolicyStatement[]) =>
      policies.set(arn, [...(policies.get(arn) ?? []), ...statements]);
    for (const [, policy] of this.ofType('AWS::SNS::TopicPolicy')) {
      for (const topic of this.resolve(policy.Properties?.Topics ?? []) as string[]) {
        add(topic, this.statementsOf(policy.Properties?.PolicyDocument));
      }
    }
    for (const [, policy] of this.ofType('AWS::SQS::QueuePolicy')) {
      for (const url of this.resolve(policy.Properties?.Queues ?? []) as string[]) {
        const name = url.split('/').pop() ?? '';
        add(this.getAtt(name, 'Arn'), this.statementsOf(policy.Properties?.PolicyDocument));
      }
    }
    for (const [logicalId, key] of this.ofType('AWS::KMS::Key')) {
      add(this.getAtt(logicalId, 'Arn'), this.statementsOf(key.Properties?.KeyPolicy));
    }
    return policies;
  }

  /** Topic ARN → the ARN of its KMS key, for SSE topics. */
  topicKeys(): Map<string, string> {
    const keys = new Map<string, string>();
    for (const [logicalId, topic] of this.ofType('AWS::SNS::Topic')) {
      const key = topic.Properties?.KmsMasterKeyId;
      if (key !== undefined) keys.set(this.ref(logicalId), String(this.resolve(key)));
    }
    return keys;
  }
}
