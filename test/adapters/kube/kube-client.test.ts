import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { createEksTokenProvider } from '../../../lambda/adapters/aws/eks-token.js';
import { createKubeClient } from '../../../lambda/adapters/kube/kube-client.js';
import { DeploymentSchema } from '../../../lambda/adapters/kube/schemas.js';
import {
  kubeFailureOf,
  sendJson,
  startApiServer,
  statusBody,
  useKubeApiServer,
} from './tls-fixtures.js';

const NODECLASSES = '/apis/karpenter.k8s.aws/v1/ec2nodeclasses';

const api = useKubeApiServer();

describe('kube-client', () => {
  it('trusts the pinned cluster CA and lists items', async () => {
    // Prepare
    api.server.handle((_req, res) => sendJson(res, 200, { items: [{ metadata: { name: 'a' } }] }));

    // Act
    const items = await api.client().list(NODECLASSES);

    // Assess
    expect(items).toEqual([{ metadata: { name: 'a' } }]);
  });

  it('refuses a server whose certificate is not signed by the pinned CA', async () => {
    // Prepare
    api.server.handle((_req, res) => sendJson(res, 200, { items: [] }));

    // Act
    const error = await kubeFailureOf(api.client({ caPem: api.pki.otherCaPem }).list(NODECLASSES));

    // Assess
    expect(error.kind).toBe('tls');
    expect(error.message).toContain('not signed by the cluster CA');
    expect(api.server.requests).toHaveLength(0);
  });

  it('follows continue tokens until the last page', async () => {
    // Prepare
    api.server.handle((_req, res, url) => {
      const token = url.searchParams.get('continue');
      if (token === null) sendJson(res, 200, { metadata: { continue: 'page-2' }, items: [1, 2] });
      else if (token === 'page-2')
        sendJson(res, 200, { metadata: { continue: 'page-3' }, items: [3] });
      else sendJson(res, 200, { metadata: {}, items: [4] });
    });

    // Act
    const items = await api.client({ pageSize: 2 }).list(NODECLASSES, {
      labelSelector: 'app.kubernetes.io/name=karpenter',
    });

    // Assess
    expect(items).toEqual([1, 2, 3, 4]);
    expect(api.server.requests.map(({ url }) => url.searchParams.get('continue'))).toEqual([
      null,
      'page-2',
      'page-3',
    ]);
    for (const { url } of api.server.requests) {
      expect(url.pathname).toBe(NODECLASSES);
      expect(url.searchParams.get('limit')).toBe('2');
      expect(url.searchParams.get('labelSelector')).toBe('app.kubernetes.io/name=karpenter');
    }
  });

  it('restarts a list once when its continue token expired (410)', async () => {
    // Prepare
    let calls = 0;
    api.server.handle((_req, res, url) => {
      calls += 1;
      if (url.searchParams.get('continue') === 'stale' && calls === 2) {
        sendJson(res, 410, statusBody(410, 'Expired', 'continue token expired'));
      } else if (url.searchParams.get('continue') === null && calls === 1) {
        sendJson(res, 200, { metadata: { continue: 'stale' }, items: ['old'] });
      } else sendJson(res, 200, { items: ['fresh'] });
    });

    // Act
    const items = await api.client().list(NODECLASSES);

    // Assess
    expect(items).toEqual(['fresh']);
  });

  it('sends the EKS token as a bearer token', async () => {
    // Prepare
    api.server.handle((_req, res) => sendJson(res, 200, { items: [] }));
    const tokens = createEksTokenProvider({
      region: 'us-west-2',
      credentials: async () => ({ accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' }),
      now: () => new Date('2026-11-01T00:00:00Z'),
    });

    // Act
    await api.client({ token: () => tokens.token('prod') }).list(NODECLASSES);

    // Assess
    const authorization = api.server.requests[0]?.authorization ?? '';
    expect(authorization.startsWith('Bearer k8s-aws-v1.')).toBe(true);
    const url = new URL(
      Buffer.from(authorization.slice('Bearer k8s-aws-v1.'.length), 'base64url').toString('utf8')
    );
    expect([...url.searchParams.keys()].sort()).toEqual(
      [
        'Action',
        'Version',
        'X-Amz-Algorithm',
        'X-Amz-Credential',
        'X-Amz-Date',
        'X-Amz-Expires',
        'X-Amz-Signature',
        'X-Amz-SignedHeaders',
      ].sort()
    );
    expect(url.searchParams.get('X-Amz-Expires')).toBe('60');
    expect(url.searchParams.get('X-Amz-SignedHeaders')).toBe('host;x-k8s-aws-id');
    expect(url.host).toBe('sts.us-west-2.amazonaws.com');
  });

  it.each([
    [401, 'access-denied'],
    [403, 'access-denied'],
    [404, 'not-found'],
    [429, 'throttled'],
    [500, 'unreachable'],
  ] as const)('classifies HTTP %i as %s and keeps the server message', async (status, reason) => {
    // Prepare
    api.server.handle((_req, res) =>
      sendJson(res, status, statusBody(status, 'Failure', `the server said ${status}`))
    );

    // Act
    const error = await kubeFailureOf(api.client().list(NODECLASSES));

    // Assess
    expect(error.kind).toBe('http');
    expect(error.httpStatus).toBe(status);
    expect(error.reason).toBe(reason);
    expect(error.message).toContain(`HTTP ${status}: the server said ${status}`);
    expect(error.source).toBe(`${api.server.endpoint}${NODECLASSES}`);
  });

  it('times out on a server that accepts the request but never answers', async () => {
    // Prepare
    api.server.handle(() => {
      // never answers
    });

    // Act
    const error = await kubeFailureOf(api.client({ readTimeoutMs: 200 }).list(NODECLASSES));

    // Assess
    expect(error.kind).toBe('timeout');
    expect(error.reason).toBe('timeout');
    expect(error.message).toContain(api.server.endpoint);
  });

  it('reports malformed JSON as an invalid response', async () => {
    // Prepare
    api.server.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"items": [');
    });

    // Act
    const error = await kubeFailureOf(api.client().list(NODECLASSES));

    // Assess
    expect(error.kind).toBe('malformed');
    expect(error.reason).toBe('invalid-response');
    expect(error.message).toContain('malformed JSON');
  });

  it('reports a list without items as an unexpected shape', async () => {
    // Prepare
    api.server.handle((_req, res) => sendJson(res, 200, { kind: 'Nope' }));

    // Act
    const error = await kubeFailureOf(api.client().list(NODECLASSES));

    // Assess
    expect(error.reason).toBe('invalid-response');
    expect(error.message).toContain('items');
  });

  it('parses a single object with the given schema', async () => {
    // Prepare
    api.server.handle((_req, res) =>
      sendJson(res, 200, {
        metadata: { name: 'karpenter', namespace: 'kube-system' },
        spec: { template: { spec: { containers: [{ name: 'controller', image: 'x:1.0.0' }] } } },
      })
    );

    // Act
    const deployment = await api
      .client()
      .get('/apis/apps/v1/namespaces/kube-system/deployments/karpenter', DeploymentSchema);

    // Assess
    expect(deployment.spec.template.spec.containers[0]?.image).toBe('x:1.0.0');
  });

  it('reports a connection refused as unreachable, naming the endpoint', async () => {
    // Prepare
    const closed = await startApiServer(api.pki);
    const endpoint = closed.endpoint;
    await closed.close();

    // Act
    const error = await kubeFailureOf(api.client({ endpoint }).list(NODECLASSES));

    // Assess
    expect(error.kind).toBe('network');
    expect(error.reason).toBe('unreachable');
    expect(error.message).toContain(endpoint);
  });

  it('reports a server that echoes the Authorization header without the token', async () => {
    // Prepare
    const token = `k8s-aws-v1.${Buffer.from('https://sts.amazonaws.com/?X-Amz-Signature=ff').toString('base64url')}`;
    api.server.handle((req, res) =>
      sendJson(res, 401, statusBody(401, 'Unauthorized', `bad ${req.headers.authorization}`))
    );

    // Act
    const error = await kubeFailureOf(api.client({ token: async () => token }).list(NODECLASSES));

    // Assess
    expect(api.server.requests[0]?.authorization).toBe(`Bearer ${token}`);
    expect(error.message).toContain('HTTP 401: bad Bearer [redacted]');
    expect(error.message).not.toContain('k8s-aws-v1.');
  });

  it('scrubs an echoed token of any format from a malformed body excerpt', async () => {
    // Prepare
    api.server.handle((req, res) => {
      res.writeHead(200).end(`echo ${req.headers.authorization}`);
    });

    // Act
    const error = await kubeFailureOf(
      api.client({ token: async () => 'opaque-1234' }).list(NODECLASSES)
    );

    // Assess
    expect(error.message).toContain('malformed JSON (echo Bearer [redacted])');
    expect(error.message).not.toContain('opaque-1234');
  });

  it('refuses a non-https endpoint', () => {
    expect(() =>
      createKubeClient({ endpoint: 'http://127.0.0.1', caPem: '', token: async () => '' })
    ).toThrow(/https/);
  });
});

describe('kube-client budgets', () => {
  /** A list page whose `continue` never ends, padded to `bytes`. */
  function endlessPage(res: ServerResponse, url: URL, bytes: number): void {
    const page = Number(url.searchParams.get('continue') ?? '0') + 1;
    sendJson(res, 200, {
      metadata: { continue: String(page) },
      items: [{ metadata: { name: `n${page}` }, padding: 'x'.repeat(bytes) }],
    });
  }

  it('abandons a server that drips one byte every 200 ms at the request deadline', async () => {
    // Prepare: the idle timer never fires, only the overall deadline can end it
    api.server.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const drip = setInterval(() => res.write(' '), 200);
      res.on('close', () => clearInterval(drip));
    });

    // Act
    const error = await kubeFailureOf(
      api.client({ readTimeoutMs: 5_000, limits: { requestDeadlineMs: 1_000 } }).list(NODECLASSES)
    );

    // Assess
    expect(error.kind).toBe('timeout');
    expect(error.reason).toBe('timeout');
    expect(error.message).toContain('did not finish within 1000 ms (kube limit requestDeadlineMs)');
  }, 15_000);

  it('applies the request deadline to single objects too', async () => {
    // Prepare
    api.server.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const drip = setInterval(() => res.write(' '), 200);
      res.on('close', () => clearInterval(drip));
    });

    // Act
    const error = await kubeFailureOf(
      api.client({ limits: { requestDeadlineMs: 600 } }).get('/apis/apps/v1/x', DeploymentSchema)
    );

    // Assess
    expect(error.kind).toBe('timeout');
    expect(error.message).toContain('kube limit requestDeadlineMs');
  }, 15_000);

  it('ends a list whose pages are each quick but never stop at the list deadline', async () => {
    // Prepare
    api.server.handle((_req, res, url) => {
      setTimeout(() => endlessPage(res, url, 10), 100);
    });

    // Act
    const error = await kubeFailureOf(
      api.client({ limits: { listDeadlineMs: 700 } }).list(NODECLASSES)
    );

    // Assess
    expect(error.kind).toBe('timeout');
    expect(error.message).toContain('all pages together (kube limit listDeadlineMs)');
    expect(api.server.requests.length).toBeGreaterThan(1);
  }, 15_000);

  it('stops an endless list of large pages at the list byte budget', async () => {
    // Prepare
    api.server.handle((_req, res, url) => endlessPage(res, url, 256 * 1024));

    // Act
    const error = await kubeFailureOf(
      api.client({ limits: { maxListBytes: 1024 * 1024 } }).list(NODECLASSES)
    );

    // Assess
    expect(error.kind).toBe('malformed');
    expect(error.reason).toBe('invalid-response');
    expect(error.message).toMatch(
      /read more than 1048576 bytes in 4 page\(s\) \(kube limit maxListBytes\)/
    );
    expect(api.server.requests).toHaveLength(4);
  }, 15_000);

  it('refuses one response larger than the response cap', async () => {
    // Prepare
    api.server.handle((_req, res) => sendJson(res, 200, { items: ['x'.repeat(2 * 1024 * 1024)] }));

    // Act
    const error = await kubeFailureOf(
      api.client({ limits: { maxResponseBytes: 1024 * 1024 } }).list(NODECLASSES)
    );

    // Assess
    expect(error.reason).toBe('invalid-response');
    expect(error.message).toContain(
      'returned more than 1048576 bytes (kube limit maxResponseBytes)'
    );
  }, 15_000);

  it('stops following continue tokens at the page cap', async () => {
    // Prepare
    api.server.handle((_req, res, url) => endlessPage(res, url, 10));

    // Act
    const error = await kubeFailureOf(
      api.client({ limits: { maxListPages: 5 } }).list(NODECLASSES)
    );

    // Assess
    expect(error.reason).toBe('invalid-response');
    expect(error.message).toContain('kept paginating past 5 pages (kube limit maxListPages)');
    expect(api.server.requests).toHaveLength(5);
  }, 15_000);

  it('lists within every budget when the server behaves', async () => {
    // Prepare
    api.server.handle((_req, res, url) => {
      const page = Number(url.searchParams.get('continue') ?? '0') + 1;
      sendJson(res, 200, {
        metadata: page < 3 ? { continue: String(page) } : {},
        items: [{ metadata: { name: `n${page}` } }],
      });
    });

    // Act
    const items = await api
      .client({
        limits: { maxListPages: 3, maxListBytes: 64 * 1024, listDeadlineMs: 10_000 },
      })
      .list(NODECLASSES);

    // Assess
    expect(items).toHaveLength(3);
  });
});
