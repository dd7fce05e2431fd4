// What makes a finding "different": its material facts. A check names the evidence that matters
// (the set of failing subnets, the images, the denied actions); counts, durations, timestamps and
// the wording of the message are left out, so a scan that only re-words a finding changes nothing.
// The service's lifecycle and the CLI's baseline both decide "changed" with `changeBetween`.
import { type Finding, stableHash } from './model.js';

/**
 * An evidence path: `key` takes the whole value of `evidence[key]`; `key[].field` takes `field` of
 * every item of the array `evidence[key]`. Arrays are compared as sets (order never matters).
 */
export type MaterialPath = string;

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) {
    const items = value.map((item) => JSON.stringify(canonical(item)));
    return [...new Set(items)].sort();
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([key, item]) => [key, canonical(item)] as const);
    return Object.fromEntries(entries);
  }
  return value;
}

function ownValue(record: unknown, key: string): unknown {
  if (record === null || typeof record !== 'object') return undefined;
  return Object.hasOwn(record, key) ? (record as Record<string, unknown>)[key] : undefined;
}

/** The value one material path selects from the evidence (undefined when absent). */
export function selectMaterial(evidence: Readonly<Record<string, unknown>>, path: MaterialPath) {
  const [key = '', field] = path.split('[].');
  const value = ownValue(evidence, key);
  if (field === undefined) return value;
  if (!Array.isArray(value)) return undefined;
  return value.map((item) => ownValue(item, field));
}

/** The material facts of a finding, canonical (sorted keys, arrays as sorted sets). */
export function materialFacts(
  finding: Pick<Finding, 'status' | 'severity' | 'evidence'>,
  paths: readonly MaterialPath[]
): unknown {
  const evidence = Object.fromEntries(
    paths.map((path) => [path, selectMaterial(finding.evidence, path)])
  );
  return canonical({ status: finding.status, severity: finding.severity, evidence });
}

/** Keys an object lists first, in numeric order (array indices: 0 … 2^32 - 2). */
const ARRAY_INDEX = /^(?:0|[1-9][0-9]{0,9})$/;
const isArrayIndex = (key: string) => ARRAY_INDEX.test(key) && Number(key) < 0xffffffff;

/** A value `canonicalJson` does not write itself: the caller falls back to `canonical`. */
const UNCOMMON = Symbol('uncommon');

/**
 * `JSON.stringify(canonical(value))`, written directly, without the canonical copy (one per
 * finding). Throws `UNCOMMON` for values whose JSON a check never produces (bigint, a `toJSON`
 * function), which `materialHash` then writes the long way.
 */
function canonicalJson(value: unknown): string | undefined {
  if (Array.isArray(value)) {
    const items = new Set<string | undefined>();
    for (const item of value) items.add(canonicalJson(item));
    const sorted = [...items].sort();
    let json = '[';
    for (let index = 0; index < sorted.length; index++) {
      const item = sorted[index];
      if (index > 0) json += ',';
      json += item === undefined ? 'null' : JSON.stringify(item);
    }
    return `${json}]`;
  }
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record).sort();
    // The canonical object lists array-index keys first, in numeric order, as every object does.
    const ordered = keys.some(isArrayIndex)
      ? [
          ...keys.filter(isArrayIndex).sort((a, b) => Number(a) - Number(b)),
          ...keys.filter((key) => !isArrayIndex(key)),
        ]
      : keys;
    let json = '{';
    for (const key of ordered) {
      const item = record[key];
      if (item === undefined) continue;
      if (key === 'toJSON' && typeof item === 'function') throw UNCOMMON;
      const itemJson = canonicalJson(item);
      if (itemJson === undefined) continue;
      if (json.length > 1) json += ',';
      json += `${JSON.stringify(key)}:${itemJson}`;
    }
    return `${json}}`;
  }
  if (typeof value === 'bigint') throw UNCOMMON;
  return JSON.stringify(value);
}

export function materialHash(
  finding: Pick<Finding, 'status' | 'severity' | 'evidence'>,
  paths: readonly MaterialPath[]
): string {
  const facts = {
    status: finding.status,
    severity: finding.severity,
    evidence: Object.fromEntries(
      paths.map((path) => [path, selectMaterial(finding.evidence, path)])
    ),
  };
  try {
    return stableHash(canonicalJson(facts) as string);
  } catch (error) {
    if (error !== UNCOMMON) throw error;
    return stableHash(JSON.stringify(canonical(facts)));
  }
}

export type ChangeVerdict = 'new' | 'changed' | 'unchanged';

/** What is remembered of a finding from an earlier scan (stored state or a baseline report). */
export interface MaterialRecord {
  readonly materialHash?: string;
  readonly severity: Finding['severity'];
  readonly status: Finding['status'];
}

/**
 * How the finding compares with what an earlier scan saw of the same id. A record without a hash
 * (written before hashes existed) changes only with its severity or status.
 */
export function changeBetween(
  previous: MaterialRecord | undefined,
  current: Pick<Finding, 'materialHash' | 'severity' | 'status'>
): ChangeVerdict {
  if (previous === undefined) return 'new';
  if (previous.materialHash !== undefined) {
    return previous.materialHash === current.materialHash ? 'unchanged' : 'changed';
  }
  return previous.severity === current.severity && previous.status === current.status
    ? 'unchanged'
    : 'changed';
}
