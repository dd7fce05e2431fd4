import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  comparableFindings,
  type LiveCliRun,
  runLiveCli,
  runWorldCli,
} from '../../bench/live-cli.js';

// The live CLI (`scan --cluster`, a child process) against the AWS and Kubernetes stand-ins serving
// test/fixtures/worlds/launchability.json: DescribeInstanceTypes and DescribeInstanceTypeOfferings
// answered by the emulated EC2 over the wire, the NodePools read from the cluster's API. It must
// fail exactly the NodePools `scan --world` fails on the same world.
const WORLD = join(import.meta.dirname, '../fixtures/worlds/launchability.json');

let live: LiveCliRun & { readonly worldFile: string; readonly cleanup: () => void };
let offline: Awaited<ReturnType<typeof runWorldCli>>;

beforeAll(async () => {
  const world = JSON.parse(readFileSync(WORLD, 'utf8')) as Record<string, unknown>;
  live = await runLiveCli({ clusters: 1, nodeClassesPerCluster: 1 }, { editWorld: () => world });
  offline = await runWorldCli(live.worldFile);
}, 120_000);

afterAll(() => live?.cleanup());

describe('launchability through the live CLI against emulated AWS', () => {
  it('fails the three NodePools that cannot launch and passes their controls', () => {
    expect(live.stderr).toBe('');
    const verdicts = Object.fromEntries(
      (live.report?.findings ?? [])
        .filter((finding) => finding.checkId === 'nodepool-instance-types-offered')
        .map((finding) => [finding.resource.name, finding.status])
    );
    expect(verdicts).toEqual({
      bounded: 'pass',
      capped: 'fail',
      general: 'pass',
      graviton: 'pass',
      'graviton-x86-families': 'fail',
      'reserved-nightly': 'fail',
      'reserved-steady': 'pass',
    });
    const failing = (live.report?.findings ?? []).filter(
      (finding) => finding.status === 'fail' || finding.status === 'error'
    );
    expect(failing.map((finding) => finding.resource.name).sort()).toEqual([
      'capped',
      'graviton-x86-families',
      'reserved-nightly',
    ]);
  });

  it('reports what scan --world reports on the same world', () => {
    expect(live.exitCode).toBe(offline.code);
    expect(comparableFindings(live.report)).toEqual(comparableFindings(offline.report));
  });

  it('reads the instance types and their offerings once, one page each, and no request twice', () => {
    expect(live.operations['ec2:DescribeInstanceTypes']?.calls).toBe(1);
    expect(live.operations['ec2:DescribeInstanceTypeOfferings']?.calls).toBe(1);
    expect(live.totals.identical).toBe(0);
  });
});
