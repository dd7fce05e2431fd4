import { join } from 'node:path';
import {
  DescribeImagesCommand,
  DescribeSecurityGroupsCommand,
  DescribeSubnetsCommand,
  EC2Client,
} from '@aws-sdk/client-ec2';
import { GetRoleCommand, IAMClient } from '@aws-sdk/client-iam';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  asffFindingsOf,
  parseAccountId,
  resolveAsffTarget,
} from '../../../lambda/cli/formats/asff.js';
import type { AsffFinding } from '../../../lambda/core/asff.js';
import { CHECKS } from '../../../lambda/core/checks/index.js';
import type { ScanReport } from '../../../lambda/core/report.js';
import { asffErrors } from '../support/asff-schema.js';
import { EDGE_MANIFEST } from '../support/edge-manifest.js';
import { runCliCaptured, tempTree } from '../support/run-cli.js';
import { aFinding, aReport } from './fixtures.js';

const ROOT = join(import.meta.dirname, '../../..');
const WORLD = join(ROOT, 'examples/world.json');
const MANIFESTS = join(ROOT, 'examples/nodeclasses/good-al2023.yaml');

const sts = mockClient(STSClient);
const ec2 = mockClient(EC2Client);
const iam = mockClient(IAMClient);

beforeEach(() => {
  sts.reset();
  ec2.reset();
  iam.reset();
});

async function asffScan(argv: readonly string[], now = new Date('2026-11-22T12:00:00Z')) {
  const run = await runCliCaptured(['scan', '--format', 'asff', '--fail-on', 'none', ...argv], {
    now,
  });
  return { ...run, findings: run.code === 0 ? (JSON.parse(run.stdout) as AsffFinding[]) : [] };
}

describe('scan --format asff', () => {
  it('writes valid ASFF for every finding of the example world, in the world’s account', async () => {
    const { code, stderr, findings } = await asffScan(['--world', WORLD]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(findings.length).toBeGreaterThan(10);
    expect(asffErrors(findings)).toEqual([]);
    const json = await runCliCaptured(
      ['scan', '--world', WORLD, '--format', 'json', '--fail-on', 'none'],
      {
        now: new Date('2026-11-22T12:00:00Z'),
      }
    );
    const report = JSON.parse(json.stdout) as ScanReport;
    const exported = report.findings.filter((finding) => finding.status !== 'not-applicable');
    expect(findings).toHaveLength(exported.length);
    for (const finding of findings) {
      expect(finding.AwsAccountId).toBe('111122223333');
      expect(finding.ProductArn).toBe(
        'arn:aws:securityhub:us-east-1:111122223333:product/111122223333/default'
      );
    }
    // Every failing finding of the report is there as FAILED and ACTIVE.
    const failing = exported.filter((finding) => finding.status === 'fail' && !finding.causedBy);
    expect(failing.length).toBeGreaterThan(0);
    const byFindingId = new Map(
      findings.map((finding) => [finding.ProductFields['nodeclass-scanner/findingId'], finding])
    );
    for (const finding of failing) {
      expect(byFindingId.get(finding.id)).toMatchObject({
        Compliance: { Status: 'FAILED' },
        RecordState: 'ACTIVE',
        GeneratorId: `nodeclass-scanner/${finding.checkId}`,
      });
    }
    // Distinct ids: BatchImportFindings would otherwise merge two findings into one.
    expect(new Set(findings.map((finding) => finding.Id)).size).toBe(findings.length);
  });

  it('keeps every Id across two scans, with a later UpdatedAt', async () => {
    const first = await asffScan(['--world', WORLD], new Date('2026-11-22T12:00:00Z'));
    const second = await asffScan(['--world', WORLD], new Date('2026-11-22T13:00:00Z'));
    expect(second.findings.map((finding) => finding.Id)).toEqual(
      first.findings.map((finding) => finding.Id)
    );
    expect(second.findings[0]?.UpdatedAt).toBe('2026-11-22T13:00:00.000Z');
    expect(first.findings[0]?.UpdatedAt).toBe('2026-11-22T12:00:00.000Z');
  });

  it('takes --aws-account-id over the world file’s account', async () => {
    const { findings } = await asffScan(['--world', WORLD, '--aws-account-id', '444455556666']);
    expect(new Set(findings.map((finding) => finding.AwsAccountId))).toEqual(
      new Set(['444455556666'])
    );
  });

  it('scans manifests offline with --aws-account-id and --region', async () => {
    const { code, findings } = await asffScan([
      '--aws-account-id',
      '123456789012',
      '--region',
      'eu-west-1',
      MANIFESTS,
    ]);
    expect(code).toBe(0);
    expect(findings.length).toBeGreaterThan(0);
    expect(asffErrors(findings)).toEqual([]);
    expect(findings[0]?.ProductArn).toBe(
      'arn:aws:securityhub:eu-west-1:123456789012:product/123456789012/default'
    );
  });

  it('asks for --aws-account-id in one line (exit 2) when nothing names the account', async () => {
    const { code, stdout, stderr } = await asffScan(['--region', 'eu-west-1', MANIFESTS]);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toMatch(
      /^nodeclass-scan: --format asff needs the AWS account .*--aws-account-id/
    );
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(sts.calls()).toHaveLength(0);
  });

  it('asks for --region when manifests are scanned without one', async () => {
    const { code, stderr } = await asffScan(['--aws-account-id', '123456789012', MANIFESTS]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/--format asff needs the region .*--region/);
  });

  it('refuses an account id that is not 12 digits', async () => {
    const { code, stderr } = await asffScan(['--world', WORLD, '--aws-account-id', '1234']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/--aws-account-id "1234" is not a 12-digit AWS account id/);
  });

  it('takes the account from sts:GetCallerIdentity in live scans', async () => {
    sts.on(GetCallerIdentityCommand).resolves({
      Account: '777788889999',
      Arn: 'arn:aws:sts::777788889999:assumed-role/Auditor/session',
    });
    ec2.on(DescribeImagesCommand).resolves({ Images: [] });
    ec2.on(DescribeSubnetsCommand).resolves({ Subnets: [] });
    ec2.on(DescribeSecurityGroupsCommand).resolves({ SecurityGroups: [] });
    iam.on(GetRoleCommand).resolves({});
    const tree = tempTree({
      'edge.yaml': EDGE_MANIFEST,
    });
    try {
      const { code, stderr, findings } = await asffScan([
        '--aws',
        '--region',
        'ap-southeast-2',
        join(tree.dir, 'edge.yaml'),
      ]);
      expect(stderr).toBe('');
      expect(code).toBe(0);
      expect(asffErrors(findings)).toEqual([]);
      expect(new Set(findings.map((finding) => finding.ProductArn))).toEqual(
        new Set(['arn:aws:securityhub:ap-southeast-2:777788889999:product/777788889999/default'])
      );
    } finally {
      tree.cleanup();
    }
  });
});

describe('asffFindingsOf', () => {
  const target = { account: '123456789012', region: 'eu-west-1', partition: 'aws' };

  it('leaves not-applicable findings out and keeps suppressed ones as WARNING', () => {
    const report = aReport([
      aFinding({ checkId: 'subnets-resolve', status: 'not-applicable' }),
      aFinding({
        checkId: 'security-groups-resolve',
        status: 'suppressed',
        suppression: { reason: 'known', source: 'annotation', status: 'fail' },
      }),
    ]);
    const findings = asffFindingsOf(report, target, CHECKS);
    expect(findings.map((finding) => [finding.GeneratorId, finding.Compliance.Status])).toEqual([
      ['nodeclass-scanner/security-groups-resolve', 'WARNING'],
    ]);
  });

  it('writes an empty list for a report without exported findings', async () => {
    const { formatAsff } = await import('../../../lambda/cli/formats/asff.js');
    expect(JSON.parse(formatAsff(aReport([]), target, CHECKS))).toEqual([]);
  });
});

describe('resolveAsffTarget', () => {
  it('does not read the world or call STS when both flags are given', async () => {
    const fail = () => Promise.reject(new Error('not called'));
    await expect(
      resolveAsffTarget({ accountFlag: '123456789012', regionFlag: 'cn-north-1', world: fail })
    ).resolves.toEqual({ account: '123456789012', region: 'cn-north-1', partition: 'aws-cn' });
  });

  it('validates the flag', () => {
    expect(parseAccountId(' 123456789012 ')).toBe('123456789012');
    expect(() => parseAccountId('12345678901a')).toThrow(/12-digit/);
  });
});
