// Byte budgets for the text a finding carries. Checks quote what they were given (AMI names, tag
// keys, error bodies), and nothing upstream bounds it: Karpenter's CRD sets no length on selector
// terms and the Kubernetes API serves objects of megabytes. One oversized value must not make a
// finding too big to store (DynamoDB: 400 KB per item), to publish (SNS: 256 KB per message) or
// to import (Security Hub: 240 KB per finding), or every finding of its cluster would be lost with
// it. So every finding is cut to these budgets where it is made (`toFinding`), before anything
// renders, stores, publishes or logs it, and the cut shows: `…(412,311 bytes elided)`.
//
// Why these numbers:
// - message 2 KiB: the longest message a check writes about real objects is under 0.5 KB, and the
//   SNS renderer shows at most 4,000 characters of it; the message is also the one finding text
//   the DynamoDB state item keeps.
// - remediation 16 KiB: a remediation may embed an IAM policy to paste, which must never be cut;
//   IAM holds at most 10,240 characters in an inline role policy (6,144 in a managed one), so any
//   policy that can be pasted fits, with room for the prose around it.
// - evidence: 1 KiB per string and 256 bytes per key (a name, an ARN, an error line: all far
//   shorter), and 64 KiB for the whole evidence as JSON, whatever the number of fields or items.
//   The largest evidence measured on real objects (every controller action denied) is ~8 KB.
// - location 1 KiB: a JSON path, which quotes keys of user maps (tags).
// A finding's text is then at most ~82 KiB, under a third of an SNS message before the renderer's
// own cuts, and its stored state item (message, ids, times, and the pending notification the
// renderer bounds to 240 KiB) stays under DynamoDB's 400 KB.
//
// Cuts are deterministic (the same input gives the same output), so a finding's material hash and
// id stay stable from scan to scan, and idempotent (a cut text is within budget, so it is left as
// is). They fall on a code point boundary, never inside a UTF-8 sequence or a surrogate pair.

/** The budgets, in UTF-8 bytes. */
export const FINDING_TEXT_BUDGET = {
  message: 2 * 1024,
  remediation: 16 * 1024,
  evidenceString: 1024,
  evidenceKey: 256,
  evidence: 64 * 1024,
  location: 1024,
} as const;

/** UTF-8 byte length, counting a lone surrogate as the 3 bytes of U+FFFD it is encoded as. */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && isLowSurrogate(text.charCodeAt(index + 1))) {
      bytes += 4;
      index++;
    } else bytes += 3;
  }
  return bytes;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** `412311` as `412,311`. */
export function groupThousands(value: number): string {
  const digits = String(value);
  let grouped = '';
  for (let index = 0; index < digits.length; index++) {
    if (index > 0 && (digits.length - index) % 3 === 0) grouped += ',';
    grouped += digits[index];
  }
  return grouped;
}

/** What replaces the elided tail: `…(412,311 bytes elided)`. */
export function elisionMarker(elidedBytes: number): string {
  return `…(${groupThousands(elidedBytes)} bytes elided)`;
}

const TRAILING_MARKER = /…\((\d{1,3}(?:,\d{3})*) bytes elided\)$/;

/** Smallest budget `elideText` honours: room for the longest marker and some text. */
const MIN_BUDGET = 64;

/**
 * Characters of credentials and of the `name=value` pairs `redactSecrets` recognises. Redaction
 * runs on findings after they are cut, so a cut never leaves a short fragment of such a run (a
 * 40-character secret key cut to 30 no longer looks like one): it moves back to the start of the
 * run when that is at most `MAX_BACKOFF` characters away. A longer fragment is still recognised.
 */
const TOKEN_CHAR = /[A-Za-z0-9+/=_.%~-]/;
const MAX_BACKOFF = 128;

/** The index (in UTF-16 units, on a code point boundary) of the longest prefix within `bytes`. */
function prefixEnd(text: string, bytes: number): number {
  let used = 0;
  let index = 0;
  while (index < text.length) {
    const code = text.charCodeAt(index);
    const pair = code >= 0xd800 && code <= 0xdbff && isLowSurrogate(text.charCodeAt(index + 1));
    const size = code < 0x80 ? 1 : code < 0x800 ? 2 : pair ? 4 : 3;
    if (used + size > bytes) break;
    used += size;
    index += pair ? 2 : 1;
  }
  return index;
}

function backOffTokenRun(text: string, end: number): number {
  if (end === 0 || end >= text.length) return end;
  if (!TOKEN_CHAR.test(text.charAt(end)) || !TOKEN_CHAR.test(text.charAt(end - 1))) return end;
  const limit = Math.max(0, end - MAX_BACKOFF);
  for (let start = end - 1; start >= limit; start--) {
    if (start === 0) return 0;
    if (!TOKEN_CHAR.test(text.charAt(start - 1))) return start;
  }
  return end;
}

/**
 * `text` within `maxBytes` UTF-8 bytes: unchanged when it fits, else its head followed by
 * `…(N bytes elided)`, N counting the bytes of the original that are not shown (a text that ends
 * with a marker already is cut again with the counts added, never two markers). A budget under
 * 64 bytes counts as 64: the marker alone takes up to 38.
 */
export function elideText(text: string, maxBytes: number): string {
  // Every UTF-16 unit is at most 3 UTF-8 bytes: most texts are decided without counting.
  if (text.length * 3 <= maxBytes) return text;
  const total = utf8Length(text);
  if (total <= maxBytes) return text;
  const budget = Math.max(maxBytes, MIN_BUDGET);
  // Only the tail can hold a marker: no need to search a long text for one.
  const tailStart = Math.max(0, text.length - 48);
  const earlier = TRAILING_MARKER.exec(text.slice(tailStart));
  const body = earlier === null ? text : text.slice(0, tailStart + earlier.index);
  const alreadyElided = earlier === null ? 0 : Number((earlier[1] ?? '0').replaceAll(',', ''));
  const bodyBytes = earlier === null ? total : utf8Length(body);
  // Room for the marker at its longest: the count never exceeds what the text stands for.
  const room = budget - utf8Length(elisionMarker(bodyBytes + alreadyElided));
  const end = backOffTokenRun(body, prefixEnd(body, room));
  const kept = body.slice(0, end);
  return `${kept}${elisionMarker(bodyBytes - utf8Length(kept) + alreadyElided)}`;
}

/** Beyond this depth (or in a cycle) evidence is replaced by a marker; checks nest far less. */
const MAX_DEPTH = 64;

interface EvidenceShape {
  /** Budget of each string value, in bytes. */
  readonly string: number;
  /** Items kept per array, and keys per object; the rest is counted in a marker. */
  readonly items: number;
}

/**
 * Ever tighter shapes, tried in order until the evidence fits its total budget. Each is applied to
 * the original evidence, so the result depends only on the evidence (deterministic).
 */
const SHAPES: readonly EvidenceShape[] = [
  { string: FINDING_TEXT_BUDGET.evidenceString, items: Number.POSITIVE_INFINITY },
  { string: 512, items: 200 },
  { string: 256, items: 50 },
  { string: 128, items: 20 },
  { string: 64, items: 10 },
];

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * Whether `shapeValue` leaves `value` as it is, found without copying anything: almost every
 * evidence fits, and shaping it would copy each array and object only to return the original.
 */
function fitsShape(value: unknown, shape: EvidenceShape, depth: number): boolean {
  if (typeof value === 'string') return elideText(value, shape.string) === value;
  const isArray = Array.isArray(value);
  if (!isArray && !isPlainObject(value)) return true;
  if (depth >= MAX_DEPTH) return false;
  if (isArray) {
    if (value.length > shape.items) return false;
    for (const item of value) if (!fitsShape(item, shape, depth + 1)) return false;
    return true;
  }
  const keys = Object.keys(value);
  if (keys.length > shape.items) return false;
  for (const key of keys) {
    if (elideText(key, FINDING_TEXT_BUDGET.evidenceKey) !== key) return false;
    if (!fitsShape(value[key], shape, depth + 1)) return false;
  }
  return true;
}

/** `value` with every string within the shape; the same reference when nothing was cut. */
function shapeValue(value: unknown, shape: EvidenceShape, depth: number): unknown {
  if (typeof value === 'string') return elideText(value, shape.string);
  const isArray = Array.isArray(value);
  if (!isArray && !isPlainObject(value)) return value;
  if (depth >= MAX_DEPTH) return '…(nested too deep)';
  if (isArray) {
    let changed = value.length > shape.items;
    const items = value.slice(0, shape.items).map((item: unknown) => {
      const next = shapeValue(item, shape, depth + 1);
      if (next !== item) changed = true;
      return next;
    });
    if (value.length > shape.items)
      items.push(`…(${value.length - items.length} more items elided)`);
    return changed ? items : value;
  }
  const entries = Object.entries(value);
  let changed = entries.length > shape.items;
  const kept: [string, unknown][] = [];
  const seen = new Set<string>();
  for (const [key, item] of entries.slice(0, shape.items)) {
    const nextKey = elideText(key, FINDING_TEXT_BUDGET.evidenceKey);
    const next = shapeValue(item, shape, depth + 1);
    if (nextKey !== key || next !== item) changed = true;
    // Two long keys cut to the same text: the first stands for both.
    if (seen.has(nextKey)) continue;
    seen.add(nextKey);
    kept.push([nextKey, next]);
  }
  if (entries.length > shape.items)
    kept.push(['…', `${entries.length - shape.items} more keys elided`]);
  // fromEntries defines own properties: a `__proto__` key stays data.
  return changed ? Object.fromEntries(kept) : value;
}

function jsonBytes(value: unknown): number {
  return utf8Length(JSON.stringify(value) ?? '');
}

/** Longest JSON of a number: `-1.7976931348623157e+308` and `-0.0000012345678901234567` are 24. */
const NUMBER_JSON_BYTES = 32;

/**
 * At least the UTF-8 bytes of `JSON.stringify(value)`, without writing it (a UTF-16 unit is at
 * most 6 bytes, as `\uXXXX`); undefined past `limit` or for what JSON may write differently
 * (`toJSON`, class instances, bigint, nesting beyond `MAX_DEPTH`).
 */
function jsonBytesBound(value: unknown, limit: number, depth = 0): number | undefined {
  switch (typeof value) {
    case 'string':
      return 2 + value.length * 6;
    case 'number':
      return NUMBER_JSON_BYTES;
    case 'boolean':
    case 'undefined':
    case 'function':
    case 'symbol':
      return 5;
    case 'bigint':
      return undefined;
  }
  if (value === null) return 4;
  if (depth >= MAX_DEPTH || typeof (value as { toJSON?: unknown }).toJSON === 'function')
    return undefined;
  let bytes = 2;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const item = jsonBytesBound(value[index], limit, depth + 1);
      if (item === undefined) return undefined;
      bytes += item + 1;
      if (bytes > limit) return undefined;
    }
    return bytes;
  }
  if (!isPlainObject(value)) return undefined;
  for (const key of Object.keys(value)) {
    const item = jsonBytesBound(value[key], limit, depth + 1);
    if (item === undefined) return undefined;
    bytes += 2 + key.length * 6 + 1 + item + 1;
    if (bytes > limit) return undefined;
  }
  return bytes;
}

/**
 * `jsonBytes(value) <= maxBytes`: written and counted only when a bound does not already say so
 * (a few hundred bytes of evidence per finding, 225,000 findings in a 5,000-NodeClass scan).
 */
function jsonFits(value: unknown, maxBytes: number): boolean {
  const bound = jsonBytesBound(value, maxBytes);
  if (bound !== undefined && bound <= maxBytes) return true;
  const json = JSON.stringify(value) ?? '';
  return json.length * 3 <= maxBytes || utf8Length(json) <= maxBytes;
}

/**
 * The evidence within its budgets: each string within `evidenceString` bytes, and the whole, as
 * JSON, within `evidence` bytes (strings cut shorter and long lists shortened until it fits; as a
 * last resort, top-level fields that do not fit are replaced by a marker). Same reference when it
 * already fits.
 */
export function boundEvidence(
  evidence: Readonly<Record<string, unknown>>,
  maxBytes: number = FINDING_TEXT_BUDGET.evidence
): Readonly<Record<string, unknown>> {
  let shaped: Record<string, unknown> = {};
  for (const shape of SHAPES) {
    // Same reference when nothing is cut, as shapeValue returns it; found without copying.
    shaped = (fitsShape(evidence, shape, 0) ? evidence : shapeValue(evidence, shape, 0)) as Record<
      string,
      unknown
    >;
    if (jsonFits(shaped, maxBytes)) return shaped;
  }
  // Still too big (very many top-level fields, or deep nesting): keep fields in order while they
  // fit, a marker for each that does not, and stop with a count when not even markers fit.
  const reserve = 64;
  const kept: [string, unknown][] = [];
  let used = 2;
  const entries = Object.entries(shaped);
  for (const [index, [key, value]] of entries.entries()) {
    const whole = jsonBytes(key) + 1 + jsonBytes(value) + 1;
    const marker = elisionMarker(jsonBytes(value));
    const cut = jsonBytes(key) + 1 + jsonBytes(marker) + 1;
    if (used + whole + reserve <= maxBytes) {
      kept.push([key, value]);
      used += whole;
    } else if (used + cut + reserve <= maxBytes) {
      kept.push([key, marker]);
      used += cut;
    } else {
      kept.push(['…', `${entries.length - index} more keys elided`]);
      break;
    }
  }
  return Object.fromEntries(kept);
}

/** The text fields of a finding, as a check drafted them. */
export interface FindingText {
  readonly message: string;
  readonly remediation: string;
  readonly evidence: Readonly<Record<string, unknown>>;
  readonly location?: { readonly path: string } | undefined;
}

/** The finding's text within `FINDING_TEXT_BUDGET` (unchanged parts keep their reference). */
export function boundFindingText<T extends FindingText>(text: T): T {
  const message = elideText(text.message, FINDING_TEXT_BUDGET.message);
  const remediation = elideText(text.remediation, FINDING_TEXT_BUDGET.remediation);
  const evidence = boundEvidence(text.evidence);
  const path =
    text.location === undefined
      ? undefined
      : elideText(text.location.path, FINDING_TEXT_BUDGET.location);
  if (
    message === text.message &&
    remediation === text.remediation &&
    evidence === text.evidence &&
    path === text.location?.path
  ) {
    return text;
  }
  return {
    ...text,
    message,
    remediation,
    evidence,
    ...(text.location === undefined || path === undefined
      ? {}
      : { location: { ...text.location, path } }),
  };
}
