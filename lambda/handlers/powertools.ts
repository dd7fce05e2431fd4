// The Powertools middleware every Lambda handler runs under. Kept apart from `service.ts` so the
// dispatch bundle does not pull in the scanning stack.
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { logger } from '../shared/logger.js';

/**
 * A Lambda handler under the Powertools middleware: the Lambda context on every log line (keys
 * reset after each invocation) and, when `emf` is given, its stored metrics written as EMF after
 * each invocation, whether it returned or threw.
 */
export function withPowertools<TEvent, TResult>(
  handler: (event: TEvent, context: Context) => Promise<TResult>,
  emf?: Metrics
) {
  const wrapped = middy(handler).use(injectLambdaContext(logger, { resetKeys: true }));
  return emf === undefined ? wrapped : wrapped.use(logMetrics(emf));
}
