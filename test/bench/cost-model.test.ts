// The cost model's arithmetic on given per-scan figures (the bench measures them).
import { describe, expect, it } from 'vitest';
import type { ScanFootprint } from '../../bench/cold-start.js';
import { monthlyCost, PRICES } from '../../bench/cost-model.js';

const footprint = (nodeClasses: number, writes: number): ScanFootprint => ({
  cluster: `c${nodeClasses}`,
  nodeClasses,
  awsCalls: 10,
  dynamodbWrites: writes,
  dynamodbReads: 4,
  kmsRequests: 0,
  snsPublishes: 0,
  logBytes: 1000,
  emfSeries: [
    `OpenFindings{Cluster=c${nodeClasses},Severity=critical,service=s}`,
    `ScanDuration{Cluster=c${nodeClasses},service=s}`,
    'ClustersScanned{service=s}',
  ],
});

const inputs = {
  footprints: [footprint(1, 3), footprint(3, 7)],
  scanMsByNodeClasses: [
    { nodeClasses: 10, ms: 1000 },
    { nodeClasses: 50, ms: 2000 },
  ],
  dispatchMs: 100,
};
const fleet = { clusters: 10, nodeClassesPerCluster: 30, scheduleMinutes: 15 } as const;
const line = (model: ReturnType<typeof monthlyCost>, item: string) =>
  model.lines.find((entry) => entry.item === item)?.usd ?? Number.NaN;

describe('monthlyCost', () => {
  it('prices per-cluster series by cluster and account-wide series once', () => {
    // Act
    const account = monthlyCost({ ...fleet, metricsDetail: 'account' }, inputs);
    const perCluster = monthlyCost({ ...fleet, metricsDetail: 'cluster' }, inputs);
    // Assess: OpenFindings{critical}, ScanDuration, ClustersScanned.
    expect(line(account, 'CloudWatch custom metrics')).toBeCloseTo(3 * PRICES.customMetricPerMonth);
    expect(line(perCluster, 'CloudWatch custom metrics')).toBeCloseTo(
      (2 * 10 + 1) * PRICES.customMetricPerMonth
    );
    expect(perCluster.totalUsd).toBeGreaterThan(account.totalUsd);
  });

  it('scales measured per-scan figures to the fleet linearly in NodeClasses', () => {
    // Act
    const model = monthlyCost({ ...fleet, metricsDetail: 'account' }, inputs);
    // Assess: 2 writes a NodeClass + 1 → 61 a scan; 2,920 scans a cluster a month.
    expect(model.scansPerMonth).toBe(29_200);
    expect(line(model, 'DynamoDB writes (on-demand)')).toBeCloseTo(
      61 * 29_200 * PRICES.dynamodbPerWriteUnit
    );
    // 1.5 s a scan at 30 NodeClasses, 1 GB; dispatch 0.1 s at 0.25 GB, 2,920 times.
    expect(line(model, 'Lambda compute (arm64)')).toBeCloseTo(
      (29_200 * 1.5 + 2_920 * 0.1 * 0.25) * PRICES.lambdaArmPerGbSecond
    );
  });
});
