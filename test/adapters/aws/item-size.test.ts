import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import {
  assertItemFits,
  attributeSizes,
  itemBytes,
  MAX_ITEM_BYTES,
} from '../../../lambda/adapters/aws/item-size.js';
import { ItemTooLargeError } from '../../../lambda/shared/errors.js';

// dynalite (the DynamoDB the deployment simulation runs) computes the size DynamoDB enforces; it
// ships no types, so its size function is typed here.
const dynaliteDb = createRequire(import.meta.url)('dynalite/db/index.js') as {
  itemSize(item: Record<string, AttributeValue>): number;
  MAX_SIZE: number;
};

type AttributeValue =
  | { S: string }
  | { N: string }
  | { B: string }
  | { BOOL: boolean }
  | { NULL: true }
  | { L: AttributeValue[] }
  | { M: Record<string, AttributeValue> };

/** The wire form of a document-client value (what the SDK sends for it). */
function marshal(value: unknown): AttributeValue {
  if (typeof value === 'string') return { S: value };
  if (typeof value === 'number') return { N: String(value) };
  if (typeof value === 'boolean') return { BOOL: value };
  if (value === null) return { NULL: true };
  if (value instanceof Uint8Array) return { B: Buffer.from(value).toString('base64') };
  if (Array.isArray(value)) return { L: value.map(marshal) };
  return {
    M: Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([key, item]) => [key, marshal(item)])
    ),
  };
}

const asItem = (item: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(item).map(([key, value]) => [key, marshal(value)]));

describe('itemBytes', () => {
  it('counts as DynamoDB documents it: names, UTF-8 values, list and map overheads', () => {
    // 'pk'+'abc' + 'n'+(1 byte per 2 digits + 1, plus 1 byte of slack) + 'ok'+1 + 'no'+1
    expect(itemBytes({ pk: 'abc', n: 123, ok: true, no: null })).toBe(5 + 5 + 3 + 3);
    // 'l' + 3 + (1 + 'é'=2) + (1 + 'x'=1)
    expect(itemBytes({ l: ['é', 'x'] })).toBe(1 + 3 + 3 + 2);
    // 'm' + 3 + (1 + 'k' + 'v')
    expect(itemBytes({ m: { k: 'v' } })).toBe(1 + 3 + 3);
    expect(itemBytes({ b: new Uint8Array(10) })).toBe(11);
    expect(itemBytes({ gone: undefined, kept: '' })).toBe(4);
  });

  it('never counts less than the DynamoDB emulator for the items the store writes', () => {
    const items: Record<string, unknown>[] = [
      {
        pk: 'NODECLASS',
        sk: 'prod#default',
        type: 'nodeclass',
        amiSelectorTerms: [{ name: 'eks-node-*', owner: 'self' }, { id: 'ami-0123' }],
        resolvedAmiIds: ['ami-0123456789abcdef0'],
        updatedAt: '2026-11-01T00:00:00.000Z',
      },
      {
        pk: 'CLUSTER#prod',
        sk: 'FINDING#0123456789abcdef',
        message: 'ü'.repeat(300),
        revision: 12,
        scanSeq: 1_234_567,
        expiresAt: 1_798_761_600,
        pendingSeq: Number.MAX_SAFE_INTEGER,
      },
      { pk: 'SIMCACHE#p', sk: 'f', verdicts: new Uint8Array(1234), expiresAt: 1.5, n: -0.001 },
    ];
    for (const item of items) {
      const emulated = dynaliteDb.itemSize(asItem(item));
      expect(itemBytes(item)).toBeGreaterThanOrEqual(emulated);
      // The emulator counts UTF-16 units where DynamoDB counts UTF-8 bytes (600 for 300 'ü'); the
      // rest differs only by the byte of slack per number.
      const utf8Extra = JSON.stringify(item).includes('ü') ? 300 : 0;
      expect(itemBytes(item)).toBeLessThanOrEqual(emulated + utf8Extra + 10);
    }
  });

  it('uses the limit DynamoDB enforces: 400 KB counted in KiB', () => {
    expect(MAX_ITEM_BYTES).toBe(dynaliteDb.MAX_SIZE);
  });

  it('lists the attributes by the room they take, largest first', () => {
    expect(attributeSizes({ pk: 'p', big: 'x'.repeat(100), gone: undefined })).toEqual([
      ['big', 103],
      ['pk', 3],
    ]);
  });
});

describe('assertItemFits', () => {
  it('lets an item at the limit through and refuses one byte more, naming the item', () => {
    const item = (size: number) => ({ pk: 'p', sk: 's', data: 'x'.repeat(size - 10) });
    expect(itemBytes(item(MAX_ITEM_BYTES))).toBe(MAX_ITEM_BYTES);
    expect(() => assertItemFits(item(MAX_ITEM_BYTES))).not.toThrow();
    expect(() => assertItemFits(item(MAX_ITEM_BYTES + 1))).toThrow(ItemTooLargeError);
    expect(() => assertItemFits(item(MAX_ITEM_BYTES + 1))).toThrow(
      'item p / s is 409601 bytes, over the 409600-byte item limit: not written'
    );
  });
});
