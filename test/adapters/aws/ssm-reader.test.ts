import {
  GetParameterCommand,
  GetParametersCommand,
  type GetParametersCommandInput,
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

describe('ssm reader: several parameters', () => {
  const names = Array.from({ length: 14 }, (_, index) => `/aws/service/test/${index}/image_id`);
  const answer = (input: GetParametersCommandInput) => ({
    // Odd-numbered names do not exist.
    Parameters: (input.Names ?? [])
      .filter((name) => Number(name.split('/')[4]) % 2 === 0)
      .map((name) => ({ Name: name, Type: 'String', Value: `ami-${name.split('/')[4]}` })),
    InvalidParameters: (input.Names ?? []).filter((name) => Number(name.split('/')[4]) % 2 === 1),
  });

  it('reads 14 names in 2 GetParameters requests, undecrypted, missing ones undefined', async () => {
    ssm.on(GetParametersCommand).callsFake(answer);

    const values = await createSsmReader(new SSMClient({})).getParameters(names);

    const inputs = ssm.commandCalls(GetParametersCommand).map((call) => call.args[0].input);
    expect(inputs.map((input) => input.Names?.length)).toEqual([10, 4]);
    expect(inputs.every((input) => input.WithDecryption === false)).toBe(true);
    expect(ssm.commandCalls(GetParameterCommand)).toHaveLength(0);
    expect(values.get('/aws/service/test/0/image_id')).toBe('ami-0');
    expect(values.get('/aws/service/test/12/image_id')).toBe('ami-12');
    expect(values.has('/aws/service/test/13/image_id')).toBe(true);
    expect(values.get('/aws/service/test/13/image_id')).toBeUndefined();
    expect(values.size).toBe(14);
  });

  it('reads an ARN or a labelled name with GetParameter (answered under another name)', async () => {
    ssm.on(GetParametersCommand).callsFake(answer);
    ssm.on(GetParameterCommand).resolves({ Parameter: { Value: 'ami-0shared' } });
    const arn = 'arn:aws:ssm:us-east-1:111122223333:parameter/shared/ami';

    const values = await createSsmReader(new SSMClient({})).getParameters([
      names[0] ?? '',
      arn,
      '/team/ami:3',
    ]);

    expect(ssm.commandCalls(GetParameterCommand).map((call) => call.args[0].input.Name)).toEqual([
      arn,
      '/team/ami:3',
    ]);
    expect(ssm.commandCalls(GetParametersCommand)[0]?.args[0].input.Names).toEqual([names[0]]);
    expect(values.get(arn)).toBe('ami-0shared');
    expect(values.get(names[0] ?? '')).toBe('ami-0');
  });

  it('asks name by name when the batch is denied, so only the denied name fails', async () => {
    const denied = (message: string) =>
      new SSMServiceException({
        name: 'AccessDeniedException',
        $fault: 'client',
        $metadata: { httpStatusCode: 400 },
        message,
      });
    ssm.on(GetParametersCommand).rejects(denied('not authorized: ssm:GetParameters'));
    ssm.on(GetParameterCommand).resolves({ Parameter: { Value: 'ami-0ok' } });
    ssm.on(GetParameterCommand, { Name: '/secret' }).rejects(denied('not authorized'));

    const read = createSsmReader(new SSMClient({})).getParameters(['/ok', '/secret']);

    await expect(read).rejects.toMatchObject({ reason: 'access-denied' });
    expect(ssm.commandCalls(GetParameterCommand).map((call) => call.args[0].input.Name)).toEqual([
      '/ok',
      '/secret',
    ]);
  });

  it('turns another batch failure into a source error naming GetParameters', async () => {
    ssm.on(GetParametersCommand).rejects(
      new SSMServiceException({
        name: 'ThrottlingException',
        $fault: 'client',
        $metadata: { httpStatusCode: 400 },
        message: 'Rate exceeded',
      })
    );

    const read = createSsmReader(new SSMClient({})).getParameters(['/a', '/b']);

    await expect(read).rejects.toBeInstanceOf(SourceUnavailableError);
    await expect(read).rejects.toMatchObject({ reason: 'throttled', source: 'ssm:GetParameters' });
    expect(ssm.commandCalls(GetParameterCommand)).toHaveLength(0);
  });
});
