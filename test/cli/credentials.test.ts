import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EC2Client } from '@aws-sdk/client-ec2';
import { EKSClient } from '@aws-sdk/client-eks';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { type AwsClientStub, mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EXIT_USAGE } from '../../lambda/cli/main.js';
import { type CliRun, runCliCaptured, tempTree } from './support/run-cli.js';

const MANIFEST = [
  'apiVersion: karpenter.k8s.aws/v1',
  'kind: EC2NodeClass',
  'metadata: { name: edge }',
  'spec:',
  '  amiSelectorTerms: [{ alias: al2023@latest }]',
  '  role: KarpenterNodeRole-demo',
  '  subnetSelectorTerms: [{ tags: { network: edge } }]',
  '  securityGroupSelectorTerms: [{ tags: { karpenter.sh/discovery: demo } }]',
  '',
].join('\n');

let tree: ReturnType<typeof tempTree>;
let manifest: string;

beforeAll(() => {
  tree = tempTree({ 'edge.yaml': MANIFEST });
  manifest = join(tree.dir, 'edge.yaml');
});

afterAll(() => {
  tree.cleanup();
});

/** The live entry points, each with `--region REGION` appended. */
const LIVE_COMMANDS: Readonly<Record<string, () => string[]>> = {
  'scan --aws': () => ['scan', '--aws', manifest],
  'scan --cluster': () => ['scan', '--cluster', 'prod'],
  snapshot: () => ['snapshot', '--cluster', 'prod'],
};

const live = (command: string, region: string) =>
  runCliCaptured([...(LIVE_COMMANDS[command]?.() ?? []), '--region', region, '--format', 'json']);

const snapshotLive = (region: string) =>
  runCliCaptured([...(LIVE_COMMANDS.snapshot?.() ?? []), '--region', region]);

const run = (command: string, region: string) =>
  command === 'snapshot' ? snapshotLive(region) : live(command, region);

/** A usage error: exit 2, nothing reported, exactly one line on stderr. */
function expectUsageError(result: CliRun): void {
  expect(result.code).toBe(EXIT_USAGE);
  expect(result.stdout).toBe('');
  expect(result.stderr).toMatch(/^nodeclass-scan: [^\n]+\n$/);
  expect(result.stderr).not.toContain('internal error');
}

describe('live scans without credentials (the SDK default chain finds none)', () => {
  const saved = { ...process.env };
  let home: string;

  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), 'nodeclass-scan-home-'));
    for (const name of Object.keys(process.env)) {
      if (name.startsWith('AWS_')) delete process.env[name];
    }
    process.env.HOME = home;
    process.env.AWS_CONFIG_FILE = join(home, 'no-such-config');
    process.env.AWS_SHARED_CREDENTIALS_FILE = join(home, 'no-such-credentials');
    process.env.AWS_EC2_METADATA_DISABLED = 'true';
  });

  afterEach(() => {
    for (const name of Object.keys(process.env)) delete process.env[name];
    Object.assign(process.env, saved);
    rmSync(home, { recursive: true, force: true });
  });

  it.each(Object.keys(LIVE_COMMANDS))('%s ends with one line and exit 2', async (command) => {
    // Act
    const result = await run(command, 'eu-west-1');

    // Assess
    expectUsageError(result);
    expect(result.stderr).toContain('no usable AWS credentials');
  });

  it('names an unknown --profile', async () => {
    // Act
    const result = await runCliCaptured([
      'scan',
      '--profile',
      'no-such-profile',
      '--region',
      'eu-west-1',
      manifest,
    ]);

    // Assess
    expectUsageError(result);
    expect(result.stderr).toContain('no-such-profile');
  });

  it('needs a region when neither --region nor the environment gives one', async () => {
    const result = await runCliCaptured(['scan', '--aws', manifest]);
    expectUsageError(result);
    expect(result.stderr).toContain('no AWS region');
  });
});

describe('live scans whose credentials or region AWS refuses', () => {
  let sts: AwsClientStub<STSClient>;
  let ec2: AwsClientStub<EC2Client>;
  let eks: AwsClientStub<EKSClient>;

  beforeEach(() => {
    sts = mockClient(STSClient);
    // Nothing may be read once the preflight failed: these answer nothing, and count calls.
    ec2 = mockClient(EC2Client);
    eks = mockClient(EKSClient);
  });

  afterEach(() => {
    sts.restore();
    ec2.restore();
    eks.restore();
  });

  const sdkError = (name: string, message: string, status?: number) =>
    Object.assign(new Error(message), {
      name,
      ...(status === undefined ? {} : { $metadata: { httpStatusCode: status } }),
    });

  it.each(Object.keys(LIVE_COMMANDS))(
    '%s: expired credentials end with exit 2',
    async (command) => {
      // Prepare
      sts
        .on(GetCallerIdentityCommand)
        .rejects(
          sdkError('ExpiredToken', 'The security token included in the request is expired', 403)
        );

      // Act
      const result = await run(command, 'eu-west-1');

      // Assess
      expectUsageError(result);
      expect(result.stderr).toContain('credentials have expired');
      expect(result.stderr).toContain('ExpiredToken');
      expect(ec2.calls()).toHaveLength(0);
      expect(eks.calls()).toHaveLength(0);
    }
  );

  it('rejected keys end with exit 2', async () => {
    sts
      .on(GetCallerIdentityCommand)
      .rejects(
        sdkError(
          'InvalidClientTokenId',
          'The security token included in the request is invalid.',
          403
        )
      );
    const result = await live('scan --cluster', 'eu-west-1');
    expectUsageError(result);
    expect(result.stderr).toContain('does not accept these credentials');
  });

  it('a region the account has not enabled ends with exit 2', async () => {
    sts
      .on(GetCallerIdentityCommand)
      .rejects(sdkError('RegionDisabledException', 'STS is not activated in this region', 403));
    const result = await live('scan --aws', 'ap-east-2');
    expectUsageError(result);
    expect(result.stderr).toContain('region ap-east-2 is not enabled');
  });

  it.each(Object.keys(LIVE_COMMANDS))(
    '%s: an unknown region (no STS endpoint resolves) ends with exit 2',
    async (command) => {
      // Prepare: what the SDK throws when the regional endpoint's name does not resolve.
      sts.on(GetCallerIdentityCommand).rejects(
        Object.assign(new Error('getaddrinfo ENOTFOUND sts.xx-north-9.amazonaws.com'), {
          code: 'ENOTFOUND',
          $metadata: { attempts: 1 },
        })
      );

      // Act
      const result = await run(command, 'xx-north-9');

      // Assess
      expectUsageError(result);
      expect(result.stderr).toContain('cannot reach AWS STS in region xx-north-9');
      expect(result.stderr).toContain('ENOTFOUND');
      expect(eks.calls()).toHaveLength(0);
    }
  );

  it.each(Object.keys(LIVE_COMMANDS))(
    '%s: a malformed region ends with exit 2 before any AWS call',
    async (command) => {
      const result = await run(command, 'moon');
      expectUsageError(result);
      expect(result.stderr).toContain('"moon" is not an AWS region name');
      expect(sts.calls()).toHaveLength(0);
    }
  );

  it('asks STS in the scan region, with the scan credentials', async () => {
    // Prepare
    sts.on(GetCallerIdentityCommand).rejects(sdkError('ExpiredToken', 'expired', 403));

    // Act
    await live('scan --aws', 'eu-central-1');

    // Assess
    const [call] = sts.commandCalls(GetCallerIdentityCommand);
    expect(await call?.thisValue.config.region()).toBe('eu-central-1');
  });
});
