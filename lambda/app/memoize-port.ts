// One scan issues each distinct AWS query once, each port method shared as its entry in
// FACT_SHARING (fact-sharing.ts) says: identical queries share one promise, names are read once or
// batched, single-filter queries (image name patterns included) are merged across NodeClasses. At
// most `concurrency` calls run at a time so a scan never bursts through the account's shared
// EC2/IAM rate buckets.
import type { AwsFactsPort, FilterQuery, ImageQuery } from '../core/ports/aws-facts.js';
import { createLimiter } from '../shared/concurrency.js';
import { type Batched, FACT_SHARING, type Merged, type Sharing } from './fact-sharing.js';

export interface MemoizeOptions {
  /** Underlying calls in flight at once. */
  readonly concurrency?: number;
}

const DEFAULT_AWS_CONCURRENCY = 8;

/**
 * Values per merged filter. EC2 refuses more than 200 filter values in one call
 * (FilterLimitExceeded, https://github.com/ansible/ansible/pull/16184); half keeps a margin.
 */
export const MERGED_FILTER_VALUES = 100;

/**
 * The filter a query can share with others: exactly one tag or id/name filter (those the local
 * matcher implements), no id list, literal values (or patterns where EC2 and the local matcher
 * both read wildcards). EC2 ORs a filter's values and matches a literal value exactly and
 * case-sensitively, so the merged answer, filtered locally by each query's own values, is that
 * query's answer. Several ANDed filters are sent as they are.
 */
function mergeableFilter(
  query: Query,
  sharing: Pick<Merged<{ readonly id: string }>, 'attributes' | 'wildcardAttributes'>
): { name: string; values: readonly string[] } | undefined {
  const [filter, ...rest] = query.filters;
  if (filter === undefined || rest.length > 0 || ('ids' in query && query.ids !== undefined)) {
    return undefined;
  }
  const known =
    filter.name === 'tag-key' ||
    filter.name.startsWith('tag:') ||
    sharing.attributes.includes(filter.name);
  if (!known || filter.values.length === 0) return undefined;
  if (sharing.wildcardAttributes?.includes(filter.name)) return filter;
  return filter.values.some((value) => /[*?\\]/.test(value)) ? undefined : filter;
}

type Query = ImageQuery | FilterQuery;

function sorted(values: readonly string[] | undefined): string[] | undefined {
  return values === undefined ? undefined : [...values].sort();
}

/** Canonical JSON of a query: filters by name, every value list sorted (EC2 ANDs filters, ORs values). */
export function queryKey(query: Query): string {
  const filters = query.filters
    .map((filter) => ({ name: filter.name, values: sorted(filter.values) }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) || compareJson(a, b));
  const canonical = {
    filters,
    ids: sorted('ids' in query ? query.ids : undefined),
    owners: sorted('owners' in query ? query.owners : undefined),
    includeDeprecated: 'includeDeprecated' in query ? query.includeDeprecated : undefined,
  };
  return JSON.stringify(canonical);
}

function compareJson(a: unknown, b: unknown): number {
  const left = JSON.stringify(a);
  const right = JSON.stringify(b);
  return left < right ? -1 : left > right ? 1 : 0;
}

interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

function defer<T>(): Deferred<T> {
  let resolve: (value: T) => void = () => undefined;
  let reject: (error: unknown) => void = () => undefined;
  const promise = new Promise<T>((onResolve, onReject) => {
    resolve = onResolve;
    reject = onReject;
  });
  return { promise, resolve, reject };
}

/**
 * Wraps a port for one scan. Failures are memoised too: a throttled query is not retried by every
 * NodeClass that shares it (the SDK already retried it).
 */
export function memoizeAwsFactsPort(
  port: AwsFactsPort,
  options: MemoizeOptions = {}
): AwsFactsPort {
  const limit = createLimiter(options.concurrency ?? DEFAULT_AWS_CONCURRENCY);
  const cache = new Map<string, Promise<unknown>>();

  function once<T>(key: string, call: () => Promise<T>): Promise<T> {
    const cached = cache.get(key);
    if (cached) return cached as Promise<T>;
    const promise = limit(call);
    cache.set(key, promise);
    return promise;
  }

  // Names asked for since the last flush; a scan asks for them all in one turn (every NodeClass
  // starts at once), so one flush at the next macrotask batches them.
  function batchedLookup(
    sharing: Batched,
    one: (name: string) => Promise<unknown>
  ): (name: string) => Promise<unknown> {
    const batch = port[sharing.via]?.bind(port);
    const pending = new Map<string, Deferred<unknown>>();
    let scheduled = false;
    const flush = (send: NonNullable<typeof batch>) => {
      scheduled = false;
      const waiting = [...pending];
      pending.clear();
      for (let start = 0; start < waiting.length; start += sharing.size) {
        const chunk = waiting.slice(start, start + sharing.size);
        limit(() => send(chunk.map(([name]) => name))).then(
          (values) => {
            for (const [name, deferred] of chunk) deferred.resolve(values.get(name));
          },
          (error: unknown) => {
            for (const [, deferred] of chunk) deferred.reject(error);
          }
        );
      }
    };
    return (name) => {
      const key = `${sharing.label} ${name}`;
      if (batch === undefined || cache.has(key)) return once(key, () => one(name));
      const deferred = defer<unknown>();
      pending.set(name, deferred);
      cache.set(key, deferred.promise);
      if (!scheduled) {
        scheduled = true;
        setImmediate(() => flush(batch));
      }
      return deferred.promise;
    };
  }

  /**
   * Queries of one literal filter asked for in one turn, by filter name and their other parameters
   * (owners, deprecation): one call per MERGED_FILTER_VALUES values, each query answered with the
   * items its own values match.
   */
  function mergingLookup<T extends { readonly id: string }, Q extends Query>(
    sharing: Merged<T>,
    send: (query: Q) => Promise<readonly T[]>
  ): (query: Q) => Promise<readonly T[]> {
    const waiting = new Map<
      string,
      { shape: Q; name: string; members: { query: Q; deferred: Deferred<readonly T[]> }[] }
    >();
    let scheduled = false;
    const flush = () => {
      scheduled = false;
      const groups = [...waiting.values()];
      waiting.clear();
      for (const { shape, name, members } of groups) {
        const values = [...new Set(members.flatMap(({ query }) => query.filters[0]?.values ?? []))];
        const calls: Promise<readonly T[]>[] = [];
        for (let start = 0; start < values.length; start += MERGED_FILTER_VALUES) {
          const chunk = values.slice(start, start + MERGED_FILTER_VALUES);
          calls.push(limit(() => send({ ...shape, filters: [{ name, values: chunk }] })));
        }
        Promise.all(calls).then(
          (answers) => {
            const byId = new Map(answers.flat().map((item) => [item.id, item]));
            const items = [...byId.values()];
            for (const { query, deferred } of members) {
              // A query merged with no other values gets EC2's answer untouched.
              const own = new Set(query.filters[0]?.values);
              const alone = values.every((value) => own.has(value));
              deferred.resolve(
                alone ? items : items.filter((item) => sharing.matches(item, query))
              );
            }
          },
          (error: unknown) => {
            for (const { deferred } of members) deferred.reject(error);
          }
        );
      }
    };
    return (query) => {
      const key = `${sharing.label} ${queryKey(query)}`;
      const filter = mergeableFilter(query, sharing);
      const cached = cache.get(key);
      if (cached) return cached as Promise<readonly T[]>;
      if (filter === undefined) return once(key, () => send(query));
      const deferred = defer<readonly T[]>();
      cache.set(key, deferred.promise);
      // Merged only with queries equal but for this filter's values.
      const shape = { ...query, filters: [] };
      const groupKey = `${filter.name} ${queryKey(shape)}`;
      const group = waiting.get(groupKey) ?? { shape, name: filter.name, members: [] };
      group.members.push({ query, deferred });
      waiting.set(groupKey, group);
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
      return deferred.promise;
    };
  }

  /** The memoised method of one table entry; undefined for a batch form (answered through its lookup). */
  function shared(
    sharing: Sharing,
    call: (argument: never) => Promise<unknown>
  ): ((argument: never) => Promise<unknown>) | undefined {
    const send = call as (argument: unknown) => Promise<never>;
    switch (sharing.share) {
      case 'per-query':
        return (query: Query) => once(`${sharing.label} ${queryKey(query)}`, () => send(query));
      case 'per-name':
        return (name: string) => once(`${sharing.label} ${name}`, () => send(name));
      case 'per-region':
        return () => once(sharing.label, () => send(undefined));
      case 'merged':
        return mergingLookup(sharing, send);
      case 'batched':
        return batchedLookup(sharing, send);
      case 'batch-form-of':
        return undefined;
    }
  }

  const methods = (Object.keys(FACT_SHARING) as (keyof AwsFactsPort)[]).flatMap((method) => {
    const call = port[method];
    if (call === undefined) return [];
    const memoised = shared(
      FACT_SHARING[method],
      call.bind(port) as (argument: never) => Promise<unknown>
    );
    return memoised === undefined ? [] : [[method, memoised] as const];
  });
  // The table is checked against the port's methods (fact-sharing.ts); each entry keeps its call.
  return Object.fromEntries(methods) as unknown as AwsFactsPort;
}
