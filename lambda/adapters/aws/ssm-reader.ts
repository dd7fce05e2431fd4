import {
  GetParameterCommand,
  GetParametersCommand,
  type GetParametersCommandOutput,
  type SSMClient,
} from '@aws-sdk/client-ssm';
import { isAccessDenied, isNotFound, toSourceUnavailable } from './aws-errors.js';
import { AWS_FACT_ACTIONS } from './fact-descriptors.js';

export const ssmReaderActions = [
  ...new Set([...AWS_FACT_ACTIONS.getParameter, ...AWS_FACT_ACTIONS.getParameters]),
];

/** GetParameters accepts at most 10 names per request. */
const GET_PARAMETERS_BATCH_SIZE = 10;

export type SsmSender = Pick<SSMClient, 'send'>;

/**
 * A plain parameter name: GetParameters answers it under the same `Name`. ARNs and `name:label` /
 * `name:version` selectors come back under another name, so they are read one by one.
 */
function batchable(name: string): boolean {
  return !name.includes(':');
}

export function createSsmReader(ssm: SsmSender) {
  /** The parameter's value; undefined when it does not exist (Karpenter skips those terms). */
  async function getParameter(name: string): Promise<string | undefined> {
    try {
      // Never decrypted: a SecureString's plaintext is no image id, and must not be read.
      const response = await ssm.send(
        new GetParameterCommand({ Name: name, WithDecryption: false })
      );
      return response.Parameter?.Value;
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw toSourceUnavailable('ssm:GetParameter', error);
    }
  }

  async function getBatch(names: readonly string[]): Promise<Map<string, string | undefined>> {
    let response: GetParametersCommandOutput;
    try {
      response = await ssm.send(
        new GetParametersCommand({ Names: [...names], WithDecryption: false })
      );
    } catch (error) {
      // One denied name fails the whole request: ask one by one so each name gets its own answer.
      if (isAccessDenied(error)) return singly(names);
      throw toSourceUnavailable('ssm:GetParameters', error);
    }
    const values = new Map<string, string | undefined>();
    for (const parameter of response.Parameters ?? []) {
      if (parameter.Name !== undefined && names.includes(parameter.Name)) {
        values.set(parameter.Name, parameter.Value);
      }
    }
    // InvalidParameters are the names that do not exist (GetParameter's ParameterNotFound).
    for (const name of response.InvalidParameters ?? []) {
      if (names.includes(name) && !values.has(name)) values.set(name, undefined);
    }
    const unanswered = names.filter((name) => !values.has(name));
    for (const [name, value] of await singly(unanswered)) values.set(name, value);
    return values;
  }

  async function singly(names: readonly string[]): Promise<Map<string, string | undefined>> {
    const values = await Promise.all(
      names.map(async (name) => [name, await getParameter(name)] as const)
    );
    return new Map(values);
  }

  return {
    getParameter,

    /**
     * Values of several parameters (undefined for a missing one), in GetParameters requests of
     * at most 10 plain names; each name's answer is what `getParameter` would return.
     */
    async getParameters(names: readonly string[]): Promise<Map<string, string | undefined>> {
      const unique = [...new Set(names)];
      const plain = unique.filter(batchable);
      const batches: string[][] = [];
      for (let start = 0; start < plain.length; start += GET_PARAMETERS_BATCH_SIZE) {
        batches.push(plain.slice(start, start + GET_PARAMETERS_BATCH_SIZE));
      }
      const results = await Promise.all([
        ...batches.map((batch) => getBatch(batch)),
        singly(unique.filter((name) => !batchable(name))),
      ]);
      const values = new Map<string, string | undefined>();
      for (const result of results) for (const [name, value] of result) values.set(name, value);
      return values;
    },
  };
}
