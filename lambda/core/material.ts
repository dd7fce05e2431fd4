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

export function materialHash(
  finding: Pick<Finding, 'status' | 'severity' | 'evidence'>,
  paths: readonly MaterialPath[]
): string {
  return stableHash(JSON.stringify(materialFacts(finding, paths)));
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
