// SQS SendMessageBatch and SNS PublishBatch answer alike: per-entry Successful/Failed lists keyed
// by entry Id. One policy for both: an entry that failed for a reason other than bad input is
// retried once; what still fails is returned, never thrown, so the caller can act on exactly those.
import type { PublishFailure } from '../../core/ports/service.js';

export interface BatchEntry {
  readonly Id?: string | undefined;
}

/** The part of a batch response both services share. */
export interface BatchResponse {
  readonly Successful?: readonly { readonly Id?: string | undefined }[] | undefined;
  readonly Failed?:
    | readonly {
        readonly Id?: string | undefined;
        readonly Code?: string | undefined;
        readonly Message?: string | undefined;
        readonly SenderFault?: boolean | undefined;
      }[]
    | undefined;
}

export interface BatchSender<E extends BatchEntry> {
  /** Names the service in a failure it did not report. */
  readonly service: string;
  /** Sends one request of at most the service's entry limit. */
  send(entries: E[]): Promise<BatchResponse>;
  /** Whether a request that threw as a whole is worth one retry. */
  isRetryableError(error: unknown): boolean;
}

interface EntryFailure extends PublishFailure {
  readonly retryable: boolean;
}

async function sendOnce<E extends BatchEntry>(
  sender: BatchSender<E>,
  entries: readonly E[]
): Promise<EntryFailure[]> {
  try {
    const response = await sender.send([...entries]);
    const succeeded = new Set((response.Successful ?? []).map((entry) => entry.Id));
    const failed = new Map((response.Failed ?? []).map((entry) => [entry.Id, entry]));
    return entries
      .filter((entry) => !succeeded.has(entry.Id))
      .map((entry) => {
        const failure = failed.get(entry.Id);
        return {
          id: entry.Id ?? '',
          code: failure?.Code ?? 'NotAcknowledged',
          message: failure?.Message ?? `${sender.service} did not report this entry`,
          // Sender faults (bad input) will fail again; everything else is worth one retry.
          retryable: failure?.SenderFault !== true,
        };
      });
  } catch (error) {
    const code = (error as { name?: string }).name ?? 'Error';
    const message = error instanceof Error ? error.message : String(error);
    const retryable = sender.isRetryableError(error);
    return entries.map((entry) => ({ id: entry.Id ?? '', code, message, retryable }));
  }
}

/** Sends each batch in order, retrying its retryable failures once; returns what still failed. */
export async function sendBatches<E extends BatchEntry>(
  sender: BatchSender<E>,
  batches: readonly (readonly E[])[]
): Promise<PublishFailure[]> {
  const failures: PublishFailure[] = [];
  for (const batch of batches) {
    const byId = new Map(batch.map((entry) => [entry.Id, entry]));
    const firstTry = await sendOnce(sender, batch);
    failures.push(...firstTry.filter((failure) => !failure.retryable));
    const retry = firstTry
      .filter((failure) => failure.retryable)
      .map((failure) => byId.get(failure.id))
      .filter((entry) => entry !== undefined);
    if (retry.length > 0) failures.push(...(await sendOnce(sender, retry)));
  }
  return failures.map(({ id, code, message }) => ({ id, code, message }));
}
