// Records the AWS responses a scan reads, in the SDK's own shapes, so `snapshot` can write a world
// file that replays the scan exactly. Wraps the senders the live adapter uses: what the scan asked
// for is what gets recorded, nothing more. Secrets are never recorded (see `recordedParameterValue`).
import type { DescribeInstanceTypeOfferingsCommandOutput, EC2Client } from '@aws-sdk/client-ec2';
import {
  GetInstanceProfileCommand,
  type GetInstanceProfileCommandOutput,
  GetRoleCommand,
  type GetRoleCommandOutput,
  type IAMClient,
  ListAttachedRolePoliciesCommand,
  type ListAttachedRolePoliciesCommandOutput,
} from '@aws-sdk/client-iam';
import {
  GetParameterCommand,
  type GetParameterCommandOutput,
  GetParametersCommand,
  type GetParametersCommandOutput,
  type SSMClient,
} from '@aws-sdk/client-ssm';
import type { AwsFactsClients } from '../aws/aws-facts-adapter.js';
import {
  EC2_LIST_FACTS,
  EC2_LIST_KEYS,
  type Ec2ListKey,
  INSTANCE_TYPE_OFFERINGS,
} from '../aws/fact-descriptors.js';
import { parameterNamesOf } from './world-facts.js';

/** Stands in for any parameter value that is not an AMI id (it could be a secret). */
export const REDACTED_PARAMETER_VALUE = '<redacted by nodeclass-scan snapshot: not an AMI id>';

const AMI_ID = /^ami-[0-9a-f]{8,17}$/;

/**
 * Only AMI ids are recorded verbatim. Anything else (SecureString ciphertext, free text) is
 * replaced by a marker that, like the original, is not an `ami-` value, so replay finds the same.
 */
function recordedParameterValue(type: string | undefined, value: string | undefined): string {
  if (type !== 'SecureString' && value !== undefined && AMI_ID.test(value)) return value;
  return REDACTED_PARAMETER_VALUE;
}

type Json = Record<string, unknown>;

/** Dates become ISO strings, `undefined` disappears: what JSON.stringify would write. */
function plain<T>(value: T): Json {
  return JSON.parse(JSON.stringify(value)) as Json;
}

export interface RecordedAws {
  /** Each EC2 list fact's items, by id, under its world-file key. */
  readonly ec2: Record<Ec2ListKey, Json[]>;
  /** Zone offerings of the scanned region; undefined when the scan never asked for them. */
  readonly instanceTypeOfferings?: { instanceType: string; zone: string }[];
  readonly parameters: Record<string, string>;
  readonly instanceProfiles: Json[];
  readonly roles: Json[];
}

export interface AwsRecorder {
  /** Senders for `createLiveAwsFacts`: they pass every call through and keep the responses. */
  readonly clients: AwsFactsClients;
  recorded(): RecordedAws;
}

function byKey(items: Map<string, Json>): Json[] {
  return [...items.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, item]) => item);
}

export function createAwsRecorder(inner: AwsFactsClients): AwsRecorder {
  const lists = Object.fromEntries(
    EC2_LIST_KEYS.map((key) => [key, new Map<string, Json>()])
  ) as Record<Ec2ListKey, Map<string, Json>>;
  let offerings: Map<string, { instanceType: string; zone: string }> | undefined;
  const parameters = new Map<string, string>();
  const profiles = new Map<string, Json>();
  const roles = new Map<string, Json>();
  const attached = new Map<string, Map<string, Json>>();

  function keep(target: Map<string, Json>, key: string | undefined, item: object): void {
    if (key !== undefined) target.set(key, plain(item));
  }

  function recordEc2(command: unknown, output: unknown): void {
    for (const key of EC2_LIST_KEYS) {
      const fact = EC2_LIST_FACTS[key];
      if (!fact.isCommand(command)) continue;
      for (const item of fact.page(output).items) keep(lists[key], fact.recordId(item), item);
      return;
    }
    if (INSTANCE_TYPE_OFFERINGS.isCommand(command)) {
      offerings ??= new Map();
      const { items } = INSTANCE_TYPE_OFFERINGS.page(
        output as DescribeInstanceTypeOfferingsCommandOutput
      );
      for (const offering of items)
        offerings.set(INSTANCE_TYPE_OFFERINGS.recordId(offering), offering);
    }
  }

  function recordSsm(command: unknown, output: unknown): void {
    if (command instanceof GetParametersCommand) {
      // Only plain names are batched, so each answer's Name is the name asked for.
      for (const parameter of (output as GetParametersCommandOutput).Parameters ?? []) {
        if (parameter.Name === undefined) continue;
        parameters.set(parameter.Name, recordedParameterValue(parameter.Type, parameter.Value));
      }
      return;
    }
    if (!(command instanceof GetParameterCommand)) return;
    const parameter = (output as GetParameterCommandOutput).Parameter;
    const name = parameter?.Name ?? parameterNamesOf(command.input.Name ?? '')[0] ?? '';
    if (name === '') return;
    parameters.set(name, recordedParameterValue(parameter?.Type, parameter?.Value));
  }

  function recordIam(command: unknown, output: unknown): void {
    if (command instanceof GetRoleCommand) {
      const role = (output as GetRoleCommandOutput).Role;
      if (role) keep(roles, role.RoleName, role);
    } else if (command instanceof GetInstanceProfileCommand) {
      const profile = (output as GetInstanceProfileCommandOutput).InstanceProfile;
      if (profile) keep(profiles, profile.InstanceProfileName, profile);
    } else if (command instanceof ListAttachedRolePoliciesCommand) {
      const roleName = command.input.RoleName ?? '';
      const policies = attached.get(roleName) ?? new Map<string, Json>();
      for (const policy of (output as ListAttachedRolePoliciesCommandOutput).AttachedPolicies ?? [])
        keep(policies, policy.PolicyArn, policy);
      attached.set(roleName, policies);
    }
  }

  // The SDK's `send` is overloaded; only the promise form is used by the adapters.
  function wrap<T extends { send: (...args: never[]) => unknown }>(
    sender: Pick<T, 'send'>,
    record: (command: unknown, output: unknown) => void
  ): Pick<T, 'send'> {
    const send = async (command: unknown): Promise<unknown> => {
      const output = await (sender.send as (command: unknown) => Promise<unknown>)(command);
      record(command, output);
      return output;
    };
    return { send } as unknown as Pick<T, 'send'>;
  }

  return {
    clients: {
      ec2: wrap<EC2Client>(inner.ec2, recordEc2),
      ssm: wrap<SSMClient>(inner.ssm, recordSsm),
      iam: wrap<IAMClient>(inner.iam, recordIam),
    },
    recorded(): RecordedAws {
      const recordedRoles = byKey(roles).map((role) => ({
        ...role,
        AttachedPolicies: byKey(attached.get(String(role.RoleName)) ?? new Map()),
      }));
      return {
        ec2: Object.fromEntries(EC2_LIST_KEYS.map((key) => [key, byKey(lists[key])])) as Record<
          Ec2ListKey,
          Json[]
        >,
        ...(offerings === undefined
          ? {}
          : {
              instanceTypeOfferings: [...offerings.entries()]
                .sort(([a], [b]) => a.localeCompare(b))
                .map(([, offering]) => offering),
            }),
        parameters: Object.fromEntries([...parameters].sort(([a], [b]) => a.localeCompare(b))),
        instanceProfiles: byKey(profiles),
        roles: recordedRoles,
      };
    },
  };
}
