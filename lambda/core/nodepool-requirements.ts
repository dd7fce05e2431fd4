// NodePool requirements (`spec.template.spec.requirements`) with Kubernetes node-selector
// semantics: which label values they admit. The one implementation the NodePool checks, the
// instance-type filter and the AWS fact collection share.
import type { NodePool, NodeSelectorRequirement } from './schema.js';

export type { NodeSelectorRequirement };

/** A NodePool's `spec.template.spec.requirements`, in order. */
export function nodePoolRequirements(pool: NodePool): readonly NodeSelectorRequirement[] {
  return pool.spec.template.spec.requirements;
}

/** A requirement value as the integer Gt/Lt/Gte/Lte compare, or undefined. */
function integerOf(value: string | undefined): number | undefined {
  return value !== undefined && /^-?[0-9]+$/.test(value) ? Number(value) : undefined;
}

/**
 * Whether one requirement admits a label value (`undefined`: the node lacks the label), with
 * Kubernetes node-selector semantics: In/Exists/Gt/Lt/Gte/Lte need the label, NotIn and
 * DoesNotExist admit its absence. An unknown operator restricts nothing (nodepool-schema-valid
 * reports it).
 */
function requirementAdmits(
  requirement: NodeSelectorRequirement,
  value: string | undefined
): boolean {
  const values = requirement.values ?? [];
  const bound = integerOf(values[0]);
  const number = integerOf(value);
  switch (requirement.operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
      return number !== undefined && bound !== undefined && number > bound;
    case 'Gte':
      return number !== undefined && bound !== undefined && number >= bound;
    case 'Lt':
      return number !== undefined && bound !== undefined && number < bound;
    case 'Lte':
      return number !== undefined && bound !== undefined && number <= bound;
    default:
      return true;
  }
}

/** Whether every requirement on `key` admits `value` (`undefined`: the label is absent). */
export function labelAdmits(
  requirements: readonly NodeSelectorRequirement[],
  key: string,
  value: string | undefined
): boolean {
  return requirements.every((r) => r.key !== key || requirementAdmits(r, value));
}

/** The candidates (e.g. `['amd64', 'arm64']`) the requirements on `key` admit, in order. */
export function admittedValues(
  requirements: readonly NodeSelectorRequirement[],
  key: string,
  candidates: readonly string[]
): string[] {
  return candidates.filter((candidate) => labelAdmits(requirements, key, candidate));
}

/** What the requirements on one label key allow, all of them ANDed. */
export interface LabelValueSet {
  readonly key: string;
  /** False when no requirement names the key (then any value, or none, is allowed). */
  readonly constrained: boolean;
  /** The allowed values when an `In` lists them (NotIn and bounds applied); else undefined. */
  readonly values?: ReadonlySet<string>;
  /** Values a NotIn excludes. */
  readonly excluded: ReadonlySet<string>;
  /** Exclusive integer bounds from Gt/Gte/Lt/Lte (Gte n is stored as greaterThan n-1). */
  readonly greaterThan?: number;
  readonly lessThan?: number;
  /** Whether a node lacking the label satisfies the requirements. */
  readonly allowsAbsent: boolean;
  /** Whether some value satisfies them (false: DoesNotExist, or contradictory requirements). */
  readonly allowsSomeValue: boolean;
}

/** The value set the requirements allow for `key`, for In, NotIn, Exists, DoesNotExist, Gt/Lt/Gte/Lte. */
export function labelValueSet(
  requirements: readonly NodeSelectorRequirement[],
  key: string
): LabelValueSet {
  const own = requirements.filter((r) => r.key === key);
  let values: Set<string> | undefined;
  const excluded = new Set<string>();
  let greaterThan: number | undefined;
  let lessThan: number | undefined;
  let forbidden = false;
  for (const requirement of own) {
    const listed = requirement.values ?? [];
    const bound = integerOf(listed[0]);
    switch (requirement.operator) {
      case 'In':
        values = new Set(listed.filter((v) => values === undefined || values.has(v)));
        break;
      case 'NotIn':
        for (const v of listed) excluded.add(v);
        break;
      case 'DoesNotExist':
        forbidden = true;
        break;
      case 'Gt':
      case 'Gte':
        if (bound !== undefined) {
          const exclusive = requirement.operator === 'Gte' ? bound - 1 : bound;
          greaterThan = Math.max(greaterThan ?? exclusive, exclusive);
        }
        break;
      case 'Lt':
      case 'Lte':
        if (bound !== undefined) {
          const exclusive = requirement.operator === 'Lte' ? bound + 1 : bound;
          lessThan = Math.min(lessThan ?? exclusive, exclusive);
        }
        break;
      default:
        break;
    }
  }
  const finite =
    values === undefined ? undefined : new Set([...values].filter((v) => labelAdmits(own, key, v)));
  const boundsMeet =
    greaterThan === undefined || lessThan === undefined || greaterThan + 1 < lessThan;
  return {
    key,
    constrained: own.length > 0,
    ...(finite ? { values: finite } : {}),
    excluded,
    ...(greaterThan === undefined ? {} : { greaterThan }),
    ...(lessThan === undefined ? {} : { lessThan }),
    allowsAbsent: labelAdmits(own, key, undefined),
    allowsSomeValue: !forbidden && boundsMeet && (finite === undefined || finite.size > 0),
  };
}

/**
 * One label key's requirement as Karpenter's scheduler holds it
 * (https://github.com/kubernetes-sigs/karpenter/blob/v1.14.1/pkg/scheduling/requirement.go): a
 * value set or its complement, with inclusive integer bounds (Gt n is Gte n+1, Lt n is Lte n-1).
 * Several requirements on one key are intersected, so what a NodePool allows on a key is one of
 * these, whatever operators it combines.
 */
export interface KeyRequirement {
  readonly key: string;
  readonly complement: boolean;
  readonly values: ReadonlySet<string>;
  readonly gte?: number;
  readonly lte?: number;
  readonly minValues?: number;
}

/** `strconv.Atoi`: a decimal integer with an optional sign, else undefined. */
function atoi(value: string | undefined): number | undefined {
  return value !== undefined && /^[+-]?\d+$/.test(value) ? Number(value) : undefined;
}

/** Karpenter's `NewRequirementWithFlexibility` (the key is normalized by the caller). */
export function keyRequirement(
  key: string,
  operator: string,
  values: readonly string[],
  minValues?: number
): KeyRequirement {
  const flexibility = minValues === undefined ? {} : { minValues };
  const bound = atoi(values[0]) ?? 0;
  switch (operator) {
    case 'In':
      return { key, complement: false, values: new Set(values), ...flexibility };
    case 'NotIn':
      return { key, complement: true, values: new Set(values), ...flexibility };
    case 'DoesNotExist':
      return { key, complement: false, values: new Set(), ...flexibility };
    case 'Gt':
      if (bound >= Number.MAX_SAFE_INTEGER) return keyRequirement(key, 'DoesNotExist', []);
      return { key, complement: true, values: new Set(), gte: bound + 1, ...flexibility };
    case 'Lt':
      return { key, complement: true, values: new Set(), lte: bound - 1, ...flexibility };
    case 'Gte':
      return { key, complement: true, values: new Set(), gte: bound, ...flexibility };
    case 'Lte':
      return { key, complement: true, values: new Set(), lte: bound, ...flexibility };
    default:
      // Exists, and operators the CRD rejects (nodepool-schema-valid reports them).
      return { key, complement: true, values: new Set(), ...flexibility };
  }
}

function withinBounds(value: string, gte: number | undefined, lte: number | undefined): boolean {
  if (gte === undefined && lte === undefined) return true;
  const number = atoi(value);
  if (number === undefined) return false;
  return (gte === undefined || number >= gte) && (lte === undefined || number <= lte);
}

const maxOf = (a: number | undefined, b: number | undefined) =>
  a === undefined ? b : b === undefined ? a : Math.max(a, b);
const minOf = (a: number | undefined, b: number | undefined) =>
  a === undefined ? b : b === undefined ? a : Math.min(a, b);

/** Karpenter's `Requirement.Intersection`: both requirements at once. */
export function intersectRequirements(a: KeyRequirement, b: KeyRequirement): KeyRequirement {
  const complement = a.complement && b.complement;
  const gte = maxOf(a.gte, b.gte);
  const lte = minOf(a.lte, b.lte);
  const minValues = maxOf(a.minValues, b.minValues);
  const flexibility = minValues === undefined ? {} : { minValues };
  if (gte !== undefined && lte !== undefined && gte > lte) {
    return { key: a.key, complement: false, values: new Set(), ...flexibility };
  }
  let values: Set<string>;
  if (a.complement && b.complement) values = new Set([...a.values, ...b.values]);
  else if (a.complement) values = new Set([...b.values].filter((v) => !a.values.has(v)));
  else if (b.complement) values = new Set([...a.values].filter((v) => !b.values.has(v)));
  else values = new Set([...a.values].filter((v) => b.values.has(v)));
  for (const value of values) if (!withinBounds(value, gte, lte)) values.delete(value);
  return {
    key: a.key,
    complement,
    values,
    // A concrete set keeps no bounds.
    ...(complement && gte !== undefined ? { gte } : {}),
    ...(complement && lte !== undefined ? { lte } : {}),
    ...flexibility,
  };
}

/** Karpenter's `Requirement.Operator()`: Gt/Lt/Gte/Lte read as Exists with bounds. */
export function operatorOf(
  requirement: KeyRequirement
): 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' {
  if (requirement.complement) return requirement.values.size > 0 ? 'NotIn' : 'Exists';
  return requirement.values.size > 0 ? 'In' : 'DoesNotExist';
}

/**
 * Whether something whose label `key` has `values` (`[]`: Karpenter defines the key with
 * DoesNotExist, as for a label the instance type lacks) satisfies the requirement: Karpenter's
 * `Requirements.Intersects` for one key (requirements.go), `values` as an `In` requirement.
 */
export function requirementAdmitsValues(
  requirement: KeyRequirement,
  values: readonly string[]
): boolean {
  const { gte, lte } = requirement;
  const intersects = values.some(
    (value) =>
      requirement.values.has(value) !== requirement.complement && withinBounds(value, gte, lte)
  );
  if (intersects) return true;
  // No common value: still compatible when both sides allow the label to be absent.
  const operator = operatorOf(requirement);
  return values.length === 0 && (operator === 'NotIn' || operator === 'DoesNotExist');
}

/** How a combined requirement reads in a message (Karpenter's `Requirement.String()`, no minValues). */
export function keyRequirementText(requirement: KeyRequirement): string {
  const operator = operatorOf(requirement);
  let text =
    operator === 'Exists' || operator === 'DoesNotExist'
      ? `${requirement.key} ${operator}`
      : `${requirement.key} ${operator} [${[...requirement.values].sort().join(', ')}]`;
  if (requirement.gte !== undefined) text += ` >=${requirement.gte}`;
  if (requirement.lte !== undefined) text += ` <=${requirement.lte}`;
  return text;
}

/**
 * Whether the NodePool may launch Spot: its `karpenter.sh/capacity-type` requirements admit `spot`.
 * Without any requirement on that key Karpenter launches on-demand only.
 */
export function allowsSpot(pool: NodePool): boolean {
  const requirements = nodePoolRequirements(pool);
  const key = 'karpenter.sh/capacity-type';
  return requirements.some((r) => r.key === key) && labelAdmits(requirements, key, 'spot');
}
