// The one Powertools Logger. Values under secret-looking keys are redacted at serialisation time,
// so a token or credential passed by mistake (an EKS bearer token, SDK credentials) never reaches
// CloudWatch Logs.
import { Logger } from '@aws-lambda-powertools/logger';
import type { AppLogger } from '../core/ports/service.js';
import { SERVICE_NAME } from './telemetry.js';

const SECRET_KEY =
  /token|secret|password|passwd|authorization|credential|session|signature|x-amz-security|accesskey|privatekey/i;
/** An EKS bearer token or a presigned STS URL, wherever it appears in a string. */
const SECRET_VALUE =
  /k8s-aws-v1\.[A-Za-z0-9_-]+|X-Amz-Signature=[0-9a-f]+|X-Amz-Security-Token=[^&\s"]+/g;

export const REDACTED = '[REDACTED]';

/** JSON replacer used by the logger; exported for tests. */
export function redactSecrets(key: string, value: unknown): unknown {
  if (key !== '' && SECRET_KEY.test(key) && value !== undefined && value !== null) {
    return REDACTED;
  }
  if (typeof value === 'string') return value.replace(SECRET_VALUE, REDACTED);
  return value;
}

export const logger = new Logger({
  serviceName: SERVICE_NAME,
  jsonReplacerFn: redactSecrets,
});

/** The app layer's logging port, backed by the shared logger. */
export function appLogger(base: Logger = logger): AppLogger {
  return {
    info: (message, attributes) => base.info(message, { ...attributes }),
    warn: (message, attributes) => base.warn(message, { ...attributes }),
    error: (message, attributes) => base.error(message, { ...attributes }),
  };
}

/**
 * Correlation id for one invocation: the EventBridge event id or the SQS message id, so every
 * line of one event's processing can be found together.
 */
export function setCorrelationId(id: string | undefined, base: Logger = logger): void {
  if (id !== undefined && id !== '') base.setCorrelationId(id);
}
