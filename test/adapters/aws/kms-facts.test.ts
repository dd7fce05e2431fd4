// The EBS encryption facts beyond the keyed-fact table's own tests: the account's EBS settings
// (live read, snapshot, replay, bench), a key policy the scanner may not read (recorded as absent,
// replayed as refused), AWS managed keys (no policy read), and one key named two ways (read once).
import {
  EC2Client,
  GetEbsDefaultKmsKeyIdCommand,
  GetEbsEncryptionByDefaultCommand,
} from '@aws-sdk/client-ec2';
import { IAMClient } from '@aws-sdk/client-iam';
import {
  DescribeKeyCommand,
  GetKeyPolicyCommand,
  KMSClient,
  ListGrantsCommand,
} from '@aws-sdk/client-kms';
import { SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { createLiveAwsFacts } from '../../../lambda/adapters/aws/aws-facts-adapter.js';
import { createAwsRecorder } from '../../../lambda/adapters/world/recorder.js';
import { memoizeAwsFactsPort } from '../../../lambda/app/memoize-port.js';
import { RECORDED_ACCOUNT, recordedWorld } from '../../support/recorded-world.js';

const ec2 = mockClient(EC2Client);
const kms = mockClient(KMSClient);

afterEach(() => {
  ec2.reset();
  kms.reset();
});

const KEY_ARN = `arn:aws:kms:us-east-1:${RECORDED_ACCOUNT}:key/k-1`;
const clients = () => ({
  ec2: new EC2Client({}),
  ssm: new SSMClient({}),
  iam: new IAMClient({}),
  kms: new KMSClient({}),
});
const denied = () =>
  Object.assign(new Error('not authorized'), {
    name: 'AccessDeniedException',
    $metadata: { httpStatusCode: 400 },
  });

function customerKey(): void {
  kms.on(DescribeKeyCommand).resolves({
    KeyMetadata: { KeyId: 'k-1', Arn: KEY_ARN, KeyState: 'Enabled', KeyManager: 'CUSTOMER' },
  });
}

describe('the EBS encryption settings', () => {
  it('are read once a scan, recorded, and replayed alike by the world file and the bench', async () => {
    // Arrange
    ec2.on(GetEbsEncryptionByDefaultCommand).resolves({ EbsEncryptionByDefault: true });
    ec2.on(GetEbsDefaultKmsKeyIdCommand).resolves({ KmsKeyId: KEY_ARN });
    const recorder = createAwsRecorder(clients());
    const port = memoizeAwsFactsPort(createLiveAwsFacts(recorder.clients));

    // Act
    const [read] = await Promise.all([
      port.getEbsEncryptionDefaults?.(),
      port.getEbsEncryptionDefaults?.(),
    ]);
    const { world, replay, bench } = recordedWorld(recorder);

    // Assess
    expect(read).toEqual({ encryptedByDefault: true, defaultKmsKeyId: KEY_ARN });
    expect(ec2.commandCalls(GetEbsEncryptionByDefaultCommand)).toHaveLength(1);
    expect(ec2.commandCalls(GetEbsDefaultKmsKeyIdCommand)).toHaveLength(1);
    expect(world.kms.ebsEncryptionDefaults).toEqual({
      'us-east-1': { EbsEncryptionByDefault: true, KmsKeyId: KEY_ARN },
    });
    expect(await replay.getEbsEncryptionDefaults?.()).toEqual(read);
    expect(await bench.getEbsEncryptionDefaults?.()).toEqual(read);
  });

  it('name the action the scanner lacks when EC2 refuses them', async () => {
    // Arrange
    ec2.on(GetEbsEncryptionByDefaultCommand).resolves({ EbsEncryptionByDefault: false });
    ec2
      .on(GetEbsDefaultKmsKeyIdCommand)
      .rejects(Object.assign(new Error('denied'), { name: 'UnauthorizedOperation' }));

    // Act
    const read = createLiveAwsFacts(clients()).getEbsEncryptionDefaults?.();

    // Assess
    await expect(read).rejects.toMatchObject({
      source: 'ec2:GetEbsDefaultKmsKeyId',
      reason: 'access-denied',
    });
  });
});

describe('KMS keys', () => {
  it('record a refused key policy as absent, which replays as refused', async () => {
    // Arrange
    customerKey();
    kms.on(GetKeyPolicyCommand).rejects(denied());
    kms.on(ListGrantsCommand).resolves({ Grants: [], Truncated: false });
    const recorder = createAwsRecorder(clients());

    // Act
    const read = await createLiveAwsFacts(recorder.clients).describeKmsKey?.('alias/nodes');
    const { world, replay, bench } = recordedWorld(recorder);

    // Assess
    expect(read?.policy).toMatchObject({ status: 'unavailable', reason: 'access-denied' });
    expect(read?.grants).toEqual({ status: 'ok', value: [] });
    expect(world.kms.keys[0]?.Policy).toBeUndefined();
    expect(world.kms.keys[0]?.Aliases).toEqual(['alias/nodes']);
    for (const port of [replay, bench]) {
      const replayed = await port.describeKmsKey?.('alias/nodes');
      expect(replayed?.policy).toMatchObject({ status: 'unavailable', reason: 'access-denied' });
      expect(replayed?.key).toEqual(read?.key);
    }
  });

  it('read neither policy nor grants of an AWS managed key', async () => {
    // Arrange
    kms.on(DescribeKeyCommand).resolves({
      KeyMetadata: { KeyId: 'k-2', Arn: KEY_ARN, KeyState: 'Enabled', KeyManager: 'AWS' },
    });

    // Act
    const read = await createLiveAwsFacts(clients()).describeKmsKey?.('alias/aws/s3');

    // Assess
    expect(read).toEqual({ key: { keyId: 'k-2', arn: KEY_ARN, state: 'Enabled', manager: 'AWS' } });
    expect(kms.commandCalls(GetKeyPolicyCommand)).toEqual([]);
    expect(kms.commandCalls(ListGrantsCommand)).toEqual([]);
  });

  it('named by alias and by ARN, read their policy and grants once', async () => {
    // Arrange
    customerKey();
    kms.on(GetKeyPolicyCommand).resolves({ Policy: '{"Statement":[]}' });
    kms.on(ListGrantsCommand).resolves({ Grants: [], Truncated: false });
    const port = memoizeAwsFactsPort(createLiveAwsFacts(clients()));

    // Act
    const [byAlias, byArn] = await Promise.all([
      port.describeKmsKey?.('alias/nodes'),
      port.describeKmsKey?.(KEY_ARN),
    ]);

    // Assess
    expect(byAlias).toEqual(byArn);
    expect(kms.commandCalls(DescribeKeyCommand)).toHaveLength(2);
    expect(kms.commandCalls(GetKeyPolicyCommand)).toHaveLength(1);
    expect(kms.commandCalls(ListGrantsCommand)).toHaveLength(1);
  });
});
