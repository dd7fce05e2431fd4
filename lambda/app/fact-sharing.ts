// How one scan shares the calls of each AwsFactsPort method: the memo (memoize-port.ts) is built
// from this table. It is keyed by port method like the adapters' fact descriptors
// (adapters/aws/*-descriptors.ts), but SDK-free: the memo runs in the Lambdas' lazy phases, which
// must not load the SDK. A new port method does not compile without its entry here.
import { imageMatchesFilters } from '../core/ami/queries.js';
import type { Image, SecurityGroup, Subnet } from '../core/facts/aws.js';
import {
  type AwsFactsPort,
  type FilterQuery,
  PARAMETERS_PER_REQUEST,
} from '../core/ports/aws-facts.js';
import { securityGroupMatchesQuery } from '../core/selectors/security-groups.js';
import { subnetMatchesQuery } from '../core/selectors/subnets.js';

/** Identical queries (whatever the order of their filters and values) share one call. */
export interface PerQuery {
  readonly share: 'per-query';
  /** Names the fact in the scan's cache keys. */
  readonly label: string;
}

/** Each name is read once per scan. */
export interface PerName {
  readonly share: 'per-name';
  readonly label: string;
}

/** One call per scan: the port is bound to one region, and the query takes no argument. */
export interface PerRegion {
  readonly share: 'per-region';
  readonly label: string;
}

/**
 * Queries of one literal filter, asked for in one turn, are merged into one call per filter name
 * and equal other parameters (as many values as EC2 takes); each query is answered with the items
 * its own values match. Other queries are shared per query.
 */
export interface Merged<Item extends { readonly id: string }> {
  readonly share: 'merged';
  readonly label: string;
  /** Filter names (besides tags) the local matcher implements. */
  readonly attributes: readonly string[];
  /**
   * Of those, the ones whose values EC2 matches as wildcard patterns (`*`, `?`, `\` escapes), as the
   * local matcher does: their patterns merge too. Elsewhere a value with those characters is sent
   * alone (a literal `*` in an id filter would match differently locally).
   */
  readonly wildcardAttributes?: readonly string[];
  /**
   * The live API's filter semantics (core's matcher) for the query's filters only: merged queries
   * share every other parameter. Method syntax: any item type fits.
   */
  matches(item: Item, query: FilterQuery): boolean;
}

/**
 * Names asked for in one turn are read `size` to a call of the port's `via` method, when the port
 * has it; else each name once.
 */
export interface Batched {
  readonly share: 'batched';
  readonly label: string;
  readonly via: 'getParameters';
  readonly size: number;
}

/** The batch form of another method: the memo answers names through that one and omits it. */
export interface BatchFormOf {
  readonly share: 'batch-form-of';
  readonly method: keyof AwsFactsPort;
}

export type Sharing =
  | PerQuery
  | PerName
  | PerRegion
  | Merged<{ readonly id: string }>
  | Batched
  | BatchFormOf;

export const FACT_SHARING = {
  // ~One name selector per custom AMI: a fleet's name terms (equal owners) become one or two calls.
  describeImages: {
    share: 'merged',
    label: 'images',
    attributes: ['name', 'image-id'],
    wildcardAttributes: ['name'],
    matches: (image: Image, query: FilterQuery) => imageMatchesFilters(image, query.filters),
  },
  describeSubnets: {
    share: 'merged',
    label: 'subnets',
    attributes: ['subnet-id'],
    matches: (subnet: Subnet, query: FilterQuery) => subnetMatchesQuery(subnet, query),
  },
  describeSecurityGroups: {
    share: 'merged',
    label: 'security-groups',
    attributes: ['group-id', 'group-name'],
    matches: (group: SecurityGroup, query: FilterQuery) => securityGroupMatchesQuery(group, query),
  },
  describeCapacityReservations: { share: 'per-query', label: 'capacity-reservations' },
  describeInstanceTypeOfferings: { share: 'per-region', label: 'instance-type-offerings' },
  describeInstanceTypes: { share: 'per-region', label: 'instance-types' },
  getParameter: {
    share: 'batched',
    label: 'parameter',
    via: 'getParameters',
    size: PARAMETERS_PER_REQUEST,
  },
  getParameters: { share: 'batch-form-of', method: 'getParameter' },
  getInstanceProfile: { share: 'per-name', label: 'instance-profile' },
  getRole: { share: 'per-name', label: 'role' },
  getEbsEncryptionDefaults: { share: 'per-region', label: 'ebs-encryption-defaults' },
  describeKmsKey: { share: 'per-name', label: 'kms-key' },
} as const satisfies { readonly [M in keyof AwsFactsPort]-?: Sharing };
