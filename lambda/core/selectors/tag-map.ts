// Tag maps keyed by what EC2 accepts as a tag key — any string, including `__proto__`,
// `constructor` and `toString`. Plain objects get these wrong: an assignment to `__proto__` replaces
// the prototype (the tag vanishes), and a lookup of `constructor` finds Object.prototype's member.
// So untrusted maps are parsed into null-prototype objects, and every read is an own-property read.
import * as z from 'zod';
import type { Tags } from '../facts/aws.js';

/** A null-prototype map from entries (the last value of a repeated key wins). */
export function tagMapOf(entries: Iterable<readonly [string, string]>): Tags {
  const map: Record<string, string> = Object.create(null);
  // Without a prototype there is no `__proto__` setter: every key becomes an own property.
  for (const [key, value] of entries) map[key] = value;
  return map;
}

/** The value of an own tag key; inherited members are never tag values. */
export function tagValue(tags: Tags, key: string): string | undefined {
  return Object.hasOwn(tags, key) ? tags[key] : undefined;
}

function isPlainRecord(input: unknown): input is Record<string, unknown> {
  if (typeof input !== 'object' || input === null) return false;
  const prototype = Object.getPrototypeOf(input);
  return prototype === Object.prototype || prototype === null;
}

/**
 * `z.record(z.string(), z.string())` that keeps every key: zod's record drops `__proto__`
 * (JSON.parse and YAML keep it as an own key), which would turn a selector term on that tag into
 * an empty one that selects everything. Output is a null-prototype object.
 */
// Pure: a bundle that only reads tags (dispatch) leaves zod out.
export const StringMapSchema = /* @__PURE__ */ z
  .unknown()
  .transform((input, ctx): Record<string, string> => {
    if (!isPlainRecord(input)) {
      ctx.addIssue({ code: 'invalid_type', expected: 'record', input });
      return z.NEVER;
    }
    const map: Record<string, string> = Object.create(null);
    for (const key of Object.keys(input)) {
      const value = input[key];
      if (typeof value === 'string') map[key] = value;
      else ctx.addIssue({ code: 'invalid_type', expected: 'string', input: value, path: [key] });
    }
    return map;
  });
