// The one place that classifies AWS SDK errors, by `name` / HTTP status, never by message text.
import type { UnavailableReason } from '../../core/facts/slice.js';
import { SourceUnavailableError } from '../../shared/errors.js';

interface SdkErrorShape {
  readonly name?: string;
  readonly Code?: string;
  readonly code?: string;
  readonly $metadata?: { readonly httpStatusCode?: number };
}

const THROTTLING = new Set([
  'Throttling',
  'ThrottlingException',
  'ThrottledException',
  'RequestLimitExceeded',
  'RequestThrottled',
  'RequestThrottledException',
  'TooManyRequestsException',
  'ProvisionedThroughputExceededException',
  'SlowDown',
  'LimitExceededException',
]);

const ACCESS_DENIED = new Set([
  'AccessDenied',
  'AccessDeniedException',
  'UnauthorizedOperation',
  'UnrecognizedClientException',
  'AuthFailure',
  'InvalidClientTokenId',
  'ExpiredToken',
  'ExpiredTokenException',
  'SignatureDoesNotMatch',
]);

const NOT_FOUND = new Set([
  'NoSuchEntity',
  'NoSuchEntityException',
  'ResourceNotFoundException',
  'ParameterNotFound',
  'NotFoundException',
  'InvalidAMIID.NotFound',
  'InvalidSubnetID.NotFound',
  'InvalidGroup.NotFound',
  'InvalidCapacityReservationId.NotFound',
  // KMS: a kmsKeyID that is no key id, key ARN or alias (malformed, or an ARN of no key).
  'InvalidArnException',
]);

const TIMEOUT = new Set([
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
  // A call refused or abandoned at the scan deadline (shared/deadline.ts).
  'ScanDeadlineExceeded',
]);
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ECONNRESET',
  'NetworkingError',
]);

function codeOf(error: unknown): string {
  const shape = (error ?? {}) as SdkErrorShape;
  // Node's network errors are plain `Error`s whose `code` says what failed (`ENOTFOUND`).
  const name = shape.name === 'Error' ? undefined : shape.name;
  return name ?? shape.Code ?? shape.code ?? shape.name ?? '';
}

export function isThrottling(error: unknown): boolean {
  return THROTTLING.has(codeOf(error)) || statusOf(error) === 429;
}

export function isAccessDenied(error: unknown): boolean {
  return ACCESS_DENIED.has(codeOf(error)) || statusOf(error) === 403;
}

export function isNotFound(error: unknown): boolean {
  return NOT_FOUND.has(codeOf(error));
}

/** EC2 DryRun success: HTTP 412 `DryRunOperation` ("Request would have succeeded"). Never an error. */
export function isDryRunSuccess(error: unknown): boolean {
  return codeOf(error) === 'DryRunOperation';
}

function statusOf(error: unknown): number | undefined {
  return ((error ?? {}) as SdkErrorShape).$metadata?.httpStatusCode;
}

export function classifyAwsError(error: unknown): UnavailableReason {
  const code = codeOf(error);
  if (isThrottling(error)) return 'throttled';
  if (isAccessDenied(error)) return 'access-denied';
  if (isNotFound(error)) return 'not-found';
  if (TIMEOUT.has(code)) return 'timeout';
  if (UNREACHABLE.has(code)) return 'unreachable';
  const status = statusOf(error);
  if (status !== undefined && status >= 500) return 'unreachable';
  return 'unknown';
}

/** Wraps an SDK error for `source` (e.g. `ec2:DescribeImages`) into a SourceUnavailableError. */
export function toSourceUnavailable(source: string, error: unknown): SourceUnavailableError {
  if (error instanceof SourceUnavailableError) return error;
  const reason = classifyAwsError(error);
  const code = codeOf(error) || 'Error';
  const detail = error instanceof Error ? error.message : String(error);
  return new SourceUnavailableError(source, reason, `${source} failed (${code}): ${detail}`, {
    cause: error,
  });
}

/**
 * Why the caller's credentials or region cannot be used at all (a live scan's preflight): not a
 * finding about a cluster, a usage error. `CredentialsProviderError` is the SDK's "no provider in
 * the chain had credentials" (also an unknown `--profile` or an expired SSO session).
 */
export type CredentialProblem =
  | 'no-credentials'
  | 'expired'
  | 'invalid'
  | 'region-disabled'
  | 'unreachable'
  | 'refused';

const NO_CREDENTIALS = new Set(['CredentialsProviderError', 'TokenProviderError']);
const EXPIRED = new Set(['ExpiredToken', 'ExpiredTokenException', 'RequestExpired']);
const INVALID = new Set([
  'InvalidClientTokenId',
  'UnrecognizedClientException',
  'SignatureDoesNotMatch',
  'IncompleteSignature',
  'InvalidAccessKeyId',
  'AuthFailure',
]);

export function classifyCredentialError(error: unknown): CredentialProblem {
  const code = codeOf(error);
  if (NO_CREDENTIALS.has(code)) return 'no-credentials';
  if (EXPIRED.has(code)) return 'expired';
  if (INVALID.has(code)) return 'invalid';
  // STS answers this in an opt-in region the account has not enabled.
  if (code === 'RegionDisabledException') return 'region-disabled';
  if (TIMEOUT.has(code) || UNREACHABLE.has(code)) return 'unreachable';
  const status = statusOf(error);
  if (status !== undefined && status >= 500) return 'unreachable';
  return 'refused';
}

/** The SDK error's code for a message (`ExpiredToken`, `ENOTFOUND`), `Error` when it has none. */
export function awsErrorCode(error: unknown): string {
  return codeOf(error) || 'Error';
}

/** Security Hub codes (thrown, or per finding) that no retry fixes: the account must change. */
const SECURITY_HUB_REFUSED = new Set(['InvalidAccessException', 'InvalidAccess', 'AccessDenied']);
/** Codes that say the finding itself is invalid. */
const SECURITY_HUB_REJECTED = new Set([
  'InvalidInputException',
  'InvalidInput',
  'FindingSizeExceeded',
  'DuplicatedFindingIdentifier',
]);

/**
 * What a Security Hub failure means for retrying: a thrown SDK error, or the `ErrorCode` of one
 * finding in `FailedFindings`/`UnprocessedFindings`. Anything not known to be permanent
 * (throttling, `InternalFailure`, `ConcurrentUpdateError`, network) is transient.
 */
export function classifySecurityHubFailure(
  errorOrCode: unknown
): 'transient' | 'refused' | 'rejected' {
  const code = typeof errorOrCode === 'string' ? errorOrCode : codeOf(errorOrCode);
  if (SECURITY_HUB_REJECTED.has(code)) return 'rejected';
  if (SECURITY_HUB_REFUSED.has(code)) return 'refused';
  if (typeof errorOrCode !== 'string' && !isThrottling(errorOrCode) && isAccessDenied(errorOrCode))
    return 'refused';
  return 'transient';
}
