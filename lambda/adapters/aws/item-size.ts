// The size DynamoDB counts for an item, computed as DynamoDB documents it
// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html):
// the UTF-8 bytes of every attribute name plus its value; strings by their UTF-8 bytes, binary by
// its raw bytes, a number 1 byte per two significant digits plus 1, a boolean or null 1 byte, a
// list or map 3 bytes plus 1 byte per element plus its elements (a map element counting its
// name). Items are measured as the document client marshals them (JS strings, numbers, booleans,
// null, arrays, plain objects, Uint8Array, Sets), so a write can be refused before it is sent:
// DynamoDB refuses an item over 400 KB with a ValidationException, which would fail the scan.
import { utf8Length } from '../../core/text-budget.js';
import { ItemTooLargeError } from '../../shared/errors.js';

/** DynamoDB's item size limit: 400 KB, counted in KiB (409,600 bytes). */
export const MAX_ITEM_BYTES = 400 * 1024;

/** Significant digits of a number's decimal form (leading and trailing zeros do not count). */
function significantDigits(value: number | bigint): number {
  const digits = String(value)
    .replace(/^-/, '')
    .replace(/e[+-]?\d+$/i, '')
    .replace('.', '')
    .replace(/^0+/, '')
    .replace(/0+$/, '');
  return Math.max(1, digits.length);
}

/**
 * Bytes of one value (without its name). Numbers get one byte more than the documented
 * approximation: it is an approximation, and the guard must never let through what DynamoDB
 * refuses.
 */
function valueBytes(value: unknown): number {
  if (typeof value === 'string') return utf8Length(value);
  if (typeof value === 'number' || typeof value === 'bigint')
    return Math.ceil(significantDigits(value) / 2) + 2;
  if (typeof value === 'boolean' || value === null || value === undefined) return 1;
  if (value instanceof Uint8Array) return value.byteLength;
  if (value instanceof Set) {
    let bytes = 0;
    for (const member of value) bytes += valueBytes(member);
    return bytes;
  }
  if (Array.isArray(value)) {
    let bytes = 3;
    for (const element of value) bytes += 1 + valueBytes(element);
    return bytes;
  }
  if (typeof value === 'object') return 3 + attributesBytes(value as Record<string, unknown>, 1);
  return utf8Length(String(value));
}

function attributesBytes(
  attributes: Readonly<Record<string, unknown>>,
  perElement: number
): number {
  let bytes = 0;
  for (const [name, value] of Object.entries(attributes)) {
    // The document client drops undefined attributes (`removeUndefinedValues`) before sending.
    if (value === undefined) continue;
    bytes += perElement + utf8Length(name) + valueBytes(value);
  }
  return bytes;
}

/** The size DynamoDB counts for `item` (top-level attributes carry no per-element byte). */
export function itemBytes(item: Readonly<Record<string, unknown>>): number {
  return attributesBytes(item, 0);
}

/** Bytes of each top-level attribute (name and value), largest first. */
export function attributeSizes(item: Readonly<Record<string, unknown>>): [string, number][] {
  return Object.entries(item)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]): [string, number] => [name, utf8Length(name) + valueBytes(value)])
    .sort(([, a], [, b]) => b - a);
}

/** Throws `ItemTooLargeError` (naming the item by its key) when DynamoDB would refuse `item`. */
export function assertItemFits(
  item: Readonly<Record<string, unknown>>,
  maxBytes: number = MAX_ITEM_BYTES
): void {
  const bytes = itemBytes(item);
  if (bytes <= maxBytes) return;
  throw new ItemTooLargeError(`item ${String(item.pk)} / ${String(item.sk)}`, bytes, maxBytes);
}
