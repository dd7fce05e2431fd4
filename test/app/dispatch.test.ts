import { describe, expect, it } from 'vitest';
import { dispatchScans } from '../../lambda/app/dispatch.js';
import type { ClusterScanRequest, ScanQueue } from '../../lambda/core/service-ports.js';
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
