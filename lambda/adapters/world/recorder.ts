// Records the AWS responses a scan reads, in the SDK's own shapes, so `snapshot` can write a world
// file that replays the scan exactly. Wraps the senders the live adapter uses: what the scan asked
// for is what gets recorded, nothing more. Secrets are never recorded (the parameters' descriptor redacts them).
// The policy documents a role's reader reads (inline, attached, boundary) are kept with the role
// (`RolePolicyList`) and in `iam.policies`, so its simulations replay through the policy engine.
import type { EC2Client } from '@aws-sdk/client-ec2';
import {
  GetPolicyCommand,
  type GetPolicyCommandOutput,
  GetPolicyVersionCommand,
  type GetPolicyVersionCommandOutput,
  GetRolePolicyCommand,
  type GetRolePolicyCommandOutput,
  type IAMClient,
  ListRolePoliciesCommand,
  type ListRolePoliciesCommandOutput,
} from '@aws-sdk/client-iam';
import type { KMSClient } from '@aws-sdk/client-kms';
import type { SSMClient } from '@aws-sdk/client-ssm';
import type { AwsFactsClients } from '../aws/aws-facts-adapter.js';
import { EBS_ENCRYPTION_DEFAULTS } from '../aws/ebs-encryption-defaults.js';
import {
  EC2_LIST_FACTS,
  EC2_LIST_KEYS,
  type Ec2ListKey,
  REGION_FACTS,
  REGION_KEYS,
  type RegionKey,
} from '../aws/fact-descriptors.js';
import {
  byKey,
  keyedRecordings,
  plain,
  type RecordedKeyed,
} from '../aws/keyed-fact-descriptors.js';

export { REDACTED_PARAMETER_VALUE } from '../aws/keyed-fact-descriptors.js';

type Json = Record<string, unknown>;

/** A managed policy's default version as `iam.policies` holds it. */
interface RecordedPolicy {
  Arn: string;
  PolicyName: string;
  DefaultVersionId?: string;
  Document: string;
}

export interface RecordedAws {
  /** Each EC2 list fact's items, by id, under its world-file key. */
  readonly ec2: Record<Ec2ListKey, Json[]>;
  /**
   * Each region-wide fact's records of the scanned region (zone offerings, instance types), under
   * its world-file key; a fact the scan never asked for is absent.
   */
  readonly region: Partial<Record<RegionKey, Json[]>>;
  /**
   * Each keyed fact's recorded value, by world-file section and key (its descriptor's); roles
   * whose every policy document was read carry `RolePolicyList`, and `iam.policies` holds their
   * managed documents.
   */
  readonly keyed: RecordedKeyed & { readonly iam: { readonly policies?: RecordedPolicy[] } };
  /** The region's EBS encryption settings, when the scan read both. */
  readonly ebsEncryptionDefaults?: ReturnType<
    ReturnType<typeof EBS_ENCRYPTION_DEFAULTS.recording>['recorded']
  >;
}

/** IAM returns documents URL-encoded; the world keeps them as JSON text. */
function decoded(document: string): string {
  try {
    return decodeURIComponent(document);
  } catch {
    return document;
  }
}

/** The policy documents read: inline ones per role (in ListRolePolicies order), managed ones. */
function policyDocumentRecording() {
  const inlineNames = new Map<string, string[]>();
  const inline = new Map<string, Map<string, string>>();
  const managed = new Map<string, { name?: string; defaultVersion?: string }>();
  const versions = new Map<string, string>();
  return {
    record(command: unknown, output: unknown): void {
      if (command instanceof ListRolePoliciesCommand) {
        const role = command.input.RoleName ?? '';
        const names = (output as ListRolePoliciesCommandOutput).PolicyNames ?? [];
        inlineNames.set(role, [
          ...(command.input.Marker ? (inlineNames.get(role) ?? []) : []),
          ...names,
        ]);
      } else if (command instanceof GetRolePolicyCommand) {
        const { PolicyName, PolicyDocument } = output as GetRolePolicyCommandOutput;
        const role = command.input.RoleName ?? '';
        if (PolicyName === undefined || PolicyDocument === undefined) return;
        const documents = inline.get(role) ?? new Map<string, string>();
        documents.set(PolicyName, decoded(PolicyDocument));
        inline.set(role, documents);
      } else if (command instanceof GetPolicyCommand) {
        const policy = (output as GetPolicyCommandOutput).Policy;
        managed.set(command.input.PolicyArn ?? '', {
          ...(policy?.PolicyName === undefined ? {} : { name: policy.PolicyName }),
          ...(policy?.DefaultVersionId === undefined
            ? {}
            : { defaultVersion: policy.DefaultVersionId }),
        });
      } else if (command instanceof GetPolicyVersionCommand) {
        const version = (output as GetPolicyVersionCommandOutput).PolicyVersion;
        if (version?.Document === undefined) return;
        versions.set(
          `${command.input.PolicyArn} ${command.input.VersionId}`,
          decoded(version.Document)
        );
      }
    },
    /** Only a role whose documents were all read carries them: a replay never evaluates part. */
    apply(roles: readonly Json[]): { roles: Json[]; policies: RecordedPolicy[] } {
      const policies = new Map<string, RecordedPolicy>();
      const managedDocument = (arn: string): RecordedPolicy | undefined => {
        const policy = managed.get(arn);
        const document =
          policy?.defaultVersion === undefined
            ? undefined
            : versions.get(`${arn} ${policy.defaultVersion}`);
        if (policy === undefined || document === undefined) return undefined;
        return {
          Arn: arn,
          PolicyName: policy.name ?? arn.split('/').at(-1) ?? arn,
          ...(policy.defaultVersion === undefined
            ? {}
            : { DefaultVersionId: policy.defaultVersion }),
          Document: document,
        };
      };
      const withDocuments = roles.map((role) => {
        const name = String(role.RoleName);
        const names = inlineNames.get(name);
        const attached = ((role.AttachedPolicies ?? []) as { PolicyArn?: string }[]).flatMap(
          (policy) => (policy.PolicyArn === undefined ? [] : [policy.PolicyArn])
        );
        const boundary = (
          role.PermissionsBoundary as { PermissionsBoundaryArn?: string } | undefined
        )?.PermissionsBoundaryArn;
        const arns = boundary === undefined ? attached : [...attached, boundary];
        const documents = inline.get(name);
        const list = (names ?? []).map((policy) => ({
          PolicyName: policy,
          PolicyDocument: documents?.get(policy),
        }));
        const found = arns.map(managedDocument);
        const complete =
          names !== undefined &&
          list.every((policy) => policy.PolicyDocument !== undefined) &&
          found.every((policy) => policy !== undefined);
        if (!complete) return role;
        for (const policy of found) if (policy) policies.set(policy.Arn, policy);
        return { ...role, RolePolicyList: list };
      });
      return {
        roles: withDocuments,
        policies: [...policies.values()].sort((a, b) => a.Arn.localeCompare(b.Arn)),
      };
    },
  };
}

export interface AwsRecorder {
  /** Senders for `createLiveAwsFacts`: they pass every call through and keep the responses. */
  readonly clients: AwsFactsClients;
  recorded(): RecordedAws;
}

export function createAwsRecorder(inner: AwsFactsClients): AwsRecorder {
  const lists = Object.fromEntries(
    EC2_LIST_KEYS.map((key) => [key, new Map<string, Json>()])
  ) as Record<Ec2ListKey, Map<string, Json>>;
  const regional = new Map<RegionKey, Map<string, Json>>();
  const keyed = keyedRecordings();
  const documents = policyDocumentRecording();
  const ebsDefaults = EBS_ENCRYPTION_DEFAULTS.recording();

  function keep(target: Map<string, Json>, key: string | undefined, item: object): void {
    if (key !== undefined) target.set(key, plain(item));
  }

  function recordEc2(command: unknown, output: unknown): void {
    if (EBS_ENCRYPTION_DEFAULTS.isCommand(command)) {
      ebsDefaults.record(command, output);
      return;
    }
    for (const key of EC2_LIST_KEYS) {
      const fact = EC2_LIST_FACTS[key];
      if (!fact.isCommand(command)) continue;
      for (const item of fact.page(output).items) keep(lists[key], fact.recordId(item), item);
      return;
    }
    for (const key of REGION_KEYS) {
      const fact = REGION_FACTS[key];
      if (!fact.isCommand(command)) continue;
      const records = regional.get(key) ?? new Map<string, Json>();
      regional.set(key, records);
      for (const record of fact.page(output).items) keep(records, fact.recordId(record), record);
      return;
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
      ssm: wrap<SSMClient>(inner.ssm, (command, output) => keyed.record('ssm', command, output)),
      iam: wrap<IAMClient>(inner.iam, (command, output) => {
        keyed.record('iam', command, output);
        documents.record(command, output);
      }),
      ...(inner.kms === undefined
        ? {}
        : {
            kms: wrap<KMSClient>(inner.kms, (command, output) =>
              keyed.record('kms', command, output)
            ),
          }),
    },
    recorded(): RecordedAws {
      const recordedKeyed = keyed.recorded();
      const { roles, policies } = documents.apply(recordedKeyed.iam.roles as Json[]);
      const ebsEncryptionDefaults = ebsDefaults.recorded();
      return {
        ...(ebsEncryptionDefaults === undefined ? {} : { ebsEncryptionDefaults }),
        ec2: Object.fromEntries(EC2_LIST_KEYS.map((key) => [key, byKey(lists[key])])) as Record<
          Ec2ListKey,
          Json[]
        >,
        region: Object.fromEntries(
          [...regional.entries()].map(([key, records]) => [key, byKey(records)])
        ),
        keyed: {
          ...recordedKeyed,
          iam: {
            ...recordedKeyed.iam,
            roles: roles as RecordedKeyed['iam']['roles'],
            ...(policies.length === 0 ? {} : { policies }),
          },
        },
      };
    },
  };
}
