// One scan issues each distinct AWS query once: identical queries (whatever the order of their
// filters and values) share one promise, SSM parameters are read 10 to a request when the port
// can, subnet and security-group queries of one literal filter are merged across NodeClasses, and
// at most `concurrency` calls run at a time so a scan never bursts through the account's shared
// EC2/IAM rate buckets.
import type { SecurityGroup, Subnet } from '../core/facts/aws.js';
import type { AwsFactsPort, FilterQuery, ImageQuery } from '../core/ports/aws-facts.js';
import { securityGroupMatchesQuery } from '../core/selectors/security-groups.js';
import { subnetMatchesQuery } from '../core/selectors/subnets.js';
import { createLimiter } from '../shared/concurrency.js';

export interface MemoizeOptions {
  /** Underlying calls in flight at once. */
  readonly concurrency?: number;
}

const DEFAULT_AWS_CONCURRENCY = 8;

/** Names per `getParameters` call (GetParameters' limit). */
const PARAMETERS_PER_REQUEST = 10;

/**
 * Values per merged filter. EC2 refuses more than 200 filter values in one call
 * (FilterLimitExceeded, https://github.com/ansible/ansible/pull/16184); half keeps a margin.
 */
export const MERGED_FILTER_VALUES = 100;

/**
 * The filter a query can share with others: exactly one tag or id/name filter (those the local
 * matcher implements), no id list, literal values. EC2 ORs a filter's values and matches a literal
 * value exactly and case-sensitively, so the merged answer, filtered locally by each query's own
 * values, is that query's answer. Wildcards and several ANDed filters are sent as they are.
 */
function mergeableFilter(
  query: FilterQuery,
  attributes: readonly string[]
): { name: string; values: readonly string[] } | undefined {
  const [filter, ...rest] = query.filters;
  if (filter === undefined || rest.length > 0 || query.ids !== undefined) return undefined;
  const known =
    filter.name === 'tag-key' || filter.name.startsWith('tag:') || attributes.includes(filter.name);
  if (!known || filter.values.length === 0) return undefined;
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

  // Parameter names asked for since the last flush; a scan asks for them all in one turn (every
  // NodeClass starts at once), so one flush at the next macrotask batches them.
  const pending = new Map<string, Deferred<string | undefined>>();
  let flushScheduled = false;

  function flushParameters(getParameters: NonNullable<AwsFactsPort['getParameters']>): void {
    flushScheduled = false;
    const waiting = [...pending];
    pending.clear();
    for (let start = 0; start < waiting.length; start += PARAMETERS_PER_REQUEST) {
      const batch = waiting.slice(start, start + PARAMETERS_PER_REQUEST);
      limit(() => getParameters(batch.map(([name]) => name))).then(
        (values) => {
          for (const [name, deferred] of batch) deferred.resolve(values.get(name));
        },
        (error: unknown) => {
          for (const [, deferred] of batch) deferred.reject(error);
        }
      );
    }
  }

  function getParameter(name: string): Promise<string | undefined> {
    const key = `parameter ${name}`;
    const getParameters = port.getParameters?.bind(port);
    if (getParameters === undefined || cache.has(key)) {
      return once(key, () => port.getParameter(name));
    }
    const deferred = defer<string | undefined>();
    pending.set(name, deferred);
    cache.set(key, deferred.promise);
    if (!flushScheduled) {
      flushScheduled = true;
      setImmediate(() => flushParameters(getParameters));
    }
    return deferred.promise;
  }

  /**
   * Queries of one literal filter asked for in one turn, by filter name: one call per
   * MERGED_FILTER_VALUES values, each query answered with the items its own values match.
   */
  function mergingLookup<T extends { readonly id: string }>(
    kind: string,
    send: (query: FilterQuery) => Promise<readonly T[]>,
    matches: (item: T, query: FilterQuery) => boolean,
    attributes: readonly string[]
  ): (query: FilterQuery) => Promise<readonly T[]> {
    const waiting = new Map<string, { query: FilterQuery; deferred: Deferred<readonly T[]> }[]>();
    let scheduled = false;
    const flush = () => {
      scheduled = false;
      const groups = [...waiting];
      waiting.clear();
      for (const [name, members] of groups) {
        const values = [...new Set(members.flatMap(({ query }) => query.filters[0]?.values ?? []))];
        const calls: Promise<readonly T[]>[] = [];
        for (let start = 0; start < values.length; start += MERGED_FILTER_VALUES) {
          const chunk = values.slice(start, start + MERGED_FILTER_VALUES);
          calls.push(limit(() => send({ filters: [{ name, values: chunk }] })));
        }
        Promise.all(calls).then(
          (answers) => {
            const byId = new Map(answers.flat().map((item) => [item.id, item]));
            const items = [...byId.values()];
            for (const { query, deferred } of members) {
              // A query merged with no other values gets EC2's answer untouched.
              const own = new Set(query.filters[0]?.values);
              const alone = values.every((value) => own.has(value));
              deferred.resolve(alone ? items : items.filter((item) => matches(item, query)));
            }
          },
          (error: unknown) => {
            for (const { deferred } of members) deferred.reject(error);
          }
        );
      }
    };
    return (query) => {
      const key = `${kind} ${queryKey(query)}`;
      const filter = mergeableFilter(query, attributes);
      const cached = cache.get(key);
      if (cached) return cached as Promise<readonly T[]>;
      if (filter === undefined) return once(key, () => send(query));
      const deferred = defer<readonly T[]>();
      cache.set(key, deferred.promise);
      waiting.set(filter.name, [...(waiting.get(filter.name) ?? []), { query, deferred }]);
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
      return deferred.promise;
    };
  }

  const describeSubnets = mergingLookup<Subnet>(
    'subnets',
    (query) => port.describeSubnets(query),
    subnetMatchesQuery,
    ['subnet-id']
  );
  const describeSecurityGroups = mergingLookup<SecurityGroup>(
    'security-groups',
    (query) => port.describeSecurityGroups(query),
    securityGroupMatchesQuery,
    ['group-id', 'group-name']
  );

  return {
    describeImages: (query) => once(`images ${queryKey(query)}`, () => port.describeImages(query)),
    describeSubnets,
    describeSecurityGroups,
    describeCapacityReservations: (query) =>
      once(`capacity-reservations ${queryKey(query)}`, () =>
        port.describeCapacityReservations(query)
      ),
    // The port is bound to one region: one query per scan serves every NodeClass.
    describeInstanceTypeOfferings: () =>
      once('instance-type-offerings', () => port.describeInstanceTypeOfferings()),
    getParameter,
    getInstanceProfile: (name) =>
      once(`instance-profile ${name}`, () => port.getInstanceProfile(name)),
    getRole: (name) => once(`role ${name}`, () => port.getRole(name)),
  };
}
