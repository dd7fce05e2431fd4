/** JSON with every object's keys sorted: equal text for equal values, whatever their key order. */
export function sortedKeysJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    item !== null && typeof item === 'object' && !Array.isArray(item)
      ? Object.fromEntries(
          Object.entries(item as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1))
        )
      : item
  );
}
