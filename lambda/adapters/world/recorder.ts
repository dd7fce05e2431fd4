// Records the AWS responses a scan reads, in the SDK's own shapes, so `snapshot` can write a world
// file that replays the scan exactly. Wraps the senders the live adapter uses: what the scan asked
// for is what gets recorded, nothing more. Secrets are never recorded (the parameters' descriptor redacts them).
import type { DescribeInstanceTypeOfferingsCommandOutput, EC2Client } from '@aws-sdk/client-ec2';
import type { IAMClient } from '@aws-sdk/client-iam';
import type { SSMClient } from '@aws-sdk/client-ssm';
import type { AwsFactsClients } from '../aws/aws-facts-adapter.js';
import {
  EC2_LIST_FACTS,
  EC2_LIST_KEYS,
  type Ec2ListKey,
  INSTANCE_TYPE_OFFERINGS,
} from '../aws/fact-descriptors.js';
import {
  byKey,
  keyedRecordings,
  plain,
  type RecordedKeyed,
} from '../aws/keyed-fact-descriptors.js';

export { REDACTED_PARAMETER_VALUE } from '../aws/keyed-fact-descriptors.js';

type Json = Record<string, unknown>;

export interface RecordedAws {
  /** Each EC2 list fact's items, by id, under its world-file key. */
  readonly ec2: Record<Ec2ListKey, Json[]>;
  /** Zone offerings of the scanned region; undefined when the scan never asked for them. */
  readonly instanceTypeOfferings?: { instanceType: string; zone: string }[];
  /** Each keyed fact's recorded value, by world-file section and key (its descriptor's). */
  readonly keyed: RecordedKeyed;
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
  let offerings: Map<string, { instanceType: string; zone: string }> | undefined;
  const keyed = keyedRecordings();

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
      iam: wrap<IAMClient>(inner.iam, (command, output) => keyed.record('iam', command, output)),
    },
    recorded(): RecordedAws {
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
        keyed: keyed.recorded(),
      };
    },
  };
}
