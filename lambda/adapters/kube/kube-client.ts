// A minimal Kubernetes API client over node:https with the cluster CA pinned (ARCHITECTURE.md:
// listing two resource kinds does not justify @kubernetes/client-node's bundle size).
import { Agent, request } from 'node:https';
import type { TLSSocket } from 'node:tls';
import type { z } from 'zod';
import { classifyNetworkError, KubeApiError, reasonForStatus } from './kube-errors.js';
import { ObjectListSchema, StatusSchema } from './schemas.js';

export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
export const DEFAULT_READ_TIMEOUT_MS = 20_000;
export const DEFAULT_PAGE_SIZE = 100;
/** A list page larger than this is refused rather than buffered. */
export const MAX_RESPONSE_BYTES = 32 * 1024 * 1024;
/** Bounds a server that keeps returning `continue` tokens. */
const MAX_PAGES = 1_000;

export interface KubeClientOptions {
  /** `https://…` from DescribeCluster. */
  readonly endpoint: string;
  /** PEM of the cluster CA; the only CA trusted for this endpoint. */
  readonly caPem: string;
  /** Bearer token source (EKS token, cached by the provider). */
  readonly token: () => Promise<string>;
  readonly connectTimeoutMs?: number;
  readonly readTimeoutMs?: number;
  readonly pageSize?: number;
}

export interface ListOptions {
  readonly labelSelector?: string;
}

export interface KubeClient {
  readonly endpoint: string;
  /** GET one object, parsed with `schema`. */
  get<T>(path: string, schema: z.ZodType<T>): Promise<T>;
  /** GET every item of a list, following `continue` tokens. Items are returned unparsed. */
  list(path: string, options?: ListOptions): Promise<unknown[]>;
  /** Closes kept-alive connections. */
  close(): void;
}

interface RawResponse {
  readonly status: number;
  readonly body: string;
}

function truncate(text: string, max = 300): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

export function createKubeClient(options: KubeClientOptions): KubeClient {
  const base = new URL(options.endpoint);
  if (base.protocol !== 'https:') {
    throw new TypeError(`cluster endpoint must be https, got ${options.endpoint}`);
  }
  const endpoint = base.origin;
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const readTimeoutMs = options.readTimeoutMs ?? DEFAULT_READ_TIMEOUT_MS;
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  // `ca` replaces Node's root store for this agent: only the cluster CA is trusted.
  const agent = new Agent({ ca: options.caPem, keepAlive: true, maxSockets: 4 });

  function fail(
    path: string,
    kind: KubeApiError['kind'],
    reason: KubeApiError['reason'],
    message: string,
    extra: { httpStatus?: number; cause?: unknown } = {}
  ): KubeApiError {
    return new KubeApiError(
      {
        endpoint,
        path,
        kind,
        reason,
        message,
        ...(extra.httpStatus === undefined ? {} : { httpStatus: extra.httpStatus }),
      },
      extra.cause === undefined ? undefined : { cause: extra.cause }
    );
  }

  async function send(path: string, query: URLSearchParams): Promise<RawResponse> {
    const token = await options.token();
    const search = query.toString();
    const fullPath = search === '' ? path : `${path}?${search}`;
    return new Promise<RawResponse>((resolve, reject) => {
      let settled = false;
      const settle = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(connectTimer);
        outcome();
      };
      const req = request({
        protocol: 'https:',
        hostname: base.hostname,
        port: base.port === '' ? 443 : Number(base.port),
        path: fullPath,
        method: 'GET',
        agent,
        rejectUnauthorized: true,
        headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
      });
      const connectTimer = setTimeout(() => {
        const message = `connecting to ${endpoint} timed out after ${connectTimeoutMs} ms`;
        settle(() => reject(fail(path, 'timeout', 'timeout', message)));
        req.destroy();
      }, connectTimeoutMs);
      req.on('socket', (socket: TLSSocket) => {
        if (socket.authorized) clearTimeout(connectTimer);
        else socket.once('secureConnect', () => clearTimeout(connectTimer));
      });
      // Idle timeout on the socket: a server that accepts but never answers.
      req.setTimeout(readTimeoutMs, () => {
        const message = `${endpoint}${path} did not answer within ${readTimeoutMs} ms`;
        settle(() => reject(fail(path, 'timeout', 'timeout', message)));
        req.destroy();
      });
      req.on('error', (error) => {
        const { kind, reason } = classifyNetworkError(error);
        const code = (error as { code?: string }).code ?? error.name;
        const message =
          kind === 'tls'
            ? `TLS verification of ${endpoint} failed (${code}): its certificate is not signed by the cluster CA from DescribeCluster`
            : `cannot reach ${endpoint} (${code}): ${error.message}`;
        settle(() => reject(fail(path, kind, reason, message, { cause: error })));
      });
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_RESPONSE_BYTES) {
            const message = `${endpoint}${path} returned more than ${MAX_RESPONSE_BYTES} bytes`;
            settle(() => reject(fail(path, 'malformed', 'invalid-response', message)));
            req.destroy();
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () =>
          settle(() =>
            resolve({
              status: res.statusCode ?? 0,
              body: Buffer.concat(chunks).toString('utf8'),
            })
          )
        );
        res.on('error', (error) => {
          const message = `reading the response of ${endpoint}${path} failed: ${error.message}`;
          settle(() => reject(fail(path, 'network', 'unreachable', message, { cause: error })));
        });
      });
      req.end();
    });
  }

  function httpFailure(path: string, response: RawResponse): KubeApiError {
    const status = StatusSchema.safeParse(safeJson(response.body));
    const detail =
      status.success && status.data.message ? `: ${truncate(status.data.message)}` : '';
    return fail(
      path,
      'http',
      reasonForStatus(response.status),
      `GET ${path} on ${endpoint} returned HTTP ${response.status}${detail}`,
      { httpStatus: response.status }
    );
  }

  async function getJson(path: string, query = new URLSearchParams()): Promise<unknown> {
    const response = await send(path, query);
    if (response.status < 200 || response.status >= 300) throw httpFailure(path, response);
    try {
      return JSON.parse(response.body) as unknown;
    } catch (error) {
      throw fail(
        path,
        'malformed',
        'invalid-response',
        `GET ${path} on ${endpoint} returned malformed JSON (${truncate(response.body, 80)})`,
        { cause: error }
      );
    }
  }

  function parseWith<T>(path: string, schema: z.ZodType<T>, value: unknown): T {
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data;
    const issue = parsed.error.issues[0];
    const where = issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'invalid';
    throw fail(
      path,
      'malformed',
      'invalid-response',
      `GET ${path} on ${endpoint} returned an unexpected shape (${where})`
    );
  }

  return {
    endpoint,
    close: () => agent.destroy(),
    async get(path, schema) {
      return parseWith(path, schema, await getJson(path));
    },
    async list(path, listOptions = {}) {
      const items: unknown[] = [];
      let token: string | undefined;
      let restarted = false;
      for (let page = 0; page < MAX_PAGES; page++) {
        const query = new URLSearchParams({ limit: String(pageSize) });
        if (listOptions.labelSelector) query.set('labelSelector', listOptions.labelSelector);
        if (token) query.set('continue', token);
        let list: ReturnType<typeof ObjectListSchema.parse>;
        try {
          list = parseWith(path, ObjectListSchema, await getJson(path, query));
        } catch (error) {
          // 410 Gone: the continue token expired mid-list; start over once.
          if (error instanceof KubeApiError && error.httpStatus === 410 && !restarted) {
            restarted = true;
            items.length = 0;
            token = undefined;
            continue;
          }
          throw error;
        }
        items.push(...list.items);
        token = list.metadata?.continue;
        if (!token) return items;
      }
      throw fail(
        path,
        'malformed',
        'invalid-response',
        `GET ${path} on ${endpoint} kept paginating past ${MAX_PAGES} pages`
      );
    },
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
