import { describe, expect, it } from 'vitest';
import {
  awsErrorCode,
  type CredentialProblem,
  classifyAwsError,
  classifyCredentialError,
} from '../../../lambda/adapters/aws/aws-errors.js';

const named = (name: string, status?: number) =>
  Object.assign(new Error(name), {
    name,
    ...(status === undefined ? {} : { $metadata: { httpStatusCode: status } }),
  });

/** Node's network errors: a plain `Error` with a `code`. */
const network = (code: string) => Object.assign(new Error(`getaddrinfo ${code}`), { code });

describe('classifyCredentialError', () => {
  it.each<[string, Error, CredentialProblem]>([
    ['no provider had credentials', named('CredentialsProviderError'), 'no-credentials'],
    ['expired SSO token', named('TokenProviderError'), 'no-credentials'],
    ['expired session', named('ExpiredToken', 403), 'expired'],
    ['unknown access key', named('InvalidClientTokenId', 403), 'invalid'],
    ['wrong secret', named('SignatureDoesNotMatch', 403), 'invalid'],
    ['opt-in region not enabled', named('RegionDisabledException', 403), 'region-disabled'],
    ['endpoint name does not resolve', network('ENOTFOUND'), 'unreachable'],
    ['connection refused', network('ECONNREFUSED'), 'unreachable'],
    ['STS failing', named('InternalFailure', 500), 'unreachable'],
    ['anything else', named('AccessDenied', 403), 'refused'],
  ])('%s → %s', (_case, error, problem) => {
    expect(classifyCredentialError(error)).toBe(problem);
  });
});

describe('codes of plain Node errors', () => {
  it('come from `code`, so network failures classify as unreachable', () => {
    expect(awsErrorCode(network('ENOTFOUND'))).toBe('ENOTFOUND');
    expect(classifyAwsError(network('EAI_AGAIN'))).toBe('unreachable');
    expect(awsErrorCode(new Error('plain'))).toBe('Error');
  });
});

describe('KMS errors', () => {
  it.each<[string, Error, string]>([
    ['no such key', named('NotFoundException', 400), 'not-found'],
    ['a kmsKeyID that names no key', named('InvalidArnException', 400), 'not-found'],
    ['a key policy the scanner may not read', named('AccessDeniedException', 400), 'access-denied'],
    ['KMS throttling', named('ThrottlingException', 400), 'throttled'],
  ])('%s → %s', (_case, error, reason) => {
    expect(classifyAwsError(error)).toBe(reason);
  });
});
