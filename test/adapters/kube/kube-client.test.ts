import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createEksTokenProvider } from '../../../lambda/adapters/aws/eks-token.js';
import { createKubeClient, type KubeClient } from '../../../lambda/adapters/kube/kube-client.js';
import { KubeApiError } from '../../../lambda/adapters/kube/kube-errors.js';
import { DeploymentSchema } from '../../../lambda/adapters/kube/schemas.js';
import {
  generatePki,
  sendJson,
  startApiServer,
  statusBody,
  type TestApiServer,
  type TestPki,
} from './tls-fixtures.js';

const NODECLASSES = '/apis/karpenter.k8s.aws/v1/ec2nodeclasses';

let pki: TestPki;
let server: TestApiServer;
const clients: KubeClient[] = [];

function client(overrides: Partial<Parameters<typeof createKubeClient>[0]> = {}): KubeClient {
  const created = createKubeClient({
    endpoint: server.endpoint,
    caPem: pki.caPem,
    token: async () => 'k8s-aws-v1.test',
    ...overrides,
  });
  clients.push(created);
  return created;
}

async function failureOf(promise: Promise<unknown>): Promise<KubeApiError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught
  );
  expect(error).toBeInstanceOf(KubeApiError);
  return error as KubeApiError;
}

beforeAll(async () => {
  pki = generatePki();
  server = await startApiServer(pki);
});

afterEach(() => {
  for (const created of clients.splice(0)) created.close();
  server.requests.length = 0;
});

afterAll(async () => {
  await server.close();
});

describe('kube-client', () => {
  it('trusts the pinned cluster CA and lists items', async () => {
    // Prepare
    server.handle((_req, res) => sendJson(res, 200, { items: [{ metadata: { name: 'a' } }] }));

    // Act
    const items = await client().list(NODECLASSES);

    // Assess
    expect(items).toEqual([{ metadata: { name: 'a' } }]);
  });

  it('refuses a server whose certificate is not signed by the pinned CA', async () => {
    // Prepare
    server.handle((_req, res) => sendJson(res, 200, { items: [] }));

    // Act
    const error = await failureOf(client({ caPem: pki.otherCaPem }).list(NODECLASSES));

    // Assess
    expect(error.kind).toBe('tls');
    expect(error.message).toContain('not signed by the cluster CA');
    expect(server.requests).toHaveLength(0);
  });

  it('follows continue tokens until the last page', async () => {
    // Prepare
    server.handle((_req, res, url) => {
      const token = url.searchParams.get('continue');
      if (token === null) sendJson(res, 200, { metadata: { continue: 'page-2' }, items: [1, 2] });
      else if (token === 'page-2')
        sendJson(res, 200, { metadata: { continue: 'page-3' }, items: [3] });
      else sendJson(res, 200, { metadata: {}, items: [4] });
    });

    // Act
    const items = await client({ pageSize: 2 }).list(NODECLASSES, {
      labelSelector: 'app.kubernetes.io/name=karpenter',
    });

    // Assess
    expect(items).toEqual([1, 2, 3, 4]);
    expect(server.requests.map(({ url }) => url.searchParams.get('continue'))).toEqual([
      null,
      'page-2',
      'page-3',
    ]);
    for (const { url } of server.requests) {
      expect(url.pathname).toBe(NODECLASSES);
      expect(url.searchParams.get('limit')).toBe('2');
      expect(url.searchParams.get('labelSelector')).toBe('app.kubernetes.io/name=karpenter');
    }
  });

  it('restarts a list once when its continue token expired (410)', async () => {
    // Prepare
    let calls = 0;
    server.handle((_req, res, url) => {
      calls += 1;
      if (url.searchParams.get('continue') === 'stale' && calls === 2) {
        sendJson(res, 410, statusBody(410, 'Expired', 'continue token expired'));
      } else if (url.searchParams.get('continue') === null && calls === 1) {
        sendJson(res, 200, { metadata: { continue: 'stale' }, items: ['old'] });
      } else sendJson(res, 200, { items: ['fresh'] });
    });

    // Act
    const items = await client().list(NODECLASSES);

    // Assess
    expect(items).toEqual(['fresh']);
  });

  it('sends the EKS token as a bearer token', async () => {
    // Prepare
    server.handle((_req, res) => sendJson(res, 200, { items: [] }));
    const tokens = createEksTokenProvider({
      region: 'us-west-2',
      credentials: async () => ({ accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' }),
      now: () => new Date('2026-11-01T00:00:00Z'),
    });

    // Act
    await client({ token: () => tokens.token('prod') }).list(NODECLASSES);

    // Assess
    const authorization = server.requests[0]?.authorization ?? '';
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
    server.handle((_req, res) =>
      sendJson(res, status, statusBody(status, 'Failure', `the server said ${status}`))
    );

    // Act
    const error = await failureOf(client().list(NODECLASSES));

    // Assess
    expect(error.kind).toBe('http');
    expect(error.httpStatus).toBe(status);
    expect(error.reason).toBe(reason);
    expect(error.message).toContain(`HTTP ${status}: the server said ${status}`);
    expect(error.source).toBe(`${server.endpoint}${NODECLASSES}`);
  });

  it('times out on a server that accepts the request but never answers', async () => {
    // Prepare
    server.handle(() => {
      // never answers
    });

    // Act
    const error = await failureOf(client({ readTimeoutMs: 200 }).list(NODECLASSES));

    // Assess
    expect(error.kind).toBe('timeout');
    expect(error.reason).toBe('timeout');
    expect(error.message).toContain(server.endpoint);
  });

  it('reports malformed JSON as an invalid response', async () => {
    // Prepare
    server.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"items": [');
    });

    // Act
    const error = await failureOf(client().list(NODECLASSES));

    // Assess
    expect(error.kind).toBe('malformed');
    expect(error.reason).toBe('invalid-response');
    expect(error.message).toContain('malformed JSON');
  });

  it('reports a list without items as an unexpected shape', async () => {
    // Prepare
    server.handle((_req, res) => sendJson(res, 200, { kind: 'Nope' }));

    // Act
    const error = await failureOf(client().list(NODECLASSES));

    // Assess
    expect(error.reason).toBe('invalid-response');
    expect(error.message).toContain('items');
  });

  it('parses a single object with the given schema', async () => {
    // Prepare
    server.handle((_req, res) =>
      sendJson(res, 200, {
        metadata: { name: 'karpenter', namespace: 'kube-system' },
        spec: { template: { spec: { containers: [{ name: 'controller', image: 'x:1.0.0' }] } } },
      })
    );

    // Act
    const deployment = await client().get(
      '/apis/apps/v1/namespaces/kube-system/deployments/karpenter',
      DeploymentSchema
    );

    // Assess
    expect(deployment.spec.template.spec.containers[0]?.image).toBe('x:1.0.0');
  });

  it('reports a connection refused as unreachable, naming the endpoint', async () => {
    // Prepare
    const closed = await startApiServer(pki);
    const endpoint = closed.endpoint;
    await closed.close();

    // Act
    const error = await failureOf(client({ endpoint }).list(NODECLASSES));

    // Assess
    expect(error.kind).toBe('network');
    expect(error.reason).toBe('unreachable');
    expect(error.message).toContain(endpoint);
  });

  it('refuses a non-https endpoint', () => {
    expect(() =>
      createKubeClient({ endpoint: 'http://127.0.0.1', caPem: '', token: async () => '' })
    ).toThrow(/https/);
  });
});
