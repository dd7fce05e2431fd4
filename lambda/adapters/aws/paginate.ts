// Token pagination over `send`, so adapters accept `Pick<XClient, 'send'>` (the SDK's own
// paginators insist on a concrete client instance).

/** A misbehaving endpoint that never stops returning tokens must not loop forever. */
const MAX_PAGES = 1000;

export async function collectPages<Page, Item>(
  fetchPage: (token: string | undefined) => Promise<Page>,
  itemsOf: (page: Page) => readonly Item[] | undefined,
  nextTokenOf: (page: Page) => string | undefined
): Promise<Item[]> {
  const items: Item[] = [];
  let token: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const response = await fetchPage(token);
    items.push(...(itemsOf(response) ?? []));
    const next = nextTokenOf(response);
    if (next === undefined || next === '' || next === token) return items;
    token = next;
  }
  return items;
}
