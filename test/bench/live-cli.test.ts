import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  againstFloor,
  comparableFindings,
  type LiveCliRun,
  runLiveCli,
  runWorldCli,
} from '../../bench/live-cli.js';

// The live CLI benchmark's harness on a 3 × 2 fleet (enough clusters to read IAM's directory): the real CLI as a child process against the
// local AWS and Kubernetes stand-ins must find what `scan --world` finds on the same world.
let live: LiveCliRun & { readonly worldFile: string; readonly cleanup: () => void };
let offline: Awaited<ReturnType<typeof runWorldCli>>;

beforeAll(async () => {
  live = await runLiveCli({ clusters: 3, nodeClassesPerCluster: 2 });
  offline = await runWorldCli(live.worldFile);
}, 120_000);

afterAll(() => live?.cleanup());

describe('bench/live-cli', () => {
  it('scans the fleet through the stand-ins with the CLI exit code of scan --world', () => {
    expect(live.stderr).toBe('');
    expect(live.exitCode).toBe(offline.code);
    expect(live.nodeClasses).toBe(6);
  });

  it('reports the findings scan --world reports on the same world', () => {
    const expected = comparableFindings(offline.report);
    expect(expected.length).toBeGreaterThan(0);
    expect(comparableFindings(live.report)).toEqual(expected);
    expect(live.findings).toBe(expected.length);
  });

  it('counts every command the CLI sends and finds no identical request', () => {
    expect(Object.keys(live.operations)).toEqual(
      expect.arrayContaining([
        'eks:DescribeCluster',
        'ec2:DescribeImages',
        'iam:SimulatePrincipalPolicy',
        'sts:GetCallerIdentity',
      ])
    );
    // One DescribeCluster per cluster: each command is counted once, whatever its retries.
    expect(live.operations['eks:DescribeCluster']?.calls).toBe(3);
    expect(live.totals.calls).toBe(
      Object.values(live.operations).reduce((sum, count) => sum + count.calls, 0)
    );
    expect(live.totals.attempts).toBe(live.totals.calls + live.totals.throttled);
    expect(live.totals.identical).toBe(0);
    expect(live.kubeRequests).toBeGreaterThanOrEqual(2);
  });

  it('sends the fleet’s simulation floor, no more, and reports it against the IAM wall-time floor', () => {
    const measured = againstFloor(live);
    expect(live.floor.calls).toBeGreaterThan(0);
    // The floor is computed from the world alone: the scanner must reach it, and cannot beat it
    // without merging contexts that docs/permission-semantics.md keeps apart.
    expect(measured.simulations).toBe(live.floor.calls);
    expect(measured.simulationsOverFloor).toBe(1);
    // (calls − the burst of 10) at 5 a second.
    expect(measured.iamWallFloorSeconds).toBe(Math.max(0, live.floor.calls - 10) / 5);
    // A single IAM budget (5/s, burst 10) queues the role and policy reads with them:
    // the account's directory, one page for the fleet's six roles, instead of one read each.
    expect(live.iamReadFloor).toBe(1);
    expect(measured.iamReads).toBe(live.iamReadFloor);
    expect(live.operations['iam:GetAccountAuthorizationDetails']?.calls).toBe(1);
    expect(live.operations['iam:GetRole']).toBeUndefined();
    expect(measured.iamBudgetFloorSeconds).toBe(
      Math.max(0, live.floor.calls + live.iamReadFloor - 10) / 5
    );
    expect(measured.simulationPhase?.first).toBeGreaterThan(0);
    expect(measured.simulationPhase?.last).toBeLessThanOrEqual(live.wallSeconds);
  });
});
