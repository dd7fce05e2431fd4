import {
  type CelFunc,
  type CelList,
  CelScalar,
  celFunc,
  celMethod,
  isCelList,
  isCelMap,
  isCelUint,
  listType,
} from '@bufbuild/cel';
import { RE2JS } from 're2js';

// The Kubernetes CEL libraries CRD validation rules use, on top of @bufbuild/cel's standard
// functions and strings extension: https://kubernetes.io/docs/reference/using-api/cel/
// - regex: `find`, `findAll` (Go's FindString / FindAllString semantics, RE2 syntax);
// - lists: `isSorted`, `sum`, `min`, `max`, `indexOf`, `lastIndexOf`;
// - `int(string)` and `double(string)` as cel-go parses them (Go's strconv: no blanks, no "0x",
//   and "" is an error, where JavaScript's BigInt/Number would accept them).
// Not provided (no Karpenter CRD rule uses them; a rule calling them fails to compile): the
// quantity, URL, IP/CIDR, semver, format and authz libraries, sets.*, optionals.

const { BOOL, DOUBLE, DYN, INT, STRING } = CelScalar;
const LIST = listType(DYN);
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** Compiled RE2 patterns, shared by `pattern`, `matches`, `find` and `findAll`. */
export class RegexCache {
  private readonly compiled = new Map<string, RE2JS>();

  get(pattern: string): RE2JS {
    let regex = this.compiled.get(pattern);
    if (regex === undefined) {
      regex = RE2JS.compile(pattern);
      this.compiled.set(pattern, regex);
    }
    return regex;
  }
}

function parseGoInt(text: string): bigint {
  if (!/^[+-]?[0-9]+$/.test(text)) {
    throw new Error(`strconv.ParseInt: parsing ${JSON.stringify(text)}: invalid syntax`);
  }
  const value = BigInt(text);
  if (value < INT64_MIN || value > INT64_MAX) {
    throw new Error(`strconv.ParseInt: parsing ${JSON.stringify(text)}: value out of range`);
  }
  return value;
}

const GO_FLOAT = /^[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity|nan)$/i;

function parseGoFloat(text: string): number {
  if (!GO_FLOAT.test(text)) {
    throw new Error(`strconv.ParseFloat: parsing ${JSON.stringify(text)}: invalid syntax`);
  }
  const lower = text.toLowerCase().replace(/^\+/, '');
  if (lower === 'nan') return Number.NaN;
  if (lower === 'inf' || lower === 'infinity') return Number.POSITIVE_INFINITY;
  if (lower === '-inf' || lower === '-infinity') return Number.NEGATIVE_INFINITY;
  return Number(text);
}

type Comparable = bigint | number | string | boolean;

function isComparable(value: unknown): value is Comparable {
  return ['bigint', 'number', 'string', 'boolean'].includes(typeof value);
}

/** CEL ordering: numbers compare across int/double; other kinds only with their own kind. */
function compare(left: unknown, right: unknown): number {
  const numeric = (value: unknown) => typeof value === 'bigint' || typeof value === 'number';
  if (numeric(left) && numeric(right)) {
    const l = left as bigint | number;
    const r = right as bigint | number;
    return l < r ? -1 : l > r ? 1 : 0;
  }
  if (isComparable(left) && isComparable(right) && typeof left === typeof right) {
    return left < right ? -1 : left > right ? 1 : 0;
  }
  throw new Error('no such overload');
}

/** CEL equality over the values a CRD object is made of. */
function celEquals(left: unknown, right: unknown): boolean {
  if (isComparable(left) && isComparable(right)) {
    try {
      return compare(left, right) === 0;
    } catch {
      return false;
    }
  }
  if (left === null || right === null) return left === right;
  if (isCelUint(left) && isCelUint(right)) return left.value === right.value;
  if (isCelList(left) && isCelList(right)) {
    if (left.size !== right.size) return false;
    for (let index = 0; index < left.size; index += 1) {
      if (!celEquals(left.get(index), right.get(index))) return false;
    }
    return true;
  }
  if (isCelMap(left) && isCelMap(right)) {
    if (left.size !== right.size) return false;
    for (const [key, value] of left) {
      if (!right.has(key) || !celEquals(value, right.get(key))) return false;
    }
    return true;
  }
  return false;
}

function items(list: CelList): unknown[] {
  return [...list];
}

function extreme(list: CelList, name: string, pick: (order: number) => boolean): unknown {
  const values = items(list);
  if (values.length === 0) throw new Error(`${name} called on empty list`);
  let best = values[0];
  for (const value of values.slice(1)) if (pick(compare(value, best))) best = value;
  return best;
}

function sum(list: CelList): bigint | number {
  const values = items(list);
  if (values.every((value) => typeof value === 'bigint')) {
    const total = values.reduce<bigint>((acc, value) => acc + (value as bigint), 0n);
    if (total < INT64_MIN || total > INT64_MAX) throw new Error('integer overflow');
    return total;
  }
  if (values.every((value) => typeof value === 'number')) {
    return values.reduce<number>((acc, value) => acc + (value as number), 0);
  }
  throw new Error('no such overload');
}

export function kubernetesCelFunctions(regexes: RegexCache): CelFunc[] {
  return [
    celMethod('find', STRING, [STRING], STRING, function (pattern) {
      return regexes.get(pattern).re2Input.find(this) as string;
    }),
    celMethod('findAll', STRING, [STRING], listType(STRING), function (pattern) {
      return (regexes.get(pattern).re2Input.findAll(this, -1) as string[] | null) ?? [];
    }),
    celMethod('findAll', STRING, [STRING, INT], listType(STRING), function (pattern, limit) {
      if (limit === 0n) return [];
      const found = regexes.get(pattern).re2Input.findAll(this, Number(limit));
      return (found as string[] | null) ?? [];
    }),
    celMethod('isSorted', LIST, [], BOOL, function () {
      const values = items(this);
      return values.every((value, index) => index === 0 || compare(values[index - 1], value) <= 0);
    }),
    celMethod('sum', LIST, [], DYN, function () {
      return sum(this);
    }),
    celMethod('min', LIST, [], DYN, function () {
      return extreme(this, 'min', (order) => order < 0) as bigint;
    }),
    celMethod('max', LIST, [], DYN, function () {
      return extreme(this, 'max', (order) => order > 0) as bigint;
    }),
    celMethod('indexOf', LIST, [DYN], INT, function (needle) {
      return BigInt(items(this).findIndex((value) => celEquals(value, needle)));
    }),
    celMethod('lastIndexOf', LIST, [DYN], INT, function (needle) {
      return BigInt(items(this).findLastIndex((value) => celEquals(value, needle)));
    }),
    celFunc('int', [STRING], INT, parseGoInt),
    celFunc('double', [STRING], DOUBLE, parseGoFloat),
  ];
}
