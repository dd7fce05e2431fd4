import { GetParameterCommand, type SSMClient } from '@aws-sdk/client-ssm';
import { isNotFound, toSourceUnavailable } from './aws-errors.js';

export const ssmReaderActions = ['ssm:GetParameter'] as const;

export type SsmSender = Pick<SSMClient, 'send'>;

export function createSsmReader(ssm: SsmSender) {
  return {
    /** The parameter's value; undefined when it does not exist (Karpenter skips those terms). */
    async getParameter(name: string): Promise<string | undefined> {
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
    },
  };
}
