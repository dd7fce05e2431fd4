// `scan --aws` of manifests whose EBS volumes use customer managed KMS keys, against mocked EC2,
// IAM and KMS: a disabled key and a key whose policy leaves it to IAM policies that do not allow it
// fail, beside a healthy control whose key policy names the controller role. Each key and the
// account's EBS settings are read once, however many classes name them.
import { join } from 'node:path';
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
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import type { ScanReport } from '../../lambda/core/report.js';
import { ACCESS_DENIED } from '../support/live-aws-mocks.js';
import {
  answerEdgeResources,
  controllerPolicyFlags,
  edgeNodeClass,
  edgeReferencePolicies,
} from './support/edge-manifest.js';
import { runCliCaptured, useTempTrees } from './support/run-cli.js';

const ACCOUNT = '111122223333';
const CONTROLLER = `arn:aws:iam::${ACCOUNT}:role/KarpenterControllerRole-demo`;
const ec2 = mockClient(EC2Client);
const iam = mockClient(IAMClient);
const ssm = mockClient(SSMClient);
const kms = mockClient(KMSClient);
const sts = mockClient(STSClient);
const tree = useTempTrees();

afterAll(() => {
  for (const mock of [ec2, iam, ssm, kms, sts]) mock.restore();
});

const keyArn = (id: string) => `arn:aws:kms:us-east-1:${ACCOUNT}:key/${id}`;

const KEYS = {
  'alias/nodes-current': { id: 'current', state: 'Enabled', grantee: CONTROLLER },
  'alias/nodes-retired': { id: 'retired', state: 'Disabled', grantee: CONTROLLER },
  'alias/nodes-iam': { id: 'iam', state: 'Enabled', grantee: `arn:aws:iam::${ACCOUNT}:root` },
} as const;

function policyFor(grantee: string): string {
  return JSON.stringify({
    Version: '2012-10-17',
    Statement: [
      {
        Sid: 'Use of the key',
        Effect: 'Allow',
        Principal: { AWS: grantee },
        Action: [
          'kms:Decrypt',
          'kms:DescribeKey',
          'kms:GenerateDataKey*',
          'kms:ReEncrypt*',
          'kms:CreateGrant',
        ],
        Resource: '*',
      },
    ],
  });
}

function nodeClass(name: string, kmsKeyID?: string): string {
  return edgeNodeClass(
    name,
    kmsKeyID === undefined
      ? []
      : [
          '  blockDeviceMappings:',
          '    - deviceName: /dev/xvda',
          '      rootVolume: true',
          `      ebs: { volumeSize: 20Gi, encrypted: true, kmsKeyID: ${kmsKeyID} }`,
        ]
  );
}

beforeEach(() => {
  ec2.reset().onAnyCommand().rejects(ACCESS_DENIED);
  iam.reset().onAnyCommand().rejects(ACCESS_DENIED);
  ssm.reset().onAnyCommand().rejects(ACCESS_DENIED);
  kms.reset().onAnyCommand().rejects(ACCESS_DENIED);
  sts.reset().on(GetCallerIdentityCommand).resolves({ Account: ACCOUNT });
  answerEdgeResources(ec2, iam, { account: ACCOUNT });
  ec2.on(GetEbsEncryptionByDefaultCommand).resolves({ EbsEncryptionByDefault: false });
  ec2.on(GetEbsDefaultKmsKeyIdCommand).resolves({ KmsKeyId: 'alias/aws/ebs' });
  for (const [alias, key] of Object.entries(KEYS)) {
    const arn = keyArn(key.id);
    kms.on(DescribeKeyCommand, { KeyId: alias }).resolves({
      KeyMetadata: {
        KeyId: key.id,
        Arn: arn,
        AWSAccountId: ACCOUNT,
        KeyState: key.state,
        KeyManager: 'CUSTOMER',
        KeyUsage: 'ENCRYPT_DECRYPT',
        KeySpec: 'SYMMETRIC_DEFAULT',
      },
    });
    kms.on(GetKeyPolicyCommand, { KeyId: arn }).resolves({ Policy: policyFor(key.grantee) });
    kms.on(ListGrantsCommand, { KeyId: arn }).resolves({ Grants: [], Truncated: false });
  }
});

async function scan(): Promise<ScanReport> {
  const dir = tree({
    'classes.yaml': [
      nodeClass('healthy', 'alias/nodes-current'),
      nodeClass('healthy-twin', 'alias/nodes-current'),
      nodeClass('retired', 'alias/nodes-retired'),
      nodeClass('iam-only', 'alias/nodes-iam'),
      // Karpenter's default volume: encrypted with the account's default key (AWS managed here).
      nodeClass('plain'),
      nodeClass('plain-twin'),
    ].join('---\n'),
  });
  const policies = controllerPolicyFlags(tree, edgeReferencePolicies(ACCOUNT));
  const run = await runCliCaptured([
    'scan',
    '--aws',
    '--region',
    'us-east-1',
    '--controller-role',
    `demo=${CONTROLLER}`,
    ...policies,
    '--only',
    'ebs-kms-key-usable',
    '--format',
    'json',
    join(dir, 'classes.yaml'),
  ]);
  expect(run.stderr).toBe('');
  return JSON.parse(run.stdout) as ScanReport;
}

describe('scan --aws with customer managed KMS keys for EBS', () => {
  it('fails the disabled key and the key IAM does not allow, and passes the healthy classes', async () => {
    // Act
    const report = await scan();

    // Assess
    const verdicts = Object.fromEntries(
      report.findings
        .filter((finding) => finding.evidence.key !== undefined)
        .filter((finding) => finding.evidence.accountDefault === false)
        .map((finding) => [finding.resource.name, finding.status])
    );
    expect(verdicts).toEqual({
      healthy: 'pass',
      'healthy-twin': 'pass',
      retired: 'fail',
      'iam-only': 'fail',
    });
    const iamOnly = report.findings.find(
      (finding) => finding.resource.name === 'iam-only' && finding.status === 'fail'
    );
    expect(iamOnly?.message).toContain('the key policy leaves it to IAM');
    expect(iamOnly?.evidence.deniedActions).toContain('kms:CreateGrant');
    expect(
      report.findings
        .filter((finding) => finding.resource.name.startsWith('plain'))
        .map((finding) => [finding.status, finding.evidence.reason])
    ).toEqual([
      ['pass', 'aws-managed'],
      ['pass', 'aws-managed'],
    ]);
  });

  it('reads each key and the EBS settings once, whatever the number of classes naming them', async () => {
    // Act
    await scan();

    // Assess
    expect(ec2.commandCalls(GetEbsEncryptionByDefaultCommand)).toHaveLength(1);
    expect(ec2.commandCalls(GetEbsDefaultKmsKeyIdCommand)).toHaveLength(1);
    expect(
      kms
        .commandCalls(DescribeKeyCommand)
        .map((call) => call.args[0].input.KeyId)
        .sort()
    ).toEqual(['alias/nodes-current', 'alias/nodes-iam', 'alias/nodes-retired']);
    // Policies and grants of customer keys, by ARN, once each.
    expect(kms.commandCalls(GetKeyPolicyCommand)).toHaveLength(3);
    expect(kms.commandCalls(ListGrantsCommand)).toHaveLength(3);
  });
});
