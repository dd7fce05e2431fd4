import { describe, expect, it } from 'vitest';
import { type ClusterLister, discoverTargets, dispatchScans } from '../../lambda/app/dispatch.js';
import type { ClusterScanRequest, ScanQueue } from '../../lambda/core/ports/service.js';
import { PublishError } from '../../lambda/shared/errors.js';
import { silentLogger } from '../support/service-fakes.js';

function queue(failing: string[] = []): ScanQueue & { sent: ClusterScanRequest[] } {
  const sent: ClusterScanRequest[] = [];
  return {
    sent,
    async enqueue(requests) {
      sent.push(...requests);
      return { failed: failing.map((id) => ({ id, code: 'InternalError', message: 'x' })) };
    },
  };
}

const clock = () => new Date('2026-11-01T10:15:00Z');

describe('dispatchScans', () => {
  it('enqueues one request per cluster', async () => {
    const q = queue();
    await dispatchScans(
      { queue: q, logger: silentLogger, clock },
      [{ name: 'prod' }, { name: 'staging', region: 'us-east-2' }],
      'schedule'
    );
    expect(q.sent).toEqual([
      { version: 1, cluster: 'prod', trigger: 'schedule', requestedAt: '2026-11-01T10:15:00.000Z' },
      {
        version: 1,
        cluster: 'staging',
        region: 'us-east-2',
        trigger: 'schedule',
        requestedAt: '2026-11-01T10:15:00.000Z',
      },
    ]);
  });

  it('throws a PublishError naming the clusters that were not enqueued', async () => {
    const attempt = dispatchScans(
      { queue: queue(['staging']), logger: silentLogger, clock },
      [{ name: 'prod' }, { name: 'staging' }],
      'schedule'
    );
    await expect(attempt).rejects.toBeInstanceOf(PublishError);
    await expect(
      dispatchScans(
        { queue: queue(['staging']), logger: silentLogger, clock },
        [{ name: 'staging' }],
        'schedule'
      )
    ).rejects.toThrow(/staging \(InternalError\)/);
  });
});

describe('discoverTargets', () => {
  const lister = (
    byRegion: Record<string, string[] | Error>
  ): ClusterLister & { calls: unknown[] } => {
    const calls: unknown[] = [];
    return {
      calls,
      async listClusters(region, tagFilter) {
        calls.push({ region, tagFilter });
        const found = byRegion[region];
        if (found instanceof Error) throw found;
        return found ?? [];
      },
    };
  };

  it('returns the configured clusters only when discovery is off', async () => {
    const source = lister({ 'eu-west-1': ['other'] });
    const result = await discoverTargets(source, 'eu-west-1', [{ name: 'prod' }], undefined);
    expect(result).toEqual({ targets: [{ name: 'prod' }], failures: [] });
    expect(source.calls).toEqual([]);
  });

  it('adds discovered clusters per region with the tag filter, without duplicates', async () => {
    const source = lister({ 'eu-west-1': ['prod', 'batch'], 'us-east-2': ['edge'] });
    const result = await discoverTargets(
      source,
      'eu-west-1',
      [{ name: 'prod' }, { name: 'edge', region: 'us-east-2' }],
      { tagFilter: { 'karpenter.sh/discovery': '*' }, regions: ['eu-west-1', 'us-east-2'] }
    );
    expect(result.targets).toEqual([
      { name: 'prod' },
      { name: 'edge', region: 'us-east-2' },
      { name: 'batch' },
    ]);
    expect(source.calls).toEqual([
      { region: 'eu-west-1', tagFilter: { 'karpenter.sh/discovery': '*' } },
      { region: 'us-east-2', tagFilter: { 'karpenter.sh/discovery': '*' } },
    ]);
  });

  it('keeps same-named clusters of two regions as two targets', async () => {
    const source = lister({ 'us-west-2': ['prod'] });
    const result = await discoverTargets(source, 'eu-west-1', [{ name: 'prod' }], {
      tagFilter: {},
      regions: ['us-west-2'],
    });
    expect(result.targets).toEqual([{ name: 'prod' }, { name: 'prod', region: 'us-west-2' }]);
  });

  it('keeps what other regions found when one region cannot be listed', async () => {
    const source = lister({ 'eu-west-1': ['prod'], 'us-east-2': new Error('AccessDenied') });
    const result = await discoverTargets(source, 'eu-west-1', [], {
      tagFilter: {},
      regions: ['eu-west-1', 'us-east-2'],
    });
    expect(result.targets).toEqual([{ name: 'prod' }]);
    expect(result.failures).toEqual([{ region: 'us-east-2', message: 'AccessDenied' }]);
  });
});
