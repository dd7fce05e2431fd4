// YAML read as kubectl and the API server read it: sigs.k8s.io/yaml over go-yaml v2, that is YAML
// 1.1 scalars (`yes`/`off` are booleans, `0777` is octal), `<<` merge keys applied where they stand,
// the last of duplicate keys winning, and the documents go-yaml or the JSON conversion refuses
// refused here too. The facts and their sources: docs/yaml-as-kubernetes-reads-it.md.
//
// The YAML parser (the `yaml` package, failsafe schema: every scalar a string) only builds the
// syntax tree; this module gives its nodes their Kubernetes meaning.
import { type Document, isAlias, isMap, isScalar, isSeq, type Node, type Scalar } from 'yaml';

/** A document Kubernetes would refuse, or one the scanner will not expand; `offset` into the text. */
export class KubernetesYamlError extends Error {
  public readonly offset: number;
  public readonly reason: 'too-deep' | 'invalid';
  public constructor(message: string, offset: number, reason: 'too-deep' | 'invalid' = 'invalid') {
    super(message);
    this.name = 'KubernetesYamlError';
    this.offset = offset;
    this.reason = reason;
  }
}

/** Where the entries of one converted map (key → offset of its key) or sequence (items) came from. */
export type Origin = ReadonlyMap<string, number> | readonly number[];

export interface KubernetesValue {
  /** The document as the JSON Kubernetes makes of it (aliases share their anchor's object). */
  readonly value: unknown;
  /** The source of each map entry and sequence item, by the object or array holding it. */
  readonly origins: WeakMap<object, Origin>;
  /** Nodes decoded through aliases (go-yaml's count): what expanding the aliases costs. */
  readonly aliasNodes: number;
}

const TAG_PREFIX = 'tag:yaml.org,2002:';
const RESOLVABLE = new Set(['str', 'bool', 'int', 'float', 'null', 'timestamp']);

type Kind = 'str' | 'bool' | 'int' | 'float' | 'null' | 'timestamp';

interface Resolved {
  readonly kind: Kind;
  /** bigint for `int` (int64 or uint64), number for `float`. */
  readonly value: string | boolean | bigint | number | null;
}

// go-yaml v2 resolve.go: the plain scalars looked up as they are, case variants listed one by one.
const PLAIN_WORDS = new Map<string, Resolved>();
for (const [words, resolved] of [
  ['y Y yes Yes YES true True TRUE on On ON', { kind: 'bool', value: true }],
  ['n N no No NO false False FALSE off Off OFF', { kind: 'bool', value: false }],
  ['~ null Null NULL', { kind: 'null', value: null }],
  ['.nan .NaN .NAN', { kind: 'float', value: Number.NaN }],
  ['.inf .Inf .INF +.inf +.Inf +.INF', { kind: 'float', value: Number.POSITIVE_INFINITY }],
  ['-.inf -.Inf -.INF', { kind: 'float', value: Number.NEGATIVE_INFINITY }],
] as const) {
  for (const word of words.split(' ')) PLAIN_WORDS.set(word, resolved);
}
PLAIN_WORDS.set('', { kind: 'null', value: null });

/** Go's strconv.ParseInt/ParseUint with base 0 (underscores already removed): sign, 0b/0o/0x, 0 = octal. */
const GO_INTEGER =
  /^([+-]?)(?:0[bB]([01]+)|0[oO]([0-7]+)|0[xX]([0-9a-fA-F]+)|0([0-7]*)|([1-9][0-9]*))$/;
/** go-yaml v2's yamlStyleFloat. */
const YAML_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
/** The shape of go-yaml v2's allowed timestamp formats (date, date and time). */
const TIMESTAMP =
  /^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt][0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:\.[0-9]+)?(?:Z|[+-][0-9]{2}:[0-9]{2})|[ ][0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:\.[0-9]+)?)?$/;

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

function parseGoInteger(text: string): { value: bigint; unsigned: boolean } | undefined {
  const match = GO_INTEGER.exec(text);
  if (!match) return undefined;
  const [, sign, binary, octal, hex, leadingZeroOctal, decimal] = match;
  let magnitude: bigint;
  if (binary !== undefined) magnitude = BigInt(`0b${binary}`);
  else if (octal !== undefined) magnitude = BigInt(`0o${octal}`);
  else if (hex !== undefined) magnitude = BigInt(`0x${hex}`);
  else if (leadingZeroOctal !== undefined) magnitude = BigInt(`0o0${leadingZeroOctal}`);
  else magnitude = BigInt(decimal ?? '0');
  const value = sign === '-' ? -magnitude : magnitude;
  if (value >= INT64_MIN && value <= INT64_MAX) return { value, unsigned: false };
  // ParseUint takes no sign.
  if (sign === '' && value <= UINT64_MAX) return { value, unsigned: true };
  return undefined;
}

/**
 * go-yaml v2's resolve(tag, text): `tag` is '' for a plain untagged scalar, else the short name of
 * an explicit standard tag. Throws the message go-yaml gives when the text does not fit the tag.
 */
function resolveText(text: string, tag: string): Resolved {
  const found = resolveImplicit(text, tag);
  if (tag === '' || tag === found.kind) return found;
  if (tag === 'float' && found.kind === 'int') {
    return { kind: 'float', value: Number(found.value) };
  }
  throw new Error(`cannot decode !!${found.kind} \`${text}\` as a !!${tag}`);
}

function resolveImplicit(text: string, tag: string): Resolved {
  if (tag === 'str') return { kind: 'str', value: text };
  const first = text[0] ?? '';
  const hint =
    text === ''
      ? 'word'
      : first === '+' || first === '-' || (first >= '0' && first <= '9')
        ? 'number'
        : 'yYnNtTfFoO~'.includes(first)
          ? 'word'
          : first === '.'
            ? 'dot'
            : undefined;
  if (hint === undefined) return { kind: 'str', value: text };
  const word = PLAIN_WORDS.get(text);
  if (word) return word;
  if (hint === 'dot') {
    // strconv.ParseFloat of text starting with '.'; out of range is an error there: a string.
    const value = /^\.[0-9]+([eE][-+]?[0-9]+)?$/.test(text) ? Number(text) : Number.NaN;
    if (Number.isFinite(value)) return { kind: 'float', value };
  } else if (hint === 'number') {
    if ((tag === '' || tag === 'timestamp') && TIMESTAMP.test(text)) {
      // Decoded into interface{}, a timestamp stays the text it was written as.
      return { kind: 'timestamp', value: text };
    }
    const plain = text.replaceAll('_', '');
    const integer = parseGoInteger(plain);
    if (integer) return { kind: 'int', value: integer.value };
    if (YAML_FLOAT.test(plain)) {
      const value = Number(plain);
      if (Number.isFinite(value)) return { kind: 'float', value };
    }
  }
  return { kind: 'str', value: text };
}

/** Go's base64.StdEncoding.DecodeString, which skips line breaks only. */
function decodeBinary(text: string): string {
  const compact = text.replace(/[\r\n]/g, '');
  if (compact.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(compact)) {
    throw new Error('!!binary value contains invalid base64 data');
  }
  return Buffer.from(compact, 'base64').toString('utf8');
}

/** A scalar node's value as go-yaml v2 decodes it into interface{}. */
function resolveScalar(node: Scalar | null): Resolved {
  if (node === null) return { kind: 'null', value: null };
  const text = String(node.value ?? '');
  const tag = node.tag;
  if (tag === undefined) {
    // Quoted and block scalars are strings; plain ones are resolved.
    return node.type === 'PLAIN' || node.type === undefined
      ? resolveText(text, '')
      : { kind: 'str', value: text };
  }
  const short = tag.startsWith(TAG_PREFIX) ? tag.slice(TAG_PREFIX.length) : undefined;
  if (short === 'binary') return { kind: 'str', value: decodeBinary(text) };
  // Other tags (`!`, `!custom`, `!!map`…) leave the text as it is.
  if (short === undefined || !RESOLVABLE.has(short)) return { kind: 'str', value: text };
  return resolveText(text, short);
}

function toJsonValue(resolved: Resolved): unknown {
  switch (resolved.kind) {
    case 'int':
      return Number(resolved.value);
    case 'timestamp':
      return String(resolved.value);
    default:
      return resolved.value;
  }
}

/** Go's strconv.FormatFloat(value, 'g', -1, 32): how sigs.k8s.io/yaml names a float map key. */
export function formatFloatKey(value: number): string {
  if (Number.isNaN(value)) return '.nan';
  if (value === Number.POSITIVE_INFINITY) return '.inf';
  if (value === Number.NEGATIVE_INFINITY) return '-.inf';
  const single = Math.fround(value);
  if (single === 0) return Object.is(single, -0) ? '-0' : '0';
  let digits = 1;
  while (digits < 9 && Math.fround(Number(single.toPrecision(digits))) !== single) digits += 1;
  const [mantissa = '', exponentText = '0'] = single.toExponential(digits - 1).split('e');
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 6) {
    const magnitude = String(Math.abs(exponent)).padStart(2, '0');
    return `${mantissa}e${exponent < 0 ? '-' : '+'}${magnitude}`;
  }
  const decimals = Math.max(digits - 1 - exponent, 0);
  return single.toFixed(decimals);
}

/** A map key as sigs.k8s.io/yaml turns it into a JSON object key. */
function keyString(resolved: Resolved): string {
  switch (resolved.kind) {
    case 'str':
    case 'timestamp':
      return String(resolved.value);
    case 'bool':
      return resolved.value ? 'true' : 'false';
    case 'int': {
      const value = resolved.value as bigint;
      if (value > INT64_MAX) throw new Error(`unsupported map key of type uint64: ${value}`);
      return value.toString();
    }
    case 'float':
      return formatFloatKey(resolved.value as number);
    case 'null':
      throw new Error('a null map key, which Kubernetes cannot turn into JSON');
  }
}

function setEntry(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, {
      value,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  } else {
    target[key] = value;
  }
}

function offsetOf(node: Node | null | undefined, fallback: number): number {
  return node?.range?.[0] ?? fallback;
}

function isMergeKey(node: Node | null): boolean {
  if (!isScalar(node) || node.value !== '<<') return false;
  return node.tag === `${TAG_PREFIX}merge` || (node.tag === undefined && node.type === 'PLAIN');
}

// go-yaml v2 decode.go: the "excessive aliasing" guard, by the number of nodes decoded so far.
function allowedAliasRatio(decoded: number): number {
  if (decoded <= 400_000) return 0.99;
  if (decoded >= 4_000_000) return 0.1;
  return 0.99 - 0.89 * ((decoded - 400_000) / 3_600_000);
}

class Converter {
  private readonly anchors = new Map<string, Node>();
  private readonly targets = new Map<Node, Node>();
  private readonly values = new Map<Node, unknown>();
  /** Nodes go-yaml's decoder visits for each node, aliases expanded (its decodeCount). */
  private readonly sizes = new Map<Node, number>();
  private readonly open = new Set<Node>();
  public readonly origins = new WeakMap<object, Origin>();

  public constructor(private readonly maxDepth: number) {}

  /** Converts a node in document order, so an alias finds the anchor defined last before it. */
  public convert(node: Node | null, depth: number, at: number): unknown {
    if (node === null) return null;
    const done = this.values.get(node);
    if (done !== undefined || this.values.has(node)) return done;
    if (isAlias(node)) return this.alias(node, at);
    if (isScalar(node)) {
      if (node.anchor) this.anchors.set(node.anchor, node);
      const value = this.scalar(node);
      this.finish(node, value, 1);
      return value;
    }
    const offset = offsetOf(node, at);
    if (depth >= this.maxDepth) {
      throw new KubernetesYamlError('nested too deep', offset, 'too-deep');
    }
    const anchor = (node as { anchor?: string }).anchor;
    if (anchor) this.anchors.set(anchor, node);
    this.open.add(node);
    if (isSeq(node)) {
      const items: unknown[] = [];
      const offsets: number[] = [];
      this.origins.set(items, offsets);
      let size = 1;
      for (const item of node.items as (Node | null)[]) {
        items.push(this.convert(item, depth + 1, offset));
        offsets.push(offsetOf(item, offset));
        size += this.sizeOf(item);
      }
      this.open.delete(node);
      this.finish(node, items, size);
      return items;
    }
    if (isMap(node)) {
      const entries: Record<string, unknown> = {};
      const keys = new Map<string, number>();
      this.origins.set(entries, keys);
      let size = 1;
      for (const pair of node.items) {
        const key = pair.key as Node | null;
        const value = pair.value as Node | null;
        if (isMergeKey(key)) {
          size += this.merge(value, depth, offsetOf(key, offset), entries, keys);
          continue;
        }
        const keyOffset = offsetOf(key, offset);
        this.convert(key, depth + 1, keyOffset);
        const name = this.keyOf(key, keyOffset);
        setEntry(entries, name, this.convert(value, depth + 1, keyOffset));
        keys.set(name, keyOffset);
        size += this.sizeOf(key) + this.sizeOf(value);
      }
      this.open.delete(node);
      this.finish(node, entries, size);
      return entries;
    }
    throw new KubernetesYamlError('unsupported YAML node', offset);
  }

  /** go-yaml v2 merges in place: the merged keys overwrite those before `<<`, later keys win. */
  private merge(
    value: Node | null,
    depth: number,
    at: number,
    entries: Record<string, unknown>,
    keys: Map<string, number>
  ): number {
    const wantMap = () =>
      new KubernetesYamlError(
        'map merge requires map or sequence of maps as the value',
        offsetOf(value, at)
      );
    const isMapOrMapAlias = (node: Node | null) =>
      isMap(node) || (isAlias(node) && isMap(this.targetOf(node, at)));
    let sources: (Node | null)[];
    let size: number;
    if (isMapOrMapAlias(value)) {
      this.convert(value, depth + 1, at);
      sources = [value];
      size = this.sizeOf(value);
    } else if (isSeq(value)) {
      // Converted first, so anchors within it are known. The sequence node itself is not
      // decoded; earlier maps take precedence, so they are applied last.
      this.convert(value, depth + 1, at);
      const items = value.items as (Node | null)[];
      if (!items.every(isMapOrMapAlias)) throw wantMap();
      sources = [...items].reverse();
      size = this.sizeOf(value) - 1;
    } else {
      throw wantMap();
    }
    for (const source of sources) {
      const merged = this.convert(source, depth + 1, at) as Record<string, unknown>;
      const from = this.origins.get(merged) as ReadonlyMap<string, number>;
      for (const [key, offset] of from) {
        setEntry(entries, key, merged[key]);
        keys.set(key, offset);
      }
    }
    return size;
  }

  private alias(node: Node, at: number): unknown {
    const offset = offsetOf(node, at);
    const target = this.targetOf(node, offset);
    if (this.open.has(target)) {
      throw new KubernetesYamlError(
        `anchor '${(node as { source: string }).source}' value contains itself`,
        offset
      );
    }
    const value = this.values.get(target);
    this.finish(node, value, 1 + this.sizeOf(target));
    return value;
  }

  /** The anchor an alias names, fixed the first time the alias is met (in document order). */
  private targetOf(node: Node, at: number): Node {
    const known = this.targets.get(node);
    if (known) return known;
    const name = (node as { source: string }).source;
    const target = this.anchors.get(name);
    if (!target) throw new KubernetesYamlError(`unknown anchor '${name}' referenced`, at);
    this.targets.set(node, target);
    return target;
  }

  private scalar(node: Scalar): unknown {
    try {
      return toJsonValue(resolveScalar(node));
    } catch (error) {
      throw new KubernetesYamlError((error as Error).message, offsetOf(node, 0));
    }
  }

  /** The JSON key Kubernetes makes of a map key node (converted already). */
  private keyOf(node: Node | null, at: number): string {
    const source = isAlias(node) ? this.targetOf(node, at) : node;
    if (source !== null && !isScalar(source)) {
      throw new KubernetesYamlError('invalid map key: a map or sequence', at);
    }
    try {
      return keyString(resolveScalar(source));
    } catch (error) {
      throw new KubernetesYamlError((error as Error).message, at);
    }
  }

  private finish(node: Node, value: unknown, size: number): void {
    this.values.set(node, value);
    // Saturated: only compared with go-yaml's thresholds.
    this.sizes.set(node, Math.min(size, Number.MAX_SAFE_INTEGER));
  }

  private sizeOf(node: Node | null): number {
    return node === null ? 1 : (this.sizes.get(node) ?? 1);
  }

  /**
   * Replays go-yaml's decoding order over the document (aliases by their size) and throws where
   * its alias guard would stop. Returns the nodes decoded through aliases.
   */
  public aliasNodes(root: Node | null): number {
    let decoded = 1; // the document node
    let throughAliases = 0;
    const pending: (Node | null)[] = [root];
    for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
      decoded += 1;
      if (isAlias(node)) {
        const size = this.sizeOf(this.targets.get(node) ?? null);
        decoded += size;
        throughAliases += size;
      } else if (isSeq(node)) {
        pushReversed(pending, node.items as (Node | null)[]);
      } else if (isMap(node)) {
        const children: (Node | null)[] = [];
        for (const pair of node.items) {
          const value = pair.value as Node | null;
          if (!isMergeKey(pair.key as Node | null)) children.push(pair.key as Node | null, value);
          else if (isSeq(value)) {
            // Not decoded itself: its maps, last first.
            const items = value.items as (Node | null)[];
            for (let index = items.length - 1; index >= 0; index--) {
              children.push(items[index] ?? null);
            }
          } else children.push(value);
        }
        pushReversed(pending, children);
      }
      if (
        throughAliases > 100 &&
        decoded > 1000 &&
        throughAliases / decoded > allowedAliasRatio(decoded)
      ) {
        throw new KubernetesYamlError(
          'document contains excessive aliasing',
          offsetOf(node, root?.range?.[0] ?? 0)
        );
      }
    }
    return throughAliases;
  }
}

function pushReversed(stack: (Node | null)[], items: readonly (Node | null)[]): void {
  for (let index = items.length - 1; index >= 0; index--) stack.push(items[index] ?? null);
}

/**
 * The document's content as Kubernetes reads it (sigs.k8s.io/yaml over go-yaml v2). Throws a
 * KubernetesYamlError, with the offset of the node at fault, where kubectl refuses the document
 * too; `too-deep` when containers nest `maxDepth` levels or more (the scanner's own limit).
 */
export function toKubernetesValue(document: Document.Parsed, maxDepth: number): KubernetesValue {
  const converter = new Converter(maxDepth);
  const root = document.contents as Node | null;
  const at = document.range[0];
  const value = converter.convert(root, 0, at);
  const aliasNodes = converter.aliasNodes(root);
  return { value, origins: converter.origins, aliasNodes };
}

/**
 * The first characters kubectl's YAML reader refuses ("control characters are not allowed"), or
 * a document separator line it refuses: `{ offset, message }`, or undefined. A JSON stream (first
 * character `{`) is read by a JSON decoder instead, which refuses only C0 control characters.
 */
export function kubectlRefusesText(text: string): { offset: number; message: string } | undefined {
  const json = /^\s*\{/.test(text);
  const found = firstRefusedCharacter(text, json);
  if (found !== undefined) {
    const code = text.charCodeAt(found);
    const name = `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
    const hint =
      code === 0
        ? ': UTF-16 or UTF-32 without a byte order mark? Save it as UTF-8 (kubectl refuses it too)'
        : code === 0x85
          ? ' (NEL), a line break to Kubernetes (YAML 1.1) that the scanner cannot read the same way: write a plain line break, or \\u0085 in a double-quoted string'
          : ', which YAML does not allow (kubectl refuses it too)';
    return { offset: found, message: `holds the control character ${name}${hint}; not scanned` };
  }
  if (json) return undefined;
  // apimachinery's YAMLReader splits documents at lines starting with `---`, and refuses one
  // followed by anything but spaces and a comment.
  const separator = /^---(.*)$/gm;
  for (let match = separator.exec(text); match; match = separator.exec(text)) {
    const rest = (match[1] ?? '').trim();
    if (rest !== '' && !rest.startsWith('#')) {
      return {
        offset: match.index,
        message: `has content after a \`---\` document separator (${rest.length > 20 ? `${rest.slice(0, 20)}…` : rest}), which kubectl refuses ("invalid Yaml document separator"); not scanned`,
      };
    }
  }
  return undefined;
}

/**
 * go-yaml v2's reader accepts TAB, LF, CR, 0x20–0x7E, 0x85, 0xA0–0xD7FF, 0xE000–0xFFFD and the
 * supplementary planes; Go's JSON decoder refuses only C0 controls other than TAB, LF and CR.
 * NEL (0x85) is refused in YAML too: go-yaml reads it as a line break, the parser here does not.
 */
function firstRefusedCharacter(text: string, json: boolean): number | undefined {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code >= 0x20 && code < 0x7f) continue;
    if (code === 0x09 || code === 0x0a || code === 0x0d) continue;
    if (code < 0x20) return index;
    if (json) continue;
    // NEL (0x85) is allowed, but read as a line break: the parser here would not.
    if (code <= 0x9f) return index;
    if (code === 0xfffe || code === 0xffff) return index;
  }
  return undefined;
}
