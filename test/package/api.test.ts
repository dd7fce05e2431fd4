// The programmatic API from the sources (the installed package is covered by package.test.ts).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { breachesThreshold, ConfigError, type ScanInput, scan, VERSION } from '../../lambda/api.js';
import { runCli } from '../../lambda/cli/main.js';
import { REPO_ROOT } from './pack.js';

const NODECLASSES = join(REPO_ROOT, 'examples/nodeclasses');
const WORLD = join(REPO_ROOT, 'examples/world.json');
const NOW = new Date('2026-11-01T00:00:00Z');

async function cliJson(args: readonly string[]): Promise<unknown> {
  let stdout = '';
  await runCli(args, {
    stdout: (text) => {
      stdout += text;
    },
    stderr: () => undefined,
    readStdin: async () => '',
    stdoutIsTty: false,
    stderrIsTty: false,
    env: {},
    now: () => NOW,
  });
  return JSON.parse(stdout);
}

describe('scan (programmatic API)', () => {
  it('returns the document `scan --format json` prints, for manifests and for a world', async () => {
    // Act
    const manifests = await scan({ paths: [NODECLASSES], now: NOW });
    const world = await scan({ world: WORLD, now: NOW, environment: 'non-production' });
    // Assess
    expect(manifests).toEqual(await cliJson(['scan', NODECLASSES, '--format', 'json']));
    expect(world).toEqual(
      await cliJson(['scan', '--world', WORLD, '--non-production', '--format', 'json'])
    );
    expect(breachesThreshold(manifests, 'high')).toBe(true);
    expect(breachesThreshold(manifests, 'none')).toBe(false);
    expect(VERSION).toBe(
      (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string })
        .version
    );
  });

  it('scans manifest text as the CLI scans standard input', async () => {
    // Prepare
    const text = `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: arn-profile
spec:
  amiSelectorTerms:
    - alias: al2023@v20251001
  instanceProfile: arn:aws:iam::123456789012:instance-profile/KarpenterNode
  subnetSelectorTerms:
    - tags: { karpenter.sh/discovery: demo }
  securityGroupSelectorTerms:
    - tags: { karpenter.sh/discovery: demo }
`;
    // Act
    const report = await scan({ manifests: text, only: ['instance-profile-is-name'], now: NOW });
    // Assess
    expect(report.summary.nodeClasses).toBe(1);
    expect(report.findings).toEqual([
      expect.objectContaining({
        checkId: 'instance-profile-is-name',
        status: 'fail',
        severity: 'critical',
        resource: expect.objectContaining({ name: 'arn-profile' }),
      }),
    ]);
  });

  it('lists unreadable paths as input errors, as the CLI does', async () => {
    // Act
    const report = await scan({ paths: [join(REPO_ROOT, 'no-such-directory')], now: NOW });
    // Assess
    expect(report.summary.inputErrors).toEqual([
      expect.objectContaining({ source: join(REPO_ROOT, 'no-such-directory') }),
    ]);
  });

  it.each<[string, unknown, RegExp]>([
    ['an unknown check id', { paths: ['x'], only: ['no-such-check'] }, /unknown check id/],
    ['an unknown option', { paths: ['x'], path: 'typo' }, /path/],
    ['clusters without a world (a live scan)', { clusters: ['prod'] }, /give world as well/],
    ['nothing to scan', {}, /nothing to scan/],
    ['a wrong type', { paths: 'examples' }, /paths/],
  ])('refuses %s with a ConfigError', async (_name, input, message) => {
    // Act
    const refusal = scan(input as ScanInput);
    // Assess
    await expect(refusal).rejects.toBeInstanceOf(ConfigError);
    await expect(refusal).rejects.toThrow(message);
  });
});
