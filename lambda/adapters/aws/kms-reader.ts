// KMS's keyed facts (keys: DescribeKey, then GetKeyPolicy and ListGrants of a customer managed key),
// built from their descriptors (keyed-fact-descriptors.ts). One key named two ways (an alias and
// its ARN) is read by ARN once: a policy or grant read is shared for the reader's lifetime.
import type { KMSClient } from '@aws-sdk/client-kms';
import { type AnyKeyedFact, keyedMethods, type Send } from './keyed-fact-descriptors.js';

export type KmsSender = Pick<KMSClient, 'send'>;

const isKms = (fact: AnyKeyedFact) => fact.service === 'kms';

export function createKmsReader(kms: KmsSender) {
  const sent = new Map<string, Promise<unknown>>();
  const send: Send = (command) => {
    const key = `${command.constructor.name} ${JSON.stringify((command as { input?: unknown }).input)}`;
    const known = sent.get(key);
    if (known !== undefined) return known;
    const reply = (kms.send as Send)(command);
    sent.set(key, reply);
    return reply;
  };
  const { describeKmsKey } = keyedMethods((fact) => (name) => fact.read(send, name), {
    include: isKms,
  });
  return { describeKmsKey };
}
