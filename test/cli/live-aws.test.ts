import { join } from 'node:path';
import {
  DescribeImagesCommand,
  DescribeSecurityGroupsCommand,
  DescribeSubnetsCommand,
  EC2Client,
} from '@aws-sdk/client-ec2';
import { GetRoleCommand, IAMClient } from '@aws-sdk/client-iam';
import { GetParametersCommand, SSMClient } from '@aws-sdk/client-ssm';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ScanReport } from '../../lambda/core/report.js';
import { answerEdgeResources, EDGE_MANIFEST } from './support/edge-manifest.js';
import { runCliCaptured, tempTree } from './support/run-cli.js';

const ec2 = mockClient(EC2Client);
const ssm = mockClient(SSMClient);
const iam = mockClient(IAMClient);
const sts = mockClient(STSClient);

const cli = (argv: readonly string[]) =>
  runCliCaptured(argv, { now: new Date('2026-11-22T12:00:00Z') });

const ALIAS_MANIFEST = EDGE_MANIFEST.replace(
  '  amiFamily: AL2023\n  amiSelectorTerms: [{ id: ami-0123456789abcdef0 }]',
  '  amiSelectorTerms: [{ alias: al2023@latest }]'
);

/** An account where every query finds nothing (the alias tests only look at SSM). */
function answerEmptyAccount(): void {
  ec2.on(DescribeImagesCommand).resolves({ Images: [] });
  ec2.on(DescribeSubnetsCommand).resolves({ Subnets: [] });
  ec2.on(DescribeSecurityGroupsCommand).resolves({ SecurityGroups: [] });
  iam.on(GetRoleCommand).resolves({});
}

/** `scan --aws --region us-east-1 <flags> <manifest file>`, with the manifest in a temp dir. */
async function scanManifest(manifest: string, flags: readonly string[]) {
  const tree = tempTree({ 'edge.yaml': manifest });
  try {
    return await cli([
      'scan',
      '--aws',
      '--region',
      'us-east-1',
      ...flags,
      join(tree.dir, 'edge.yaml'),
    ]);
  } finally {
    tree.cleanup();
  }
}

function findingOf(stdout: string, checkId: string) {
  return (JSON.parse(stdout) as ScanReport).findings.find((finding) => finding.checkId === checkId);
}

beforeEach(() => {
  ec2.reset();
  ssm.reset();
  iam.reset();
  sts.reset();
  sts.on(GetCallerIdentityCommand).resolves({
    Account: '111122223333',
    Arn: 'arn:aws:sts::111122223333:assumed-role/Auditor/session',
  });
});

describe('scan --aws with manifests', () => {
  it('evaluates the manifests against live AWS with Karpenter’s exact queries', async () => {
    // Prepare
    answerEdgeResources(ec2, iam, { availableIps: 0 });
    const tree = tempTree({ 'edge.yaml': EDGE_MANIFEST });
    try {
      // Act
      const run = await cli([
        'scan',
        '--aws',
        '--region',
        'us-east-1',
        '--format',
        'json',
        join(tree.dir, 'edge.yaml'),
      ]);

      // Assess
      const report = JSON.parse(run.stdout) as ScanReport;
      expect(ec2.commandCalls(DescribeSubnetsCommand)[0]?.args[0].input).toEqual({
        Filters: [{ Name: 'tag:network', Values: ['edge'] }],
        MaxResults: 500,
      });
      const subnetFinding = report.findings.find(
        (finding) => finding.checkId === 'subnets-have-free-ips'
      );
      expect(subnetFinding).toMatchObject({ status: 'fail', severity: 'high' });
      expect(report.summary.notRun.map((entry) => entry.checkId)).not.toContain('subnets-resolve');
    } finally {
      tree.cleanup();
    }
  });

  it('needs manifest paths', async () => {
    // Act
    const run = await cli(['scan', '--aws', '--region', 'us-east-1']);

    // Assess
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('give manifest paths');
  });

  it('resolves alias terms for --kubernetes-version, since no cluster is read', async () => {
    // Prepare
    answerEmptyAccount();
    ssm.on(GetParametersCommand).callsFake((input: { Names?: string[] }) => ({
      Parameters: (input.Names ?? []).map((name) => ({
        Name: name,
        Value: 'ami-0aaaaaaaaaaaaaaaa',
      })),
    }));

    // Act
    const run = await scanManifest(ALIAS_MANIFEST, [
      '--kubernetes-version',
      '1.33',
      '--format',
      'json',
    ]);

    // Assess
    const names = ssm
      .commandCalls(GetParametersCommand)
      .flatMap((call) => call.args[0].input.Names ?? []);
    expect(names).toContain(
      '/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/recommended/image_id'
    );
    const alias = findingOf(run.stdout, 'ami-alias-resolves');
    expect(alias?.status).not.toBe('error');
  });

  it('names --kubernetes-version when alias terms cannot resolve without it', async () => {
    // Prepare
    answerEmptyAccount();

    // Act
    const run = await scanManifest(ALIAS_MANIFEST, ['--format', 'json']);

    // Assess
    const alias = findingOf(run.stdout, 'ami-alias-resolves');
    expect(alias?.status).toBe('error');
    expect(alias?.message).toContain('--kubernetes-version');
  });

  it('refuses a malformed --kubernetes-version', async () => {
    const run = await scanManifest(EDGE_MANIFEST, ['--kubernetes-version', 'latest']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--kubernetes-version "latest"');
  });
});
