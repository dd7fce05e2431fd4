// A real HTTPS server for adapter tests, with a CA and certificate made by openssl in a temp dir.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import {
  createKubeClient,
  type KubeClient,
  type KubeClientOptions,
} from '../../../lambda/adapters/kube/kube-client.js';
import { KubeApiError } from '../../../lambda/adapters/kube/kube-errors.js';

export interface TestPki {
  readonly caPem: string;
  /** A second, unrelated CA: a client pinned to it must refuse the server. */
  readonly otherCaPem: string;
  readonly serverKeyPem: string;
  readonly serverCertPem: string;
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

function makeCa(dir: string, name: string): void {
  openssl(dir, [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.crt`,
    '-days',
    '2',
    '-subj',
    `/CN=${name}`,
  ]);
}

export function generatePki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'kube-pki-'));
  try {
    makeCa(dir, 'cluster-ca');
    makeCa(dir, 'other-ca');
    openssl(dir, [
      'req',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      'server.key',
      '-out',
      'server.csr',
      '-subj',
      '/CN=kube-apiserver',
    ]);
    writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
    openssl(dir, [
      'x509',
      '-req',
      '-in',
      'server.csr',
      '-CA',
      'cluster-ca.crt',
      '-CAkey',
      'cluster-ca.key',
      '-CAcreateserial',
      '-out',
      'server.crt',
      '-days',
      '2',
      '-extfile',
      'ext.cnf',
    ]);
    const read = (file: string) => readFileSync(join(dir, file), 'utf8');
    return {
      caPem: read('cluster-ca.crt'),
      otherCaPem: read('other-ca.crt'),
      serverKeyPem: read('server.key'),
      serverCertPem: read('server.crt'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export type Handler = (req: IncomingMessage, res: ServerResponse, url: URL) => void;

export interface TestApiServer {
  readonly endpoint: string;
  /** Every request seen, in order. */
  readonly requests: { url: URL; authorization?: string }[];
  handle(handler: Handler): void;
  close(): Promise<void>;
}

export async function startApiServer(pki: TestPki): Promise<TestApiServer> {
  let handler: Handler = (_req, res) => {
    res.writeHead(500).end();
  };
  const requests: TestApiServer['requests'] = [];
  const server: Server = createServer(
    { key: pki.serverKeyPem, cert: pki.serverCertPem },
    (req, res) => {
      const url = new URL(req.url ?? '/', 'https://127.0.0.1');
      requests.push({
        url,
        ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
      });
      handler(req, res, url);
    }
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `https://127.0.0.1:${port}`,
    requests,
    handle: (next) => {
      handler = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

export function statusBody(code: number, reason: string, message: string) {
  return { kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message };
}

/**
 * A real local API server for one test file (started once, its requests and clients reset after
 * each test) and a client factory pinned to its CA. `server` and `pki` exist from `beforeAll` on.
 */
export function useKubeApiServer(defaults: Partial<KubeClientOptions> = {}) {
  const state: { pki?: TestPki; server?: TestApiServer } = {};
  const clients: KubeClient[] = [];
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the test API server starts in beforeAll');
    return value;
  };
  beforeAll(async () => {
    state.pki = generatePki();
    state.server = await startApiServer(state.pki);
  });
  afterEach(() => {
    for (const created of clients.splice(0)) created.close();
    if (state.server) state.server.requests.length = 0;
  });
  afterAll(async () => {
    await state.server?.close();
  });
  return {
    get server(): TestApiServer {
      return started(state.server);
    },
    get pki(): TestPki {
      return started(state.pki);
    },
    client(overrides: Partial<KubeClientOptions> = {}): KubeClient {
      const created = createKubeClient({
        endpoint: started(state.server).endpoint,
        caPem: started(state.pki).caPem,
        token: async () => 'k8s-aws-v1.test',
        ...defaults,
        ...overrides,
      });
      clients.push(created);
      return created;
    },
  };
}

/** The KubeApiError a read failed with (the test fails when it did not fail so). */
export async function kubeFailureOf(promise: Promise<unknown>): Promise<KubeApiError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught
  );
  expect(error).toBeInstanceOf(KubeApiError);
  return error as KubeApiError;
}
