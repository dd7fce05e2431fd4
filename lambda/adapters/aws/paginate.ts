// Token pagination over `send`, so adapters accept `Pick<XClient, 'send'>` (the SDK's own
// paginators insist on a concrete client instance, and follow a token that repeats forever).
// A listing that does not advance ends with an error, never with partial items returned as if
// complete: checks fed by it then report `error`, not a verdict on half the data.
import { createHash } from 'node:crypto';
import { SourceUnavailableError } from '../../shared/errors.js';

/** Pages of one listing before it is abandoned: far above any real account (1,000 × page size). */
export const MAX_PAGES = 1000;

export interface PaginationOptions<Item> {
  /**
   * What makes an item the same resource (an id); undefined, or no function, compares the item's
   * content. A non-empty page of only items seen before means the listing is going round.
   */
  readonly identityOf?: (item: Item) => string | undefined;
  /** Overrides `MAX_PAGES`. */
  readonly maxPages?: number;
}

/** A listing that would return partial data as complete; `source` is the operation. */
function paginationError(operation: string, problem: string): SourceUnavailableError {
  return new SourceUnavailableError(
    operation,
    'invalid-response',
    `${operation} pagination ${problem}: the listing is incomplete, so nothing is concluded from it`
  );
}

/** Content identity, hashed so a long listing keeps 44 characters per item, not the item twice. */
function contentIdentity(item: unknown): string {
  const json = JSON.stringify(item) ?? String(item);
  return createHash('sha256').update(json).digest('base64');
}

/**
 * Every item of `operation` (e.g. `ec2:DescribeSecurityGroups`), page by page. Throws a
 * `SourceUnavailableError` (`invalid-response`) naming the operation when a token comes back that
 * was sent before, when a non-empty page holds only items already listed, or when `MAX_PAGES`
 * pages still announce more. Empty pages with a fresh token are normal (EC2 filters after paging).
 */
export async function collectPages<Page, Item>(
  operation: string,
  fetchPage: (token: string | undefined) => Promise<Page>,
  itemsOf: (page: Page) => readonly Item[] | undefined,
  nextTokenOf: (page: Page) => string | undefined,
  options: PaginationOptions<Item> = {}
): Promise<Item[]> {
  const maxPages = options.maxPages ?? MAX_PAGES;
  const items: Item[] = [];
  const seenItems = new Set<string>();
  const sentTokens = new Set<string>();
  let token: string | undefined;
  for (let page = 1; ; page++) {
    const response = await fetchPage(token);
    const pageItems = itemsOf(response) ?? [];
    const identities = pageItems.map((item) => options.identityOf?.(item) ?? contentIdentity(item));
    if (identities.length > 0 && identities.every((identity) => seenItems.has(identity))) {
      throw paginationError(
        operation,
        `returned page ${page} with only items already listed on earlier pages`
      );
    }
    for (const identity of identities) seenItems.add(identity);
    // One by one: spreading a huge page would overflow the call stack.
    for (const item of pageItems) items.push(item);
    const next = nextTokenOf(response);
    if (next === undefined || next === '') return items;
    if (sentTokens.has(next)) {
      throw paginationError(operation, `repeated an earlier token after ${page} pages`);
    }
    if (page >= maxPages) {
      throw paginationError(
        operation,
        `still announced more pages after its budget of ${maxPages} pages`
      );
    }
    sentTokens.add(next);
    token = next;
  }
}
