// EC2 Describe* calls exactly as Karpenter issues them (https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/providers/).
// The filtered lists and the region-wide offerings come from their descriptors (fact-descriptors.ts).
import type { EC2Client } from '@aws-sdk/client-ec2';
import { toSourceUnavailable } from './aws-errors.js';
import { EBS_ENCRYPTION_DEFAULTS } from './ebs-encryption-defaults.js';
import {
  type AnyEc2ListFact,
  type AnyRegionFact,
  ec2ListMethods,
  regionMethods,
} from './fact-descriptors.js';
import { collectPages } from './paginate.js';

export type Ec2Sender = Pick<EC2Client, 'send'>;

async function guarded<T>(source: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw toSourceUnavailable(source, error);
  }
}

/** Every page of one descriptor's query, translated to core facts. */
function readList(ec2: Ec2Sender, fact: AnyEc2ListFact) {
  // The SDK's `send` is overloaded per command class; the descriptor pairs command and output.
  const send = (command: object) => (ec2.send as (command: object) => Promise<unknown>)(command);
  return (query: never): Promise<unknown[]> =>
    guarded(fact.action, async () => {
      const items = await collectPages(
        fact.action,
        (token) => send(fact.command(query, token)).then((output) => fact.page(output)),
        (page) => page.items,
        (page) => page.nextToken,
        { identityOf: (item) => fact.recordId(item) }
      );
      return items.map((item) => fact.fromSdk(item));
    });
}

/** Every page of a region-wide fact's query (one query serves every NodeClass), translated. */
function readRegion(ec2: Ec2Sender, fact: AnyRegionFact) {
  const send = (command: object) => (ec2.send as (command: object) => Promise<unknown>)(command);
  return (): Promise<unknown[]> =>
    guarded(fact.action, async () => {
      const records = await collectPages(
        fact.action,
        (token) => send(fact.command(fact.query, token)).then((output) => fact.page(output)),
        (page) => page.items,
        (page) => page.nextToken,
        { identityOf: (record) => fact.recordId(record) }
      );
      return records.flatMap((record) => {
        const item = fact.fromWorld(record);
        return item === undefined ? [] : [item];
      });
    });
}

export function createEc2Reader(ec2: Ec2Sender) {
  const send = (command: object) => (ec2.send as (command: object) => Promise<unknown>)(command);
  return {
    ...ec2ListMethods((fact) => readList(ec2, fact)),
    ...regionMethods((fact) => readRegion(ec2, fact)),
    getEbsEncryptionDefaults: () => EBS_ENCRYPTION_DEFAULTS.read(send),
  };
}
