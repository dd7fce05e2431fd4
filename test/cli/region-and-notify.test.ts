// A mistyped region is a usage error wherever it is given (a silent one would drop the checks of
// its partition), and `notify-test` sends one labelled message through a deployment's topic.
import {
  ListTagsForResourceCommand,
  ListTopicsCommand,
  PublishCommand,
  SNSClient,
} from '@aws-sdk/client-sns';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { scan } from '../../lambda/api.js';
import { EXIT_OK, EXIT_USAGE } from '../../lambda/cli/main.js';
import { ConfigError } from '../../lambda/shared/errors.js';
import { FINDINGS_TOPIC_TAG } from '../../lambda/shared/telemetry.js';
import { runCliCaptured } from './support/run-cli.js';

const MANIFESTS = 'examples/nodeclasses';

describe('--region', () => {
  it.each([
    ['us-iso-east1', '(did you mean "us-iso-east-1"?)'],
    ['eu-west', '(did you mean "eu-west-1"?)'],
    ['mars-1', ''],
  ])('refuses %s as a usage error (exit 2)', async (region, hint) => {
    const run = await runCliCaptured(['scan', MANIFESTS, '--region', region]);
    expect(run.code).toBe(EXIT_USAGE);
    expect(run.stderr).toContain(`--region: "${region}" is not an AWS region name`);
    expect(run.stderr).toContain(hint);
    expect(run.stdout).toBe('');
  });

  it('refuses it from NODECLASS_SCAN_REGION too', async () => {
    const run = await runCliCaptured(['scan', MANIFESTS], {
      env: { NODECLASS_SCAN_REGION: 'us-iso-east1' },
    });
    expect(run.code).toBe(EXIT_USAGE);
    expect(run.stderr).toContain('did you mean "us-iso-east-1"');
  });

  it('scans with a region of any partition, the European Sovereign Cloud included', async () => {
    for (const region of ['eusc-de-east-1', 'us-iso-east-1']) {
      const run = await runCliCaptured([
        'scan',
        MANIFESTS,
        '--region',
        region,
        '--only',
        'imds-ipv6-supported',
        '--fail-on',
        'none',
      ]);
      expect(run.code, `${region}: ${run.stderr}`).toBe(EXIT_OK);
    }
  });

  it('is refused by the API as a ConfigError naming the region', async () => {
    await expect(scan({ paths: [MANIFESTS], region: 'us-iso-east1' })).rejects.toThrow(ConfigError);
    await expect(scan({ paths: [MANIFESTS], region: 'us-iso-east1' })).rejects.toThrow(
      /region: "us-iso-east1" is not an AWS region name .*did you mean "us-iso-east-1"/
    );
  });
});

describe('notify-test', () => {
  const sns = mockClient(SNSClient);
  const topic = 'arn:aws:sns:eu-west-1:111122223333:NodeClassScanner-ScannerFindingsA1B2C3D4-XyZ';
  const otherStacksTopic =
    'arn:aws:sns:eu-west-1:111122223333:NodeClassScanner-dev-ScannerFindingsE5F6-AbC';

  beforeEach(() => {
    sns.reset();
    sns
      .on(ListTopicsCommand)
      .resolvesOnce({
        Topics: [{ TopicArn: 'arn:aws:sns:eu-west-1:111122223333:unrelated' }],
        NextToken: 'p2',
      })
      .resolvesOnce({ Topics: [{ TopicArn: topic }, { TopicArn: otherStacksTopic }] });
    sns
      .on(ListTagsForResourceCommand, { ResourceArn: topic })
      .resolves({ Tags: [{ Key: FINDINGS_TOPIC_TAG, Value: 'NodeClassScanner' }] });
    sns
      .on(ListTagsForResourceCommand, { ResourceArn: otherStacksTopic })
      .resolves({ Tags: [{ Key: FINDINGS_TOPIC_TAG, Value: 'NodeClassScanner-dev' }] });
    sns.on(PublishCommand).resolves({ MessageId: 'm-1' });
  });
  afterEach(() => sns.reset());

  it("finds the stack's topic by its tag and publishes one labelled test message", async () => {
    const run = await runCliCaptured([
      'notify-test',
      '--stack',
      'NodeClassScanner',
      '--region',
      'eu-west-1',
    ]);
    expect(run.code, run.stderr).toBe(EXIT_OK);
    expect(run.stdout).toContain(`Sent a test message (m-1) to ${topic}`);
    const published = sns.commandCalls(PublishCommand);
    expect(published).toHaveLength(1);
    const input = published[0]?.args[0].input;
    expect(input?.TopicArn).toBe(topic);
    expect(input?.Subject).toMatch(/^\[TEST\] nodeclass-scanner test notification/);
    // No severity attribute: every email filter policy lets it through, as it does alarms.
    expect(input?.MessageAttributes?.severity).toBeUndefined();
    const bodies = JSON.parse(input?.Message ?? '{}');
    expect(bodies.email).toContain('It is not a finding');
    expect(JSON.parse(bodies.https)).toMatchObject({
      version: '1.0',
      source: 'custom',
      content: { title: expect.stringContaining('test notification') },
    });
  });

  it('publishes to --topic-arn without a lookup', async () => {
    const run = await runCliCaptured(['notify-test', '--stack', 'X', '--topic-arn', topic]);
    expect(run.code, run.stderr).toBe(EXIT_OK);
    expect(sns.commandCalls(ListTopicsCommand)).toHaveLength(0);
    expect(sns.commandCalls(PublishCommand)[0]?.args[0].input.TopicArn).toBe(topic);
  });

  it('is a usage error, naming the stack and the remedy, when no topic matches', async () => {
    const run = await runCliCaptured(['notify-test', '--stack', 'Nope', '--region', 'eu-west-1']);
    expect(run.code).toBe(EXIT_USAGE);
    expect(run.stderr).toContain('no findings topic of stack "Nope"');
    expect(run.stderr).toContain('--topic-arn');
    expect(sns.commandCalls(PublishCommand)).toHaveLength(0);
  });

  it('refuses a region that is none before calling AWS, and needs --stack', async () => {
    const bad = await runCliCaptured(['notify-test', '--stack', 'S', '--region', 'eu-west']);
    expect(bad.code).toBe(EXIT_USAGE);
    expect(bad.stderr).toContain('did you mean "eu-west-1"');
    expect(sns.calls()).toHaveLength(0);
    expect((await runCliCaptured(['notify-test'])).code).toBe(EXIT_USAGE);
  });

  it('reports an AWS error (permissions) on one line, exit 2', async () => {
    sns.on(PublishCommand).rejects(
      Object.assign(new Error('not authorized\nto publish'), {
        name: 'AuthorizationErrorException',
      })
    );
    const run = await runCliCaptured(['notify-test', '--stack', 'S', '--topic-arn', topic]);
    expect(run.code).toBe(EXIT_USAGE);
    expect(run.stderr).toBe(
      'nodeclass-scan: notify-test: AuthorizationErrorException: not authorized\n'
    );
  });
});
