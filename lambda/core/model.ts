import type { UnavailableReason } from './facts/slice.js';

/** Severities, most severe first. The order is part of the contract (`--fail-on`). */
export const SEVERITIES = ['critical', 'high', 'medium', 'low', 'info'] as const;
export type Severity = (typeof SEVERITIES)[number];

/**
 * What a check can conclude about a resource. `notice`: nothing is wrong, but there is something
 * to know (expected behaviour that looks like an error, advice while nothing fails). A notice is
 * shown in reports and never fails `--fail-on`, is never stored as open, alerted or reminded, and
 * reaches Security Hub as PASSED.
 */
export const CHECK_STATUSES = ['fail', 'error', 'notice', 'pass', 'not-applicable'] as const;
export type CheckStatus = (typeof CHECK_STATUSES)[number];

/**
 * A finding's status: what its check concluded, or `suppressed` when a `fail`/`error` was accepted
 * by an annotation or a config rule (the finding keeps its place in reports, never alerts or fails).
 */
export const FINDING_STATUSES = [...CHECK_STATUSES, 'suppressed'] as const;
export type FindingStatus = (typeof FINDING_STATUSES)[number];

/** Why a finding is `suppressed`, and what it would be without the suppression. */
export interface Suppression {
  readonly reason: string;
  /** `annotation`: `ignore-check.nodeclass-scanner/<check-id>` on the object; `config`: an ignore rule. */
  readonly source: 'annotation' | 'config';
  /** The status the check concluded. */
  readonly status: 'fail' | 'error';
  /** Date after which the rule or annotation (`; expires=`) no longer applies. */
  readonly expires?: string;
}

export type ResourceKind = 'EC2NodeClass' | 'NodePool' | 'Cluster';

/**
 * Why a finding could not be evaluated: an input was not read in this scan. `not-collected`: the
 * scan never read it (it ran out of time, or the collector did not reach it).
 */
export interface ReadFault {
  readonly reason: UnavailableReason | 'not-collected';
  /** What could not be read, as a person names it (`subnets (DescribeSubnets)`). */
  readonly input: string;
}

/**
 * Which manifest object a resource is, when its name does not say: set only when the scanned
 * files hold more than one object of that cluster, kind and name (Karpenter's examples define
 * `default` in many files). World and live objects never need it: names are unique per cluster.
 */
export interface ObjectOrigin {
  /** The file as the scan named it (`<stdin>` for standard input). */
  readonly file: string;
  /** 0-based index of the YAML document in the file. */
  readonly document: number;
  /** 0-based index in the document's `List` items, when the object is one. */
  readonly item?: number;
}

export interface ResourceRef {
  /** Cluster name; empty for manifests scanned without a cluster. */
  readonly cluster: string;
  readonly kind: ResourceKind;
  readonly name: string;
  /** Present only to tell same-named manifest objects apart (see `ObjectOrigin`). */
  readonly origin?: ObjectOrigin;
}

/** `file#2` or `file#2.items[0]` (documents counted from 1), as parse errors name a document. */
export function originLabel(origin: ObjectOrigin): string {
  const item = origin.item === undefined ? '' : `.items[${origin.item}]`;
  return `${origin.file}#${origin.document + 1}${item}`;
}

/** One key per object: cluster, kind, name and, when present, origin. */
export function resourceKey(resource: ResourceRef): string {
  const { origin } = resource;
  const parts = [resource.cluster, resource.kind, resource.name];
  if (origin !== undefined)
    parts.push(origin.file, String(origin.document), String(origin.item ?? ''));
  return parts.join('\u0000');
}

export function sameResource(a: ResourceRef, b: ResourceRef): boolean {
  return resourceKey(a) === resourceKey(b);
}

/** Where a finding points inside its source document (a dotted JSON path such as `spec.tags`). */
export interface FindingLocation {
  readonly path: string;
}

export interface Finding {
  /** Stable for the same check on the same resource (and discriminator): used for dedup and resolve. */
  readonly id: string;
  readonly checkId: string;
  readonly severity: Severity;
  readonly status: FindingStatus;
  readonly resource: ResourceRef;
  readonly message: string;
  readonly remediation: string;
  readonly evidence: Readonly<Record<string, unknown>>;
  readonly location?: FindingLocation;
  /**
   * Hash of the finding's material facts: status, severity and the evidence its check declares
   * material (`CheckMeta.material`). Counts, durations and wording are not in it, so only a change
   * that matters to the reader changes it.
   */
  readonly materialHash: string;
  /**
   * Set when this finding could not be evaluated because another one failed: the root finding's
   * id. Such a finding is shown under its root and never alerts or counts on its own.
   */
  readonly causedBy?: string;
  /**
   * Set on an `error` (also once suppressed) that could not be evaluated because an input could not
   * be read in this scan, or whose root could not (a follow-on inherits it). Its stored state is
   * kept as it was: a read fault is never a verdict (lifecycle.ts).
   */
  readonly readFault?: ReadFault;
  /** Present exactly when `status` is `suppressed`. */
  readonly suppression?: Suppression;
}

/** 0 for critical … 4 for info. */
export function severityRank(severity: Severity): number {
  return SEVERITIES.indexOf(severity);
}

export function isAtOrAbove(severity: Severity, threshold: Severity): boolean {
  return severityRank(severity) <= severityRank(threshold);
}

export function isSeverity(value: string): value is Severity {
  return (SEVERITIES as readonly string[]).includes(value);
}

/** Two hex digits per byte value: faster than `toString(16)` on every hash. */
const HEX_BYTE = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

const hex32 = (value: number): string =>
  (HEX_BYTE[value >>> 24] as string) +
  (HEX_BYTE[(value >>> 16) & 0xff] as string) +
  (HEX_BYTE[(value >>> 8) & 0xff] as string) +
  (HEX_BYTE[value & 0xff] as string);

/**
 * `stableHash` of a text given in parts, without building the text: `add(a).add(b).digest()` is
 * `stableHash(a + b)` as long as no part ends between the two halves of a surrogate pair.
 */
export class StableHasher {
  private high = 0xcbf29ce4;
  private low = 0x84222325;

  add(text: string): this {
    let high = this.high;
    let low = this.low;
    const length = text.length;
    for (let index = 0; index < length; index++) {
      let code = text.charCodeAt(index);
      // A surrogate pair is one code point, as `for…of` read it: ids stay what they were.
      if (code >= 0xd800 && code <= 0xdbff && index + 1 < length) {
        const next = text.charCodeAt(index + 1);
        if (next >= 0xdc00 && next <= 0xdfff) {
          code = (code - 0xd800) * 0x400 + (next - 0xdc00) + 0x10000;
          index++;
        }
      }
      low = (low ^ code) >>> 0;
      // hash * 0x100000001b3 mod 2^64 = hash * 0x1b3 + (hash << 40), on 32-bit halves; every
      // intermediate is an exact integer below 2^53.
      const lowProduct = low * 0x1b3;
      const lowNext = lowProduct >>> 0;
      const carry = (lowProduct - lowNext) / 0x100000000;
      high = (Math.imul(high, 0x1b3) + ((low << 8) >>> 0) + carry) >>> 0;
      low = lowNext;
    }
    this.high = high;
    this.low = low;
    return this;
  }

  /**
   * Adds `JSON.stringify(value)` (`null` for what it leaves out), without building it for a string:
   * its characters are hashed between quotes in one pass, which a character JSON escapes (a
   * quote, a backslash, a control, a surrogate) abandons for the long way.
   */
  addJson(value: unknown): this {
    if (typeof value !== 'string') return this.add(JSON.stringify(value) ?? 'null');
    let high = this.high;
    let low = this.low;
    const length = value.length;
    // Positions -1 and `length` are the quotes.
    for (let index = -1; index <= length; index++) {
      let code = 0x22;
      if (index >= 0 && index < length) {
        code = value.charCodeAt(index);
        if (code < 0x20 || code === 0x22 || code === 0x5c || (code >= 0xd800 && code <= 0xdfff))
          return this.add(JSON.stringify(value));
      }
      low = (low ^ code) >>> 0;
      const lowProduct = low * 0x1b3;
      const lowNext = lowProduct >>> 0;
      const carry = (lowProduct - lowNext) / 0x100000000;
      high = (Math.imul(high, 0x1b3) + ((low << 8) >>> 0) + carry) >>> 0;
      low = lowNext;
    }
    this.high = high;
    this.low = low;
    return this;
  }

  digest(): string {
    return hex32(this.high) + hex32(this.low);
  }
}

/**
 * 64-bit FNV-1a over code points, as 16 hex digits. Pure (core has no crypto module); collisions
 * only matter between findings of one account, where 64 bits is ample. Computed on two 32-bit
 * halves because BigInt arithmetic per character is slow on large inputs.
 */
export function stableHash(text: string): string {
  return new StableHasher().add(text).digest();
}

/**
 * The origin is hashed only when present, so findings of objects whose name is unique in the scan
 * (every world and live object) keep the ids they always had.
 */
export function findingId(checkId: string, resource: ResourceRef, discriminator = ''): string {
  const parts: unknown[] = [checkId, resource.cluster, resource.kind, resource.name, discriminator];
  const { origin } = resource;
  if (origin !== undefined) parts.push(origin.file, origin.document, origin.item ?? '');
  // The hash of `parts.join('\u0000')`, hashed part by part.
  const hasher = new StableHasher();
  for (let index = 0; index < parts.length; index++) {
    if (index > 0) hasher.add('\u0000');
    const part = parts[index];
    hasher.add(part === undefined || part === null ? '' : String(part));
  }
  return hasher.digest();
}
