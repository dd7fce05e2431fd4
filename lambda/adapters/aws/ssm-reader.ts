// SSM's keyed facts (parameters), built from their descriptors (keyed-fact-descriptors.ts): one
// GetParameter per name, or GetParameters 10 plain names a request with per-name fallback.
import type { SSMClient } from '@aws-sdk/client-ssm';
import {
  type AnyKeyedFact,
  keyedMethods,
  readBatched,
  type Send,
} from './keyed-fact-descriptors.js';

export type SsmSender = Pick<SSMClient, 'send'>;

const isSsm = (fact: AnyKeyedFact) => fact.service === 'ssm';

export function createSsmReader(ssm: SsmSender) {
  // The SDK's `send` is overloaded per command class; the descriptor pairs command and output.
  const send: Send = (command) => (ssm.send as Send)(command);
  const { getParameter, getParameters } = keyedMethods((fact) => (name) => fact.read(send, name), {
    include: isSsm,
    batch: (_fact, batch, one) => readBatched(send, batch, one),
  });
  return { getParameter, getParameters };
}
