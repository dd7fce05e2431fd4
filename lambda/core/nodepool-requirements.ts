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
export function requirementAdmits(
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
