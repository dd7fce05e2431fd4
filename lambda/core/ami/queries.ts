// AMI selector terms → DescribeImages queries exactly as Karpenter builds them
// (https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/providers/amifamily/ami.go), and the matching semantics of those queries for one image.
import type { AmiVariant, Ec2Filter, Image } from '../facts/aws.js';
import type { ImageQuery } from '../ports/aws-facts.js';
import type { AmiSelectorTerm } from '../schema.js';
import {
  ec2WildcardMatches,
  matchesFilters,
  tagFilters,
  tagsMatchTerm,
} from '../selectors/ec2-filter.js';

/** Every Karpenter DescribeImages query carries this filter since v1.2.2/v1.3.0 (#7672). */
const AVAILABLE_STATE_FILTER: Ec2Filter = { name: 'state', values: ['available'] };

/** Owners Karpenter sends for a `name` term without `owner`. */
const DEFAULT_NAME_OWNERS: readonly string[] = ['self', 'amazon'];

/** Owner aliases EC2 accepts in `Owners`, matched against `ImageOwnerAlias`. */
const OWNER_ALIASES: readonly string[] = ['amazon', 'aws-marketplace', 'aws-backup-vault'];

export interface ImageQueryPlan {
  /** The query Karpenter sends (with `state=available`). */
  readonly query: ImageQuery;
  /** Indexes into `spec.amiSelectorTerms` this query answers. */
  readonly termIndexes: readonly number[];
  /** Alias queries: the variants each image id stands for (from the SSM parameter it came from). */
  readonly knownVariants?: Readonly<Record<string, readonly AmiVariant[]>>;
}

function karpenterQuery(filters: readonly Ec2Filter[], owners?: readonly string[]): ImageQuery {
  return {
    filters: [...filters, AVAILABLE_STATE_FILTER],
    ...(owners && owners.length > 0 ? { owners } : {}),
    includeDeprecated: true,
  };
}

/** The same query without the state filter (what Karpenter < v1.2.2 sends). */
export function withoutStateFilter(query: ImageQuery): ImageQuery {
  return { ...query, filters: query.filters.filter((filter) => filter.name !== 'state') };
}

/**
 * The images of `withoutStateFilter(query)`'s answer that `query` itself lists: its `state`
 * filters applied locally. Filters are ANDed, so the unfiltered answer contains the filtered one
 * and one DescribeImages serves both.
 */
export function applyStateFilters(images: readonly Image[], query: ImageQuery): Image[] {
  const filters = query.filters.filter((filter) => filter.name === 'state');
  if (filters.length === 0) return [...images];
  return images.filter((image) =>
    matchesFilters('images', filters, image.tags, (name) => imageAttribute(image, name))
  );
}

/** The query for one name/tags/owner term (neither id, alias nor ssmParameter). */
export function termImageQuery(term: AmiSelectorTerm): ImageQuery {
  const filters: Ec2Filter[] = [];
  if (term.name) filters.push({ name: 'name', values: [term.name] });
  filters.push(...tagFilters(term.tags));
  return karpenterQuery(filters, termOwners(term));
}

function termOwners(term: AmiSelectorTerm): readonly string[] {
  if (term.owner) return [term.owner];
  return term.name ? DEFAULT_NAME_OWNERS : [];
}

/**
 * Queries for non-alias terms, in Karpenter's order: one per name/tags term, then one `image-id`
 * query batching the id terms and the `ami-` values of resolved `ssmParameter` terms.
 * `ssmValues` maps a term index to its parameter value; missing or non-`ami-` values are skipped.
 */
export function imageQueriesForTerms(
  terms: readonly AmiSelectorTerm[],
  ssmValues: ReadonlyMap<number, string> = new Map()
): ImageQueryPlan[] {
  const plans: ImageQueryPlan[] = [];
  const ids: string[] = [];
  const idTerms: number[] = [];
  terms.forEach((term, index) => {
    if (term.id) {
      ids.push(term.id);
      idTerms.push(index);
    } else if (term.ssmParameter) {
      const value = ssmValues.get(index);
      if (value?.startsWith('ami-')) {
        ids.push(value);
        idTerms.push(index);
      }
    } else {
      plans.push({ query: termImageQuery(term), termIndexes: [index] });
    }
  });
  if (ids.length > 0) {
    plans.push({
      query: karpenterQuery([{ name: 'image-id', values: ids }]),
      termIndexes: idTerms,
    });
  }
  return plans;
}

/** The single `image-id` query of a resolved alias, or undefined when no parameter resolved. */
export function aliasImageQuery(
  resolved: readonly { readonly imageId: string; readonly variants: readonly AmiVariant[] }[],
  termIndex: number
): ImageQueryPlan | undefined {
  const knownVariants: Record<string, AmiVariant[]> = {};
  for (const { imageId, variants } of resolved) {
    const known = knownVariants[imageId] ?? [];
    knownVariants[imageId] = [...known, ...variants.filter((variant) => !known.includes(variant))];
  }
  const ids = Object.keys(knownVariants);
  if (ids.length === 0) return undefined;
  return {
    query: karpenterQuery([{ name: 'image-id', values: ids }]),
    termIndexes: [termIndex],
    knownVariants,
  };
}

export interface ImageMatchContext {
  /** The caller's account, for the `self` owner. */
  readonly accountId?: string;
  /** Needed only for `includeDeprecated: false` (deprecated images are then hidden). */
  readonly now?: Date;
}

/** EC2 `Owners` semantics: an account id, `self`, or an owner alias. */
function ownerMatches(image: Image, owner: string, accountId: string | undefined): boolean {
  if (owner === 'self') return accountId !== undefined && image.ownerId === accountId;
  if (OWNER_ALIASES.includes(owner)) return image.ownerAlias === owner;
  return image.ownerId === owner;
}

function imageAttribute(image: Image, name: string): readonly (string | undefined)[] | undefined {
  switch (name) {
    case 'image-id':
      return [image.id];
    case 'name':
      return [image.name];
    case 'state':
      return [image.state];
    case 'owner-id':
      return [image.ownerId];
    case 'owner-alias':
      return [image.ownerAlias];
    case 'architecture':
      return [image.architecture];
    case 'root-device-name':
      return [image.rootDeviceName];
    default:
      return undefined;
  }
}

/** Whether the image matches every filter (EC2 ANDs filters, ORs a filter's values). */
export function imageMatchesFilters(image: Image, filters: readonly Ec2Filter[]): boolean {
  return matchesFilters('images', filters, image.tags, (name) => imageAttribute(image, name));
}

/**
 * DescribeImages semantics for one image: disabled images are never listed (no
 * `IncludeDisabled`), deprecated ones only with `includeDeprecated` (or when owned by the caller),
 * then `Owners` and the filters. The offline adapter answers queries with this.
 */
export function imageMatchesQuery(
  image: Image,
  query: ImageQuery,
  context: ImageMatchContext = {}
): boolean {
  if (image.state === 'disabled') return false;
  if (!query.includeDeprecated && context.now && isDeprecatedAt(image, context.now)) {
    if (!ownerMatches(image, 'self', context.accountId)) return false;
  }
  const owners = query.owners ?? [];
  if (owners.length > 0 && !owners.some((owner) => ownerMatches(image, owner, context.accountId))) {
    return false;
  }
  return imageMatchesFilters(image, query.filters);
}

function isDeprecatedAt(image: Image, now: Date): boolean {
  if (image.deprecationTime === undefined) return false;
  const time = Date.parse(image.deprecationTime);
  return !Number.isNaN(time) && time <= now.getTime();
}

export interface TermMatchContext {
  readonly accountId?: string;
  /** Image ids an alias or `ssmParameter` term resolved to (they cannot be judged from the image). */
  readonly resolvedImageIds?: ReadonlySet<string>;
}

/**
 * Whether one selector term selects the image, state aside (the AMI-event handler asks this for
 * `pending`, `disabled`… images too). Agrees with `imageMatchesQuery` on the term's query minus
 * its state filter, for every image DescribeImages lists.
 */
export function imageMatchesTerm(
  image: Image,
  term: AmiSelectorTerm,
  context: TermMatchContext = {}
): boolean {
  if (term.alias || (!term.id && term.ssmParameter)) {
    return context.resolvedImageIds?.has(image.id) ?? false;
  }
  if (term.id) return ec2WildcardMatches(term.id, image.id);
  const owners = termOwners(term);
  if (owners.length > 0 && !owners.some((owner) => ownerMatches(image, owner, context.accountId))) {
    return false;
  }
  if (term.name && (image.name === undefined || !ec2WildcardMatches(term.name, image.name))) {
    return false;
  }
  return tagsMatchTerm(image.tags, term.tags);
}
