// A Lambda `Context` for handler tests, and capture of the JSON lines Powertools writes.
import type { Context } from 'aws-lambda';
import { vi } from 'vitest';

export function lambdaContext(functionName = 'NodeClassScanner-ScanCluster'): Context {
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:eu-west-1:111122223333:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: 'c6af9ac6-7b61-11e6-9a41-93e812345678',
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: '2026/11/01/[$LATEST]abcdef',
    getRemainingTimeInMillis: () => 60_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/**
 * JSON lines written to stdout/stderr while the returned capture is active. Powertools writes
 * log lines through `console.<level>` and EMF documents through `console.log`, with
 * `POWERTOOLS_DEV` set as the test setup does.
 */
export function captureJsonLines(): Record<string, unknown>[] {
  const lines: Record<string, unknown>[] = [];
  const keep = (line: unknown) => {
    if (typeof line !== 'string') return;
    try {
      lines.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // not a JSON line
    }
  };
  for (const level of ['log', 'info', 'warn', 'error', 'debug'] as const) {
    vi.spyOn(console, level).mockImplementation(keep);
  }
  return lines;
}
