// DynamoDB BatchWriteItem for any number of items: requests of 25, each retried while DynamoDB
// hands items back unprocessed (throttling), then a classified error naming what was left. An item
// over DynamoDB's size limit is refused before anything is sent (`ItemTooLargeError`).
import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mapLimited } from '../../shared/concurrency.js';
import { SourceUnavailableError } from '../../shared/errors.js';
import { toSourceUnavailable } from './aws-errors.js';
import { assertItemFits } from './item-size.js';

export type DocumentSender = Pick<DynamoDBDocumentClient, 'send'>;

/** BatchWriteItem's per-request item limit. */
const BATCH_WRITE_LIMIT = 25;
/** Passes over items DynamoDB returns unprocessed before the write counts as failed. */
export const MAX_UNPROCESSED_RETRIES = 5;

/**
 * Writes `requests` in requests of 25, `concurrency` of them in flight (1: one after the other);
 * the first failure rejects and starts no further request.
 */
export async function batchWriteItems(
  client: DocumentSender,
  tableName: string,
  requests: readonly Record<string, unknown>[],
  concurrency = 1
): Promise<void> {
  // DynamoDB refuses the whole request for one item over its size: none is sent then.
  for (const request of requests) {
    const item = (request.PutRequest as { Item?: Record<string, unknown> } | undefined)?.Item;
    if (item !== undefined) assertItemFits(item);
  }
  const groups: Record<string, unknown>[][] = [];
  for (let start = 0; start < requests.length; start += BATCH_WRITE_LIMIT) {
    groups.push(requests.slice(start, start + BATCH_WRITE_LIMIT));
  }
  await mapLimited(groups, concurrency, async (group) => {
    let pending = group;
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt > MAX_UNPROCESSED_RETRIES) {
        throw new SourceUnavailableError(
          'dynamodb:BatchWriteItem',
          'throttled',
          `dynamodb:BatchWriteItem left ${pending.length} items unprocessed after ${MAX_UNPROCESSED_RETRIES} retries`
        );
      }
      try {
        const response = await client.send(
          new BatchWriteCommand({ RequestItems: { [tableName]: pending } })
        );
        pending = (response?.UnprocessedItems?.[tableName] ?? []) as Record<string, unknown>[];
      } catch (error) {
        throw toSourceUnavailable('dynamodb:BatchWriteItem', error);
      }
    }
  });
}
