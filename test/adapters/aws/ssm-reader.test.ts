import {
  GetParameterCommand,
  ParameterNotFound,
  SSMClient,
  SSMServiceException,
} from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { createSsmReader } from '../../../lambda/adapters/aws/ssm-reader.js';
import { SourceUnavailableError } from '../../../lambda/shared/errors.js';

const ssm = mockClient(SSMClient);

afterEach(() => {
  ssm.reset();
});

describe('ssm reader', () => {
  it('asks for the value without decryption', async () => {
    ssm.on(GetParameterCommand).resolves({ Parameter: { Value: 'ami-0123456789abcdef0' } });

    const value = await createSsmReader(new SSMClient({})).getParameter('/team/ami');

    expect(value).toBe('ami-0123456789abcdef0');
    expect(ssm.commandCalls(GetParameterCommand).map((call) => call.args[0].input)).toEqual([
      { Name: '/team/ami', WithDecryption: false },
    ]);
  });

  it('reads a missing parameter as undefined (Karpenter skips the term)', async () => {
    ssm.on(GetParameterCommand).rejects(new ParameterNotFound({ message: 'x', $metadata: {} }));

    await expect(createSsmReader(new SSMClient({})).getParameter('/team/none')).resolves.toBe(
      undefined
    );
  });

  it('turns a denial into an access-denied source error naming the action', async () => {
    ssm.on(GetParameterCommand).rejects(
      new SSMServiceException({
        name: 'AccessDeniedException',
        $fault: 'client',
        $metadata: { httpStatusCode: 400 },
        message: 'not authorized to perform: ssm:GetParameter on resource: /prod/db/password',
      })
    );

    const read = createSsmReader(new SSMClient({})).getParameter('/prod/db/password');

    await expect(read).rejects.toBeInstanceOf(SourceUnavailableError);
    await expect(read).rejects.toMatchObject({ reason: 'access-denied' });
  });
});
