import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import {
  batchWriteItems,
  type DocumentSender,
} from '../../../lambda/adapters/aws/dynamodb-batch.js';

/** A table that answers each BatchWriteItem after a tick, recording what was in flight. */
function slowTable(options: { failOnRequest?: number } = {}) {
  const state = { inFlight: 0, mostInFlight: 0, requests: 0, written: [] as unknown[] };
  const client: DocumentSender = {
    send: (async (command: unknown) => {
      if (!(command instanceof BatchWriteCommand)) throw new Error('unexpected command');
      state.requests += 1;
      const request = state.requests;
      state.inFlight += 1;
      state.mostInFlight = Math.max(state.mostInFlight, state.inFlight);
      await new Promise((resolve) => setTimeout(resolve, 1));
      state.inFlight -= 1;
      if (request === options.failOnRequest) throw new Error('socket hang up');
      state.written.push(...Object.values(command.input.RequestItems ?? {}).flat());
      return {};
    }) as DocumentSender['send'],
  };
  return { client, state };
}

const puts = (count: number) =>
  Array.from({ length: count }, (_, i) => ({ PutRequest: { Item: { pk: 'P', sk: `S${i}` } } }));

describe('batchWriteItems', () => {
  it('writes every item in requests of 25, at most `concurrency` in flight', async () => {
    const { client, state } = slowTable();
    await batchWriteItems(client, 'state', puts(260), 4);
    expect(state.requests).toBe(11);
    expect(state.mostInFlight).toBe(4);
    expect(state.written).toHaveLength(260);
  });

  it('sends one request after the other by default', async () => {
    const { client, state } = slowTable();
    await batchWriteItems(client, 'state', puts(100));
    expect(state.mostInFlight).toBe(1);
  });

  it('rejects with a classified error when a request fails, and starts no further request', async () => {
    const { client, state } = slowTable({ failOnRequest: 2 });
    await expect(batchWriteItems(client, 'state', puts(500), 2)).rejects.toMatchObject({
      name: 'SourceUnavailableError',
      source: 'dynamodb:BatchWriteItem',
    });
    // The two in flight when it failed, and at most the one started beside them.
    expect(state.requests).toBeLessThanOrEqual(3);
  });
});
