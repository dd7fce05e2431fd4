// A minimal Kubernetes API client over node:https with the cluster CA pinned (listing a few
// resource kinds does not justify @kubernetes/client-node's bundle size). The API server is not
// trusted to be well behaved: every request and every list has a deadline and a byte budget, so a
// slow or endless server costs one cluster's read, never the process.
import { Agent, request } from 'node:https';
import type { TLSSocket } from 'node:tls';
import type { z } from 'zod';
import { REDACTED, redactSecrets } from '../../core/redact.js';
import { currentScanDeadline } from '../../shared/deadline.js';
import {
  classifyNetworkError,
  isTransientNetworkError,
  isTransientStatus,
  KubeApiError,
  reasonForStatus,
  retryAfterMs,
} from './kube-errors.js';
import { ObjectListSchema, StatusSchema } from './schemas.js';

/** Connect and read (idle) timeouts of one request. */
export interface KubeTimeouts {
  readonly connectTimeoutMs: number;
  readonly readTimeoutMs: number;
}

export const DEFAULT_KUBE_TIMEOUTS: KubeTimeouts = {
  connectTimeoutMs: 5_000,
  readTimeoutMs: 20_000,
};

/** The environment variable for each timeout (the CLI and the Lambdas read them). */
export const KUBE_TIMEOUT_ENV: { readonly [Key in keyof KubeTimeouts]: string } = {
  connectTimeoutMs: 'NODECLASS_SCAN_KUBE_CONNECT_TIMEOUT_MS',
  readTimeoutMs: 'NODECLASS_SCAN_KUBE_READ_TIMEOUT_MS',
};
const DEFAULT_PAGE_SIZE = 100;

/** Budgets that bound what one API server can cost; each breach fails the read with a reason. */
export interface KubeLimits {
  /** Whole time of one request, first byte sent to last byte read (the read timeout is idle time). */
  readonly requestDeadlineMs: number;
  /** Whole time of one list, all its pages together. */
  readonly listDeadlineMs: number;
  /** Body bytes of one response. */
  readonly maxResponseBytes: number;
  /** Body bytes of one list, all its pages together. */
  readonly maxListBytes: number;
  /** Pages of one list (`continue` tokens followed). */
  readonly maxListPages: number;
}

const MIB = 1024 * 1024;

/** Far above what real clusters need (a page of 100 NodeClasses is well under 1 MiB). */
export const DEFAULT_KUBE_LIMITS: KubeLimits = {
  requestDeadlineMs: 30_000,
  listDeadlineMs: 60_000,
  // Parsed JSON costs several times its bytes, and up to four clusters are read at once: these
  // keep one hostile server well inside a 512 MB Lambda, far above real NodeClass lists.
  maxResponseBytes: 4 * MIB,
  maxListBytes: 16 * MIB,
  maxListPages: 1_000,
};

/** The CLI's environment variable for each limit. */
export const KUBE_LIMIT_ENV: { readonly [Key in keyof KubeLimits]: string } = {
  requestDeadlineMs: 'NODECLASS_SCAN_KUBE_REQUEST_DEADLINE_MS',
  listDeadlineMs: 'NODECLASS_SCAN_KUBE_LIST_DEADLINE_MS',
  maxResponseBytes: 'NODECLASS_SCAN_KUBE_MAX_RESPONSE_BYTES',
  maxListBytes: 'NODECLASS_SCAN_KUBE_MAX_LIST_BYTES',
  maxListPages: 'NODECLASS_SCAN_KUBE_MAX_LIST_PAGES',
};

/**
 * Retries of idempotent GETs (every read this client makes) on 429, 5xx and connection failures,
 * within the request or list deadline: one transient fault must not become a verdict.
 */
export interface KubeRetryPolicy {
  /** Attempts of one request, the first included. */
  readonly maxAttempts: number;
  /** First backoff; doubled per retry, with jitter, up to `maxDelayMs`. */
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  /** The longest `Retry-After` waited out; a longer one ends the read as throttled. */
  readonly maxRetryAfterMs: number;
}

export const DEFAULT_KUBE_RETRY: KubeRetryPolicy = {
  maxAttempts: 4,
  baseDelayMs: 250,
  maxDelayMs: 4_000,
  maxRetryAfterMs: 20_000,
};

/** The environment variable for each retry setting (the CLI and the Lambdas read them). */
export const KUBE_RETRY_ENV: { readonly [Key in keyof KubeRetryPolicy]: string } = {
  maxAttempts: 'NODECLASS_SCAN_KUBE_MAX_ATTEMPTS',
  baseDelayMs: 'NODECLASS_SCAN_KUBE_RETRY_BASE_DELAY_MS',
  maxDelayMs: 'NODECLASS_SCAN_KUBE_RETRY_MAX_DELAY_MS',
  maxRetryAfterMs: 'NODECLASS_SCAN_KUBE_MAX_RETRY_AFTER_MS',
};

/** `20 s` for whole seconds, `1500 ms` otherwise. */
function durationText(milliseconds: number): string {
  return milliseconds % 1000 === 0 ? `${milliseconds / 1000} s` : `${milliseconds} ms`;
}

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
  /** Overrides of `DEFAULT_KUBE_LIMITS`. */
  readonly limits?: Partial<KubeLimits>;
  /** Overrides of `DEFAULT_KUBE_RETRY`. */
  readonly retry?: Partial<KubeRetryPolicy>;
  /** Waits between attempts (tests inject a recorder). */
  readonly sleep?: (milliseconds: number) => Promise<void>;
  /** In [0, 1): the backoff's jitter. */
  readonly random?: () => number;
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
  readonly bytes: number;
  readonly retryAfter?: string;
}

/** What one request may spend, and how to say it ran out (which limit, for whom). */
interface RequestBudget {
  /** `Date.now()` value past which the request is abandoned. */
  readonly deadlineAt: number;
  readonly deadlineMessage: () => string;
  readonly maxBytes: number;
  readonly bytesMessage: () => string;
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
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_KUBE_TIMEOUTS.connectTimeoutMs;
  const readTimeoutMs = options.readTimeoutMs ?? DEFAULT_KUBE_TIMEOUTS.readTimeoutMs;
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  const limits: KubeLimits = { ...DEFAULT_KUBE_LIMITS, ...options.limits };
  const retry: KubeRetryPolicy = { ...DEFAULT_KUBE_RETRY, ...options.retry };
  const sleep =
    options.sleep ??
    ((milliseconds: number) => new Promise<void>((resolve) => setTimeout(resolve, milliseconds)));
  const random = options.random ?? Math.random;
  // Failures another attempt may not repeat (throttling, 5xx, a dropped or idle connection).
  const transient = new WeakSet<KubeApiError>();
  // The last token sent, so an echo of it is scrubbed even when it is not an EKS token.
  let lastToken: string | undefined;
  // `ca` replaces Node's root store for this agent: only the cluster CA is trusted.
  const agent = new Agent({ ca: options.caPem, keepAlive: true, maxSockets: 4 });

  /** Server text made safe to show: bounded, then without credentials. */
  function scrub(text: string, max = 4_096): string {
    let clean = redactSecrets(text.length > max ? text.slice(0, max) : text);
    if (lastToken !== undefined && lastToken.length >= 8) {
      clean = clean.split(lastToken).join(REDACTED);
    }
    return clean;
  }

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
        message: scrub(message, Number.POSITIVE_INFINITY),
        ...(extra.httpStatus === undefined ? {} : { httpStatus: extra.httpStatus }),
      },
      extra.cause === undefined ? undefined : { cause: extra.cause }
    );
  }

  function requestBudget(path: string): RequestBudget {
    return {
      deadlineAt: Date.now() + limits.requestDeadlineMs,
      deadlineMessage: () =>
        `GET ${path} on ${endpoint} did not finish within ${limits.requestDeadlineMs} ms (kube limit requestDeadlineMs)`,
      maxBytes: limits.maxResponseBytes,
      bytesMessage: () =>
        `GET ${path} on ${endpoint} returned more than ${limits.maxResponseBytes} bytes (kube limit maxResponseBytes)`,
    };
  }

  async function send(
    path: string,
    query: URLSearchParams,
    budget: RequestBudget
  ): Promise<RawResponse> {
    if (Date.now() >= budget.deadlineAt) {
      throw fail(path, 'timeout', 'timeout', budget.deadlineMessage());
    }
    const token = await options.token();
    lastToken = token;
    const search = query.toString();
    const fullPath = search === '' ? path : `${path}?${search}`;
    return new Promise<RawResponse>((resolve, reject) => {
      let settled = false;
      const settle = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(connectTimer);
        clearTimeout(deadlineTimer);
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
        settle(() => reject(transientFailure(fail(path, 'timeout', 'timeout', message))));
        req.destroy();
      }, connectTimeoutMs);
      // Overall deadline: unlike the idle timeout, a server dripping bytes cannot extend it.
      const deadlineTimer = setTimeout(
        () => {
          settle(() => reject(fail(path, 'timeout', 'timeout', budget.deadlineMessage())));
          req.destroy();
        },
        Math.max(0, budget.deadlineAt - Date.now())
      );
      req.on('socket', (socket: TLSSocket) => {
        if (socket.authorized) clearTimeout(connectTimer);
        else socket.once('secureConnect', () => clearTimeout(connectTimer));
      });
      // Idle timeout on the socket: a server that accepts but never answers.
      req.setTimeout(readTimeoutMs, () => {
        const message = `${endpoint}${path} did not answer within ${readTimeoutMs} ms`;
        settle(() => reject(transientFailure(fail(path, 'timeout', 'timeout', message))));
        req.destroy();
      });
      req.on('error', (error) => {
        const { kind, reason } = classifyNetworkError(error);
        const code = (error as { code?: string }).code ?? error.name;
        const message =
          kind === 'tls'
            ? `TLS verification of ${endpoint} failed (${code}): its certificate is not signed by the cluster CA from DescribeCluster`
            : `cannot reach ${endpoint} (${code}): ${error.message}`;
        const failure = fail(path, kind, reason, message, { cause: error });
        settle(() => reject(isTransientNetworkError(error) ? transientFailure(failure) : failure));
      });
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          if (settled) return;
          size += chunk.length;
          if (size > budget.maxBytes) {
            chunks.length = 0;
            settle(() =>
              reject(fail(path, 'malformed', 'invalid-response', budget.bytesMessage()))
            );
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
              bytes: size,
              ...(typeof res.headers['retry-after'] === 'string'
                ? { retryAfter: res.headers['retry-after'] }
                : {}),
            })
          )
        );
        res.on('error', (error) => {
          const message = `reading the response of ${endpoint}${path} failed: ${error.message}`;
          const failure = fail(path, 'network', 'unreachable', message, { cause: error });
          settle(() => reject(transientFailure(failure)));
        });
        // A connection cut mid-body, with no error event on some Node versions.
        res.on('close', () => {
          if (res.complete) return;
          const message = `${endpoint}${path} closed the connection before the response ended`;
          settle(() => reject(transientFailure(fail(path, 'network', 'unreachable', message))));
        });
      });
      req.end();
    });
  }

  function httpFailure(path: string, response: RawResponse): KubeApiError {
    const status = StatusSchema.safeParse(safeJson(response.body));
    const detail =
      status.success && status.data.message ? `: ${truncate(scrub(status.data.message))}` : '';
    return fail(
      path,
      'http',
      reasonForStatus(response.status),
      `GET ${path} on ${endpoint} returned HTTP ${response.status}${detail}`,
      { httpStatus: response.status }
    );
  }

  function transientFailure(error: KubeApiError): KubeApiError {
    transient.add(error);
    return error;
  }

  /** The budget, its deadline moved up to the scan's when that comes first. */
  function withinScanDeadline(budget: RequestBudget, path: string): RequestBudget {
    const scan = currentScanDeadline();
    if (scan === undefined || scan.at >= budget.deadlineAt) return budget;
    return {
      ...budget,
      deadlineAt: scan.at,
      deadlineMessage: () => `GET ${path} on ${endpoint} was abandoned at ${scan.label}`,
    };
  }

  /** The same failure, saying how many attempts it took. */
  function afterAttempts(error: KubeApiError, attempts: number): KubeApiError {
    if (attempts < 2) return error;
    return fail(
      error.path,
      error.kind,
      error.reason,
      `${error.message} (after ${attempts} attempts)`,
      {
        ...(error.httpStatus === undefined ? {} : { httpStatus: error.httpStatus }),
        cause: error,
      }
    );
  }

  /** Backoff before attempt `attempt + 1`: doubling, half of it random. */
  function backoffMs(attempt: number): number {
    const ceiling = Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** (attempt - 1));
    return ceiling / 2 + (random() * ceiling) / 2;
  }

  /**
   * One GET, retried while its failure is transient, attempts remain and the wait (the server's
   * `Retry-After`, at most `maxRetryAfterMs`, else the backoff) ends before the deadline;
   * otherwise its last failure.
   */
  async function getJson(
    path: string,
    query: URLSearchParams,
    requestBudget: RequestBudget
  ): Promise<{ value: unknown; bytes: number }> {
    const budget = withinScanDeadline(requestBudget, path);
    for (let attempt = 1; ; attempt++) {
      let failure: KubeApiError;
      let serverWaitMs: number | undefined;
      try {
        const response = await send(path, query, budget);
        if (response.status >= 200 && response.status < 300) return parseBody(path, response);
        failure = httpFailure(path, response);
        if (isTransientStatus(response.status)) transient.add(failure);
        serverWaitMs = retryAfterMs(response.retryAfter, Date.now());
      } catch (error) {
        if (!(error instanceof KubeApiError)) throw error;
        failure = error;
      }
      if (!transient.has(failure) || attempt >= retry.maxAttempts) {
        throw afterAttempts(failure, attempt);
      }
      // Retrying before the server's time would only be refused again: a wait longer than we
      // accept ends the read instead.
      if (serverWaitMs !== undefined && serverWaitMs > retry.maxRetryAfterMs) {
        const why = `; its Retry-After of ${Math.ceil(serverWaitMs / 1000)} s is longer than the ${durationText(retry.maxRetryAfterMs)} the scanner waits (${KUBE_RETRY_ENV.maxRetryAfterMs})`;
        throw afterAttempts(
          fail(path, failure.kind, 'throttled', `${failure.message}${why}`, {
            ...(failure.httpStatus === undefined ? {} : { httpStatus: failure.httpStatus }),
            cause: failure,
          }),
          attempt
        );
      }
      const waitMs = serverWaitMs ?? backoffMs(attempt);
      if (Date.now() + waitMs >= budget.deadlineAt) {
        const why =
          serverWaitMs === undefined
            ? ''
            : `; its Retry-After of ${Math.ceil(serverWaitMs / 1000)} s ends past the deadline: ${budget.deadlineMessage()}`;
        throw afterAttempts(
          fail(path, failure.kind, failure.reason, `${failure.message}${why}`, {
            ...(failure.httpStatus === undefined ? {} : { httpStatus: failure.httpStatus }),
            cause: failure,
          }),
          attempt
        );
      }
      await sleep(waitMs);
    }
  }

  function parseBody(path: string, response: RawResponse): { value: unknown; bytes: number } {
    try {
      return { value: JSON.parse(response.body) as unknown, bytes: response.bytes };
    } catch (error) {
      throw fail(
        path,
        'malformed',
        'invalid-response',
        `GET ${path} on ${endpoint} returned malformed JSON (${truncate(scrub(response.body), 80)})`,
        { cause: error }
      );
    }
  }

  /** One page's budget: the request's own limits, or what is left of the list's if less. */
  function pageBudget(path: string, listStart: number, listBytes: number, pages: number) {
    const request = requestBudget(path);
    const listDeadlineAt = listStart + limits.listDeadlineMs;
    const bytesLeft = limits.maxListBytes - listBytes;
    return {
      ...(listDeadlineAt < request.deadlineAt
        ? {
            deadlineAt: listDeadlineAt,
            deadlineMessage: () =>
              `listing ${path} on ${endpoint} did not finish within ${limits.listDeadlineMs} ms, all pages together (kube limit listDeadlineMs)`,
          }
        : { deadlineAt: request.deadlineAt, deadlineMessage: request.deadlineMessage }),
      ...(bytesLeft < request.maxBytes
        ? {
            maxBytes: bytesLeft,
            bytesMessage: () =>
              `listing ${path} on ${endpoint} read more than ${limits.maxListBytes} bytes in ${pages + 1} page(s) (kube limit maxListBytes)`,
          }
        : { maxBytes: request.maxBytes, bytesMessage: request.bytesMessage }),
    };
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
      const { value } = await getJson(path, new URLSearchParams(), requestBudget(path));
      return parseWith(path, schema, value);
    },
    async list(path, listOptions = {}) {
      const items: unknown[] = [];
      const listStart = Date.now();
      let listBytes = 0;
      let token: string | undefined;
      let restarted = false;
      // A server going round (an earlier token, or a page of only listed items) would make a
      // partial list look complete: it fails instead, as the page cap does.
      const sentTokens = new Set<string>();
      const listedItems = new Set<string>();
      for (let page = 0; page < limits.maxListPages; page++) {
        const query = new URLSearchParams({ limit: String(pageSize) });
        if (listOptions.labelSelector) query.set('labelSelector', listOptions.labelSelector);
        if (token) query.set('continue', token);
        let list: ReturnType<typeof ObjectListSchema.parse>;
        try {
          const budget = pageBudget(path, listStart, listBytes, page);
          const { value, bytes } = await getJson(path, query, budget);
          listBytes += bytes;
          list = parseWith(path, ObjectListSchema, value);
        } catch (error) {
          // 410 Gone: the continue token expired mid-list; start over once (same deadline).
          if (error instanceof KubeApiError && error.httpStatus === 410 && !restarted) {
            restarted = true;
            items.length = 0;
            listBytes = 0;
            token = undefined;
            sentTokens.clear();
            listedItems.clear();
            continue;
          }
          throw error;
        }
        const identities = list.items.map(listItemIdentity);
        if (identities.length > 0 && identities.every((identity) => listedItems.has(identity))) {
          throw fail(
            path,
            'malformed',
            'invalid-response',
            `listing ${path} on ${endpoint} returned page ${page + 1} with only items already listed on earlier pages (continue tokens not advancing)`
          );
        }
        for (const identity of identities) listedItems.add(identity);
        // One by one: spreading a huge hostile page would overflow the call stack.
        for (const item of list.items) items.push(item);
        token = list.metadata?.continue;
        if (!token) return items;
        if (sentTokens.has(token)) {
          throw fail(
            path,
            'malformed',
            'invalid-response',
            `listing ${path} on ${endpoint} repeated an earlier continue token after ${page + 1} pages`
          );
        }
        sentTokens.add(token);
      }
      throw fail(
        path,
        'malformed',
        'invalid-response',
        `listing ${path} on ${endpoint} kept paginating past ${limits.maxListPages} pages (kube limit maxListPages)`
      );
    },
  };
}

/** The object an item is (metadata.uid, else namespace/name); its content when it names none. */
function listItemIdentity(item: unknown): string {
  const metadata = (item as { metadata?: { uid?: unknown; namespace?: unknown; name?: unknown } })
    ?.metadata;
  if (typeof metadata?.uid === 'string' && metadata.uid !== '') return `uid ${metadata.uid}`;
  if (typeof metadata?.name === 'string' && metadata.name !== '') {
    const namespace = typeof metadata.namespace === 'string' ? metadata.namespace : '';
    return `name ${namespace}/${metadata.name}`;
  }
  return `content ${JSON.stringify(item) ?? String(item)}`;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
