// `scan --world FILE --now TIME`: the time a world file's recorded dates are compared with.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseScanTime } from '../../lambda/cli/plan-world.js';
import type { ScanReport } from '../../lambda/core/report.js';
import { runCliCaptured, useTempTrees } from './support/run-cli.js';

const WORLD = join(import.meta.dirname, '../../examples/world.json');
/** The clock of these runs: long after the example world's capacity reservation ended. */
const CLOCK = new Date('2031-05-05T05:05:05Z');
const tree = useTempTrees();

const scan = (argv: readonly string[]) =>
  runCliCaptured(['scan', '--world', WORLD, '--cluster', 'prod-use1', ...argv], { now: CLOCK });

function reservationOfGpu(report: ScanReport) {
  return report.findings.find(
    (finding) =>
      finding.checkId === 'capacity-reservations-resolve' && finding.resource.name === 'gpu'
  );
}

describe('parseScanTime', () => {
  it('reads ISO 8601 times with their zone, and dates as their midnight UTC', () => {
    expect(parseScanTime('2026-11-22T02:00:00Z')?.toISOString()).toBe('2026-11-22T02:00:00.000Z');
    expect(parseScanTime('2026-11-22T03:30:00.5+01:30')?.toISOString()).toBe(
      '2026-11-22T02:00:00.500Z'
    );
    expect(parseScanTime('2026-11-22T02:00Z')?.toISOString()).toBe('2026-11-22T02:00:00.000Z');
    expect(parseScanTime(' 2026-11-22 ')?.toISOString()).toBe('2026-11-22T00:00:00.000Z');
  });

  it('refuses anything else: no zone, other formats, days that do not exist', () => {
    for (const value of [
      '',
      'now',
      'yesterday',
      '2026-11-22T02:00:00',
      '22/11/2026',
      '1795744800',
      '2026-02-30',
      '2026-13-01T00:00:00Z',
      '2026-11-22T25:00:00Z',
    ]) {
      expect(parseScanTime(value), value).toBeUndefined();
    }
  });
});

describe('scan --world --now', () => {
  it('compares the recorded dates with the given time, and reports it as the scan time', async () => {
    // Act
    const recorded = await scan(['--now', '2026-11-22T02:00:00Z', '--format', 'json']);
    const clock = await scan(['--format', 'json']);
    // Assess
    const then = JSON.parse(recorded.stdout) as ScanReport;
    const now = JSON.parse(clock.stdout) as ScanReport;
    expect(then.scannedAt).toBe('2026-11-22T02:00:00.000Z');
    expect(now.scannedAt).toBe(CLOCK.toISOString());
    expect(reservationOfGpu(then)?.message).toContain('ends on 2026-11-25');
    expect(reservationOfGpu(now)?.message).toContain('matches no active reservation');
  });

  it('takes a date alone as its midnight UTC', async () => {
    const run = await scan(['--now', '2026-11-24', '--format', 'json']);
    expect((JSON.parse(run.stdout) as ScanReport).scannedAt).toBe('2026-11-24T00:00:00.000Z');
  });

  it('expires config ignore rules at that time too: one scan, one clock', async () => {
    // Prepare: a rule for the GPU reservation finding, until 2026-12-01
    const directory = tree({
      'scan.yaml': [
        'ignore:',
        '  - check: capacity-reservations-resolve',
        "    resource: '*/EC2NodeClass/gpu'",
        '    reason: renewal ordered',
        "    expires: '2026-12-01'",
        '',
      ].join('\n'),
    });
    const config = ['--config', join(directory, 'scan.yaml'), '--format', 'json'];
    // Act
    const before = await scan(['--now', '2026-11-22T02:00:00Z', ...config]);
    const after = await scan(['--now', '2026-12-02T00:00:00Z', ...config]);
    // Assess
    expect(reservationOfGpu(JSON.parse(before.stdout) as ScanReport)?.status).toBe('suppressed');
    expect(before.stderr).toBe('');
    expect(reservationOfGpu(JSON.parse(after.stdout) as ScanReport)?.status).toBe('fail');
    expect(after.stderr).toContain('expired 2026-12-01');
  });

  it('is a usage error when the time is not ISO 8601, naming the form expected', async () => {
    const run = await scan(['--now', 'last tuesday']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('give an ISO 8601 time such as 2026-11-22T02:00:00Z');
  });

  it('is a usage error without --world: manifest and live scans are at the current time', async () => {
    const run = await runCliCaptured(
      ['scan', join(import.meta.dirname, '../../examples/nodeclasses'), '--now', '2026-11-22'],
      { now: CLOCK }
    );
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      '--now sets the time a --world scan compares its recorded dates with'
    );
  });
});
