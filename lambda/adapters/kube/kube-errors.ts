// The one place that classifies Kubernetes API failures: by HTTP status and Node error code,
// never by message text.
import type { KubeFailureKind } from '../../core/facts/cluster.js';
import type { UnavailableReason } from '../../core/facts/slice.js';
import { SourceUnavailableError } from '../../shared/errors.js';

/** A Kubernetes API read that failed; `failure` says how, for exact remediation. */
export class KubeApiError extends SourceUnavailableError {
  public readonly kind: KubeFailureKind;
  public readonly httpStatus?: number;
  public readonly path: string;

  public constructor(
    input: {
      readonly endpoint: string;
      readonly path: string;
      readonly kind: KubeFailureKind;
      readonly reason: UnavailableReason;
      readonly message: string;
      readonly httpStatus?: number;
    },
    options?: ErrorOptions
  ) {
    super(`${input.endpoint}${input.path}`, input.reason, input.message, options);
    this.name = 'KubeApiError';
    this.kind = input.kind;
    this.path = input.path;
    if (input.httpStatus !== undefined) this.httpStatus = input.httpStatus;
  }
}

export function reasonForStatus(status: number): UnavailableReason {
  if (status === 401 || status === 403) return 'access-denied';
  if (status === 404) return 'not-found';
  if (status === 429) return 'throttled';
  if (status >= 500) return 'unreachable';
  return 'invalid-response';
}

/** Statuses worth another attempt: throttled, or a server or gateway failing for now. */
const TRANSIENT_STATUSES = new Set([429, 500, 502, 503, 504]);

export function isTransientStatus(status: number): boolean {
  return TRANSIENT_STATUSES.has(status);
}

/** A connection refused, reset or dropped ("socket hang up" is ECONNRESET): worth retrying. */
const TRANSIENT_NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'EAI_AGAIN',
  'ETIMEDOUT',
]);

export function isTransientNetworkError(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && TRANSIENT_NETWORK_CODES.has(code);
}

/**
 * Milliseconds a `Retry-After` header asks to wait: delay-seconds or an HTTP-date
 * (https://www.rfc-editor.org/rfc/rfc9110#field.retry-after); undefined when absent or unreadable.
 */
export function retryAfterMs(header: string | undefined, now: number): number | undefined {
  const text = header?.trim() ?? '';
  if (text === '') return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'ETIMEDOUT',
]);

const TLS_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_SIGNATURE_FAILURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** Classifies a socket/TLS error raised by `node:https`. */
export function classifyNetworkError(error: unknown): {
  kind: KubeFailureKind;
  reason: UnavailableReason;
} {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && TLS_CODES.has(code))
    return { kind: 'tls', reason: 'unreachable' };
  if (code === 'ETIMEDOUT') return { kind: 'timeout', reason: 'timeout' };
  if (typeof code === 'string' && NETWORK_CODES.has(code)) {
    return { kind: 'network', reason: 'unreachable' };
  }
  return { kind: 'network', reason: 'unknown' };
}
