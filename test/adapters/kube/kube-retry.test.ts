// Retries of the Kubernetes client against a real local HTTPS server: transient failures are
// retried within the deadlines, others are not, and every wait is recorded instead of slept.
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createKubeClient } from '../../../lambda/adapters/kube/kube-client.js';
import { retryAfterMs } from '../../../lambda/adapters/kube/kube-errors.js';
import { deadlineAfter, withScanDeadline } from '../../../lambda/shared/deadline.js';
import { kubeFailureOf, sendJson, statusBody, useKubeApiServer } from './tls-fixtures.js';

const NODECLASSES = '/apis/karpenter.k8s.aws/v1/ec2nodeclasses';

const api = useKubeApiServer({
  // Waits are recorded and skipped; the jitter is its midpoint.
  sleep: async (milliseconds) => {
    waits.push(milliseconds);
  },
  random: () => 0.5,
});

let waits: number[] = [];

/** Answers each request with the next of `answers` (status, headers), then 200 with one item. */
function answerInTurn(answers: readonly [number, Record<string, string>?][]): void {
  let next = 0;
  api.server.handle((_req, res) => {
    const answer = answers[next++];
    if (answer === undefined) {
      sendJson(res, 200, { items: [{ metadata: { name: 'a' } }] });
      return;
    }
    const [status, headers = {}] = answer;
    res
      .writeHead(status, { 'content-type': 'application/json', ...headers })
      .end(JSON.stringify(statusBody(status, 'Failure', `said ${status}`)));
  });
}

afterEach(() => {
  waits = [];
});

describe('kube-client retries', () => {
  it('reads a list whose first answer was HTTP 500', async () => {
    // Prepare
    answerInTurn([[500]]);

    // Act
    const items = await api.client().list(NODECLASSES);

    // Assess: one backoff (base 250 ms, half of it jitter) between the two requests
    expect(items).toEqual([{ metadata: { name: 'a' } }]);
    expect(api.server.requests).toHaveLength(2);
    expect(waits).toEqual([187.5]);
  });

  it('waits the Retry-After of a 429 before the next attempt', async () => {
    // Prepare
    answerInTurn([[429, { 'retry-after': '1' }]]);

    // Act
    const items = await api.client().list(NODECLASSES);

    // Assess
    expect(items).toHaveLength(1);
    expect(waits).toEqual([1_000]);
  });

  it('really sleeps a short Retry-After when no sleep is injected', async () => {
    // Prepare
    answerInTurn([[503, { 'retry-after': '1' }]]);
    const started = Date.now();

    const realSleep = createKubeClient({
      endpoint: api.server.endpoint,
      caPem: api.pki.caPem,
      token: async () => 'k8s-aws-v1.test',
    });

    // Act
    const items = await realSleep.list(NODECLASSES).finally(() => realSleep.close());

    // Assess
    expect(items).toHaveLength(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('reports a server that stays unavailable after every attempt, saying how many', async () => {
    // Prepare
    answerInTurn([[503], [503], [503], [503], [503]]);

    // Act
    const error = await kubeFailureOf(api.client().list(NODECLASSES));

    // Assess: the default four attempts, backoff doubling between them
    expect(api.server.requests).toHaveLength(4);
    expect(waits).toEqual([187.5, 375, 750]);
    expect(error.reason).toBe('unreachable');
    expect(error.httpStatus).toBe(503);
    expect(error.message).toContain('HTTP 503: said 503');
    expect(error.message).toContain('(after 4 attempts)');
  });

  it.each([400, 401, 403, 404, 409])('does not retry HTTP %i', async (status) => {
    // Prepare
    answerInTurn([[status]]);

    // Act
    const error = await kubeFailureOf(api.client().list(NODECLASSES));

    // Assess
    expect(api.server.requests).toHaveLength(1);
    expect(waits).toEqual([]);
    expect(error.httpStatus).toBe(status);
    expect(error.message).not.toContain('attempts');
  });

  it('retries a page of a list with its continue token', async () => {
    // Prepare: the second page fails once with 502
    let failed = false;
    api.server.handle((_req, res, url) => {
      const token = url.searchParams.get('continue');
      if (token === null) sendJson(res, 200, { metadata: { continue: 'page-2' }, items: [1] });
      else if (!failed) {
        failed = true;
        sendJson(res, 502, statusBody(502, 'BadGateway', 'gateway'));
      } else sendJson(res, 200, { metadata: {}, items: [2] });
    });

    // Act
    const items = await api.client().list(NODECLASSES);

    // Assess
    expect(items).toEqual([1, 2]);
    expect(api.server.requests.map(({ url }) => url.searchParams.get('continue'))).toEqual([
      null,
      'page-2',
      'page-2',
    ]);
  });

  it('retries a connection the server drops (socket hang up)', async () => {
    // Prepare
    let dropped = false;
    api.server.handle((req, res) => {
      if (!dropped) {
        dropped = true;
        req.socket.destroy();
        return;
      }
      sendJson(res, 200, { items: ['ok'] });
    });

    // Act
    const items = await api.client().list(NODECLASSES);

    // Assess
    expect(items).toEqual(['ok']);
    expect(waits).toHaveLength(1);
  });

  it('ends the read when a Retry-After would pass the request deadline, naming it', async () => {
    // Prepare
    answerInTurn([[429, { 'retry-after': '10' }]]);

    // Act
    const error = await kubeFailureOf(
      api
        .client({ limits: { requestDeadlineMs: 2_000 } })
        .get('/apis/apps/v1/namespaces/kube-system/deployments/karpenter', z.unknown())
    );

    // Assess
    expect(api.server.requests).toHaveLength(1);
    expect(waits).toEqual([]);
    expect(error.reason).toBe('throttled');
    expect(error.message).toContain('Retry-After of 10 s ends past the deadline');
    expect(error.message).toContain('kube limit requestDeadlineMs');
  });

  it('ends the read as throttled when a Retry-After is longer than maxRetryAfterMs, naming both', async () => {
    // Prepare
    answerInTurn([[503, { 'retry-after': '3600' }]]);

    // Act: the request deadline would allow the wait; the cap does not.
    const error = await kubeFailureOf(
      api
        .client({
          retry: { maxRetryAfterMs: 5_000 },
          limits: { requestDeadlineMs: 7_200_000, listDeadlineMs: 7_200_000 },
        })
        .list(NODECLASSES)
    );

    // Assess: no early retry
    expect(api.server.requests).toHaveLength(1);
    expect(waits).toEqual([]);
    expect(error.reason).toBe('throttled');
    expect(error.httpStatus).toBe(503);
    expect(error.message).toContain(
      'Retry-After of 3600 s is longer than the 5 s the scanner waits (NODECLASS_SCAN_KUBE_MAX_RETRY_AFTER_MS)'
    );
  });

  it('waits out a Retry-After of exactly maxRetryAfterMs', async () => {
    // Prepare
    answerInTurn([[429, { 'retry-after': '5' }]]);

    // Act
    const items = await api
      .client({
        retry: { maxRetryAfterMs: 5_000 },
        limits: { requestDeadlineMs: 60_000 },
      })
      .list(NODECLASSES);

    // Assess
    expect(items).toHaveLength(1);
    expect(waits).toEqual([5_000]);
  });

  it('stops at the scan deadline, however long the request deadline', async () => {
    // Prepare
    api.server.handle(() => {
      // never answers
    });
    const deadline = deadlineAfter(300, 'the scan deadline of 300 ms (test)');

    // Act
    const started = Date.now();
    const error = await kubeFailureOf(
      withScanDeadline(deadline, () => api.client({ readTimeoutMs: 10_000 }).list(NODECLASSES))
    );

    // Assess
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(error.reason).toBe('timeout');
    expect(error.message).toContain('abandoned at the scan deadline of 300 ms (test)');
  });
});

describe('retryAfterMs', () => {
  it('reads delay-seconds and HTTP dates, and nothing else', () => {
    const now = Date.parse('2026-11-01T12:00:00Z');
    expect(retryAfterMs('2', now)).toBe(2_000);
    expect(retryAfterMs('Sun, 01 Nov 2026 12:00:05 GMT', now)).toBe(5_000);
    expect(retryAfterMs('Sun, 01 Nov 2026 11:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs('soon', now)).toBeUndefined();
    expect(retryAfterMs(undefined, now)).toBeUndefined();
  });
});
