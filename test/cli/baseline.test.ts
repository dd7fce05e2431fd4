import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT_FINDINGS, EXIT_OK, EXIT_USAGE } from '../../lambda/cli/main.js';
import type { ReportFinding, ScanReport } from '../../lambda/core/report.js';
import { ReportContract } from './support/report-contract.js';
import { runCliCaptured, tempTree } from './support/run-cli.js';

const ROOT = join(import.meta.dirname, '..', '..');
const WORLD = join(ROOT, 'examples', 'world.json');
/** Shortly after the example world was recorded (its capacity reservation ends three days later). */
const NOW = new Date('2026-11-22T12:00:00Z');
const EDGE_SUBNETS = ['subnet-0e1d2c3b4a5968721', 'subnet-0e1d2c3b4a5968722'];

interface World {
  ec2: { subnets: { SubnetId: string; AvailableIpAddressCount: number }[] };
  eks: {
    clusters: {
      name: string;
      kubernetes: {
        ec2NodeClasses: {
          metadata: { name: string };
          spec: { tags?: Record<string, string>; metadataOptions?: { httpTokens?: string } };
        }[];
      };
    }[];
  };
}

const cli = (argv: readonly string[]) => runCliCaptured(argv, { now: NOW });

function jsonReport(stdout: string): ScanReport {
  return ReportContract.parse(JSON.parse(stdout)) as ScanReport;
}

function open(report: ScanReport): ReportFinding[] {
  return report.findings.filter((f) => f.status === 'fail' || f.status === 'error');
}

function label(finding: Pick<ReportFinding, 'checkId' | 'resource'>): string {
  return `${finding.checkId} ${finding.resource.cluster}/${finding.resource.name}`;
}

let files: { dir: string; cleanup: () => void };
let baselineFile: string;

/** A copy of the example world, edited, in the temporary directory. */
function editedWorld(name: string, edit: (world: World) => void): string {
  const world = JSON.parse(readFileSync(WORLD, 'utf8')) as World;
  edit(world);
  const file = join(files.dir, name);
  writeFileSync(file, JSON.stringify(world));
  return file;
}

function setFreeIps(world: World, subnetIds: readonly string[], count: number): void {
  for (const subnet of world.ec2.subnets) {
    if (subnetIds.includes(subnet.SubnetId)) subnet.AvailableIpAddressCount = count;
  }
}

function prodNodeClass(world: World, name: string) {
  const cluster = world.eks.clusters.find((c) => c.name === 'prod-use1');
  const nodeClass = cluster?.kubernetes.ec2NodeClasses.find((nc) => nc.metadata.name === name);
  if (!nodeClass) throw new Error(`no NodeClass ${name} in the example world`);
  return nodeClass;
}

beforeAll(async () => {
  files = tempTree({});
  const run = await cli(['scan', '--world', WORLD, '--format', 'json']);
  expect(run.code).toBe(EXIT_FINDINGS);
  baselineFile = join(files.dir, 'baseline.json');
  writeFileSync(baselineFile, run.stdout);
});

afterAll(() => files.cleanup());

describe('scan --baseline on the example world', () => {
  it('passes the gate when nothing changed: every open finding is unchanged, nothing resolved', async () => {
    // Act
    const run = await cli([
      'scan',
      '--world',
      WORLD,
      '--format',
      'json',
      '--baseline',
      baselineFile,
    ]);
    // Assess
    expect(run.code).toBe(EXIT_OK);
    const report = jsonReport(run.stdout);
    expect(open(report).length).toBeGreaterThan(10);
    expect(open(report).filter((f) => f.change !== 'unchanged')).toEqual([]);
    expect(report.findings.filter((f) => f.status === 'pass' && 'change' in f)).toEqual([]);
    expect(report.resolved).toEqual([]);
  });

  it('keeps a finding unchanged when only a free-IP count moved', async () => {
    // Prepare: the short edge subnet goes from 3 to 4 free addresses, still too few
    const world = editedWorld('volatile.json', (w) => setFreeIps(w, [EDGE_SUBNETS[1] ?? ''], 4));
    // Act
    const run = await cli([
      'scan',
      '--world',
      world,
      '--format',
      'json',
      '--baseline',
      baselineFile,
    ]);
    // Assess
    const report = jsonReport(run.stdout);
    const edge = open(report).find((f) => label(f) === 'subnets-have-free-ips prod-use1/edge');
    expect(edge?.message).toContain('(4)');
    expect(edge?.change).toBe('unchanged');
    expect(run.code).toBe(EXIT_OK);
  });

  it('fails on the one new finding only and lists the fixed one as resolved', async () => {
    // Prepare: a restricted tag on the clean `default` class; the edge subnets get addresses
    const world = editedWorld('changed.json', (w) => {
      const spec = prodNodeClass(w, 'default').spec;
      spec.tags = { ...spec.tags, 'karpenter.sh/nodepool': 'general' };
      setFreeIps(w, EDGE_SUBNETS, 5000);
    });
    // Act
    const run = await cli([
      'scan',
      '--world',
      world,
      '--format',
      'json',
      '--baseline',
      baselineFile,
    ]);
    // Assess
    expect(run.code).toBe(EXIT_FINDINGS);
    const report = jsonReport(run.stdout);
    expect(
      open(report)
        .filter((f) => f.change !== 'unchanged')
        .map(label)
    ).toEqual(['tags-not-restricted prod-use1/default']);
    expect(
      open(report)
        .filter((f) => f.change === 'new')
        .map(label)
    ).toEqual(['tags-not-restricted prod-use1/default']);
    expect(report.resolved?.map(label)).toEqual(['subnets-have-free-ips prod-use1/edge']);
    expect(report.resolved?.[0]?.message).toContain('subnet-0e1d2c3b4a5968722 (3)');
  });

  it('does not fail when the only new finding is below --fail-on', async () => {
    // Prepare: IMDSv1 allowed on `default` (a medium finding; the gate is high)
    const world = editedWorld('below.json', (w) => {
      prodNodeClass(w, 'default').spec.metadataOptions = { httpTokens: 'optional' };
    });
    // Act
    const run = await cli([
      'scan',
      '--world',
      world,
      '--format',
      'json',
      '--baseline',
      baselineFile,
    ]);
    // Assess
    const report = jsonReport(run.stdout);
    expect(
      open(report)
        .filter((f) => f.change === 'new')
        .map((f) => `${label(f)} ${f.severity}`)
    ).toEqual(['imds-v2-required prod-use1/default medium']);
    expect(run.code).toBe(EXIT_OK);
  });

  it('groups the table by change and lists what was resolved', async () => {
    const world = editedWorld('table.json', (w) => {
      const spec = prodNodeClass(w, 'default').spec;
      spec.tags = { ...spec.tags, 'karpenter.sh/nodepool': 'general' };
      setFreeIps(w, EDGE_SUBNETS, 5000);
    });
    const run = await cli(['scan', '--world', world, '--baseline', baselineFile]);
    const lines = run.stdout.split('\n');
    expect(lines.slice(0, 4)).toEqual([
      'New since the baseline: 1',
      '',
      `cluster prod-use1 · EC2NodeClass default  (${world})`,
      expect.stringMatching(/^ {2}HIGH {5}fail {2}tags-not-restricted {2}spec\.tags has/),
    ]);
    expect(lines).toContain('Changed since the baseline: none');
    expect(lines).toContain('Resolved since the baseline: 1');
    // The summary line, wrapped to the width, read as one line.
    const summary = run.stdout.slice(run.stdout.lastIndexOf('\nSummary: ')).replace(/\n +/g, ' ');
    expect(summary).toMatch(/ · vs baseline: 1 new, 0 changed, \d+ unchanged, 1 resolved\n$/);
    expect(run.code).toBe(EXIT_FINDINGS);
  });

  it('compares severity and status with a report written before material hashes existed', async () => {
    const old = JSON.parse(readFileSync(baselineFile, 'utf8')) as {
      findings: Record<string, unknown>[];
    };
    for (const finding of old.findings) delete finding.materialHash;
    const oldFile = join(files.dir, 'old-baseline.json');
    writeFileSync(oldFile, JSON.stringify(old));
    const run = await cli(['scan', '--world', WORLD, '--format', 'json', '--baseline', oldFile]);
    expect(run.code).toBe(EXIT_OK);
    expect(open(jsonReport(run.stdout)).every((f) => f.change === 'unchanged')).toBe(true);
  });
});

describe('scan --baseline on the example manifests', () => {
  it('passes a re-scan of unchanged files against their own report', async () => {
    const first = await cli(['scan', join(ROOT, 'examples'), '--format', 'json']);
    const file = join(files.dir, 'manifests-baseline.json');
    writeFileSync(file, first.stdout);
    const again = await cli(['scan', join(ROOT, 'examples'), '--baseline', file]);
    expect(first.code).toBe(EXIT_FINDINGS);
    expect(again.code).toBe(EXIT_OK);
    expect(again.stdout).toContain('New since the baseline: none');
  });
});

describe('scan --baseline with an unusable file', () => {
  it.each([
    ['missing', undefined, 'cannot read (no such file)'],
    ['not-json', 'not json', 'not valid JSON'],
    ['sarif', '{"version":"2.1.0","runs":[]}', 'not a report written by --format json'],
    ['bad-finding', '{"version":1,"findings":[{"id":"x"}]}', 'findings[0].checkId'],
  ])('%s: exits 2 naming the file, before scanning', async (name, content, reason) => {
    const file = join(files.dir, `${name}.json`);
    if (content !== undefined) writeFileSync(file, content);
    const run = await cli(['scan', '--world', WORLD, '--baseline', file]);
    expect(run.code).toBe(EXIT_USAGE);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`nodeclass-scan: --baseline ${file}: `);
    expect(run.stderr).toContain(reason);
  });
});
