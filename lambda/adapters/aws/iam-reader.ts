// IAM's keyed facts (instance profiles, roles), built from their descriptors
// (keyed-fact-descriptors.ts): GetInstanceProfile; GetRole + ListAttachedRolePolicies (all pages).
import type { IAMClient } from '@aws-sdk/client-iam';
import { type AnyKeyedFact, keyedMethods, type Send } from './keyed-fact-descriptors.js';

export type IamSender = Pick<IAMClient, 'send'>;

const isIam = (fact: AnyKeyedFact) => fact.service === 'iam';

export function createIamReader(iam: IamSender) {
  const send: Send = (command) => (iam.send as Send)(command);
  const { getInstanceProfile, getRole } = keyedMethods((fact) => (name) => fact.read(send, name), {
    include: isIam,
  });
  return { getInstanceProfile, getRole };
}
