/** `items` in order, cut into lists of at most `size` (an API's per-request limit); none when empty. */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let start = 0; start < items.length; start += size)
    out.push(items.slice(start, start + size));
  return out;
}

/**
 * `items` in order, cut into requests of at most `maxItems` items and `maxBytes` bytes (as
 * `sizeOf` counts them). An item larger than `maxBytes` still goes, alone: the API judges it.
 */
export function batchesWithin<T>(
  items: readonly T[],
  limits: { readonly maxItems: number; readonly maxBytes: number },
  sizeOf: (item: T) => number
): T[][] {
  const batches: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const size = sizeOf(item);
    if (
      current.length > 0 &&
      (current.length === limits.maxItems || bytes + size > limits.maxBytes)
    ) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(item);
    bytes += size;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}
