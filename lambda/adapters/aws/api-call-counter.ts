// Counts every AWS call per `service:Operation` (the `AwsApiCalls` metric). Attached as SDK
// middleware, so whoever uses a client from `clients.ts` is counted, retries included.
import type { MetadataBearer, Pluggable } from '@smithy/types';

export interface ApiCallCounts {
  /** Commands sent (one per `client.send`), by `service:Operation`. */
  readonly calls: Readonly<Record<string, number>>;
  /** HTTP attempts, retries included, by `service:Operation`. */
  readonly attempts: Readonly<Record<string, number>>;
}

export class ApiCallCounter {
  private readonly calls = new Map<string, number>();
  private readonly attempts = new Map<string, number>();

  public recordCall(operation: string): void {
    this.calls.set(operation, (this.calls.get(operation) ?? 0) + 1);
  }

  public recordAttempt(operation: string): void {
    this.attempts.set(operation, (this.attempts.get(operation) ?? 0) + 1);
  }

  public totalCalls(): number {
    return [...this.calls.values()].reduce((sum, count) => sum + count, 0);
  }

  public counts(): ApiCallCounts {
    return {
      calls: Object.fromEntries([...this.calls].sort(([a], [b]) => a.localeCompare(b))),
      attempts: Object.fromEntries([...this.attempts].sort(([a], [b]) => a.localeCompare(b))),
    };
  }
}

/** `DescribeImagesCommand` → `DescribeImages`. */
export function operationOf(commandName: string | undefined): string {
  return (commandName ?? 'Unknown').replace(/Command$/, '');
}

/**
 * SDK plugin: counts the command once at `initialize` and each HTTP attempt at `deserialize`
 * (the retry middleware sits in `finalizeRequest`, so `deserialize` runs once per attempt).
 */
export function apiCallCounterPlugin<Input extends object, Output extends MetadataBearer>(
  counter: ApiCallCounter,
  service: string
): Pluggable<Input, Output> {
  return {
    applyToStack(stack) {
      stack.add(
        (next, context) => async (args) => {
          counter.recordCall(`${service}:${operationOf(context.commandName)}`);
          return next(args);
        },
        { step: 'initialize', name: 'nodeclassScannerCountCalls', override: true }
      );
      stack.add(
        (next, context) => async (args) => {
          counter.recordAttempt(`${service}:${operationOf(context.commandName)}`);
          return next(args);
        },
        { step: 'deserialize', name: 'nodeclassScannerCountAttempts', override: true }
      );
    },
  };
}
