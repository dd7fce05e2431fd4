// Opt-in DryRun mode (https://docs.aws.amazon.com/AWSEC2/latest/APIReference/CommonParameters.html): EC2's own verdict on RunInstances and CreateFleet for a class,
// made with an assumed role. `DryRunOperation` (HTTP 412) is success and never an error in metrics
// or logs. A token bucket keeps this traffic far below Karpenter's shared RunInstances bucket
// (burst 5, refill 2/s per account and region).
import {
  CreateFleetCommand,
  DescribeLaunchTemplatesCommand,
  type EC2Client,
  RunInstancesCommand,
  type TagSpecification,
} from '@aws-sdk/client-ec2';
import {
  AssumeRoleCommand,
  DecodeAuthorizationMessageCommand,
  type STSClient,
} from '@aws-sdk/client-sts';
import type { DryRunOutcome } from '../../core/facts/permissions.js';
import type { DryRunLaunch, DryRunPort } from '../../core/ports/permissions.js';
import { TokenBucket } from '../../shared/token-bucket.js';

export { TokenBucket };

import { isDryRunSuccess, isThrottling, toSourceUnavailable } from './aws-errors.js';

/** What the scanner's own role needs to enter DryRun mode. */
export const dryRunActions = ['sts:AssumeRole'] as const;

export type StsSender = Pick<STSClient, 'send'>;
export type Ec2Sender = Pick<EC2Client, 'send'>;

export interface AssumedCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken: string;
  readonly expiration?: Date;
}

/** Credentials of the configured DryRun role; build the DryRun EC2 client with them. */
export async function assumeDryRunRole(
  sts: StsSender,
  roleArn: string,
  sessionName = 'nodeclass-scanner-dry-run'
): Promise<AssumedCredentials> {
  try {
    const response = await sts.send(
      new AssumeRoleCommand({
        RoleArn: roleArn,
        RoleSessionName: sessionName,
        DurationSeconds: 900,
      })
    );
    const credentials = response.Credentials;
    if (!credentials?.AccessKeyId || !credentials.SecretAccessKey || !credentials.SessionToken) {
      throw new Error(`sts:AssumeRole for ${roleArn} returned no credentials`);
    }
    return {
      accessKeyId: credentials.AccessKeyId,
      secretAccessKey: credentials.SecretAccessKey,
      sessionToken: credentials.SessionToken,
      ...(credentials.Expiration === undefined ? {} : { expiration: credentials.Expiration }),
    };
  } catch (error) {
    throw toSourceUnavailable('sts:AssumeRole', error);
  }
}

export interface DryRunObserver {
  /** Counts a real failure (SourceErrors); never called for DryRunOperation. */
  readonly sourceError?: (operation: string, code: string) => void;
  readonly warn?: (message: string, details?: Record<string, unknown>) => void;
}

export interface DryRunProbeOptions {
  /** EC2 client holding the assumed role's credentials. */
  readonly ec2: Ec2Sender;
  /** STS client (same credentials) for DecodeAuthorizationMessage. */
  readonly sts: StsSender;
  readonly limiter: TokenBucket;
  readonly observer?: DryRunObserver;
}

function codeOf(error: unknown): string {
  return (error as { name?: string } | undefined)?.name ?? 'Error';
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** EC2 puts the encoded blob only in the message text; nothing else carries it. */
function encodedMessageOf(message: string): string | undefined {
  return /Encoded authorization failure message:\s*(\S+)/.exec(message)?.[1];
}

function tagSpecifications(
  types: readonly string[],
  tags: Readonly<Record<string, string>>
): TagSpecification[] {
  const list = Object.entries(tags).map(([Key, Value]) => ({ Key, Value }));
  return types.map((type) => ({
    ResourceType: type as TagSpecification['ResourceType'],
    Tags: list,
  }));
}

/** Karpenter's validation fallback types, by architecture (https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/controllers/nodeclass/validation.go). */
function instanceTypeFor(architecture: string | undefined): string {
  return architecture === 'arm64' ? 'm6g.large' : 'm5.large';
}

export function createDryRunProbe(options: DryRunProbeOptions): DryRunPort {
  const { ec2, sts, limiter, observer } = options;

  async function decode(message: string): Promise<string | undefined> {
    const encoded = encodedMessageOf(message);
    if (encoded === undefined) return undefined;
    try {
      const response = await sts.send(
        new DecodeAuthorizationMessageCommand({ EncodedMessage: encoded })
      );
      return response.DecodedMessage;
    } catch {
      // sts:DecodeAuthorizationMessage not permitted: the raw message is still reported.
      return undefined;
    }
  }

  async function verdict(
    operation: DryRunOutcome['operation'],
    send: () => Promise<unknown>
  ): Promise<DryRunOutcome> {
    await limiter.take();
    try {
      await send();
      return {
        operation,
        outcome: 'rejected',
        code: 'NoDryRunResponse',
        message: 'EC2 accepted the request without DryRun semantics',
      };
    } catch (error) {
      if (isDryRunSuccess(error)) {
        return {
          operation,
          outcome: 'allowed',
          code: 'DryRunOperation',
          message: 'Request would have succeeded (DryRunOperation).',
        };
      }
      const code = codeOf(error);
      const message = messageOf(error);
      observer?.sourceError?.(`ec2:${operation}`, code);
      observer?.warn?.('EC2 DryRun failed', { operation, code });
      if (code === 'UnauthorizedOperation') {
        const decodedMessage = await decode(message);
        return {
          operation,
          outcome: 'unauthorized',
          code,
          message,
          ...(decodedMessage === undefined ? {} : { decodedMessage }),
        };
      }
      if (isThrottling(error)) return { operation, outcome: 'unavailable', code, message };
      return { operation, outcome: 'rejected', code, message };
    }
  }

  async function launchTemplateOf(nodeClassName: string): Promise<string | undefined> {
    const response = await ec2.send(
      new DescribeLaunchTemplatesCommand({
        Filters: [{ Name: 'tag:karpenter.k8s.aws/ec2nodeclass', Values: [nodeClassName] }],
        MaxResults: 5,
      })
    );
    return response.LaunchTemplates?.[0]?.LaunchTemplateName;
  }

  return {
    async probe(launch: DryRunLaunch): Promise<readonly DryRunOutcome[]> {
      const instanceType = instanceTypeFor(launch.architecture);
      const runInstances = await verdict('RunInstances', () =>
        ec2.send(
          new RunInstancesCommand({
            DryRun: true,
            MinCount: 1,
            MaxCount: 1,
            ImageId: launch.imageId,
            InstanceType: instanceType as never,
            IamInstanceProfile: { Name: launch.instanceProfile },
            NetworkInterfaces: [
              { DeviceIndex: 0, SubnetId: launch.subnetId, Groups: [...launch.securityGroupIds] },
            ],
            TagSpecifications: tagSpecifications(
              ['instance', 'volume', 'network-interface'],
              launch.tags
            ),
          })
        )
      );
      // CreateFleet needs a launch template; Karpenter's own carries the profile and groups.
      let template: string | undefined;
      try {
        template = await launchTemplateOf(launch.nodeClassName);
      } catch (error) {
        return [
          runInstances,
          {
            operation: 'CreateFleet',
            outcome: 'unavailable',
            code: codeOf(error),
            message: messageOf(error),
          },
        ];
      }
      if (template === undefined) {
        return [
          runInstances,
          {
            operation: 'CreateFleet',
            outcome: 'skipped',
            message: 'no launch template created by Karpenter for this class was found',
          },
        ];
      }
      const createFleet = await verdict('CreateFleet', () =>
        ec2.send(
          new CreateFleetCommand({
            DryRun: true,
            Type: 'instant',
            TargetCapacitySpecification: {
              DefaultTargetCapacityType: 'on-demand',
              TotalTargetCapacity: 1,
            },
            OnDemandOptions: { AllocationStrategy: 'lowest-price' },
            LaunchTemplateConfigs: [
              {
                LaunchTemplateSpecification: { LaunchTemplateName: template, Version: '$Latest' },
                Overrides: [
                  {
                    InstanceType: instanceType as never,
                    SubnetId: launch.subnetId,
                    ImageId: launch.imageId,
                    IamInstanceProfile: { Name: launch.instanceProfile },
                  },
                ],
              },
            ],
            TagSpecifications: tagSpecifications(['fleet', 'instance', 'volume'], launch.tags),
          })
        )
      );
      return [runInstances, createFleet];
    },
  };
}
