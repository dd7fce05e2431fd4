import { describe, expect, it } from 'vitest';
import {
  celGoWording,
  createAdmissionEngines,
} from '../../../lambda/adapters/admission/engines.js';

const { cel, regex } = createAdmissionEngines();

/** The value of `expression` with `self` bound, or `{ error }`. */
function run(expression: string, self: unknown = null): unknown {
  const compiled = cel.compile(expression);
  if ('error' in compiled) return compiled;
  const outcome = compiled.evaluate({ self });
  return 'value' in outcome ? outcome.value : outcome;
}

describe('admission engines: RE2', () => {
  it('searches unanchored, with RE2 syntax JavaScript lacks', () => {
    const compiled = regex.compile('(?i)^ab\\z');
    if ('error' in compiled) throw new Error(compiled.error);
    expect(compiled.test('AB')).toBe(true);
    expect(compiled.test('ab\n')).toBe(false);
    const partial = regex.compile('b+');
    expect('test' in partial && partial.test('abbc')).toBe(true);
  });

  it('refuses what Go refuses (lookbehind, backreferences)', () => {
    expect(regex.compile('(?<=a)b')).toEqual({ error: expect.stringContaining('invalid') });
    expect(regex.compile('(a)\\1')).toEqual({ error: expect.stringContaining('invalid escape') });
  });
});

describe('admission engines: CEL with the Kubernetes libraries', () => {
  it.each([
    // regex library
    ["'al2023@latest'.find('^[^@]+')", 'al2023'],
    ["'kubernetes.io/os'.find('^([^/]+)')", 'kubernetes.io'],
    ["'abc'.find('x')", ''],
    ["'a1b22c333'.findAll('[0-9]+')", ['1', '22', '333']],
    ["'a1b22c333'.findAll('[0-9]+', 2)", ['1', '22']],
    ["'abc'.findAll('x')", []],
    ["'ab'.matches('(?i)^AB$')", true],
    // lists library
    ['[1, 2, 2].isSorted()', true],
    ["['b', 'a'].isSorted()", false],
    ['[1, 2, 3].sum()', 6n],
    ['[0.5, 0.25].sum()', 0.75],
    ['[].sum()', 0n],
    ['[3, 1, 2].min()', 1n],
    ["['a', 'c', 'b'].max()", 'c'],
    ["['a', 'b', 'a'].indexOf('a')", 0n],
    ["['a', 'b', 'a'].lastIndexOf('a')", 2n],
    ["['a'].indexOf('z')", -1n],
    ['[[1], [2]].indexOf([2])', 1n],
    // strings extension
    ["'a@b@c'.split('@')", ['a', 'b', 'c']],
    ["'MiXed'.lowerAscii() + 'x'.upperAscii()", 'mixedX'],
    ["'a-b-c'.replace('-', '.')", 'a.b.c'],
    ["'abcabc'.indexOf('c') + 'abcabc'.lastIndexOf('c')", 7n],
    ["['a', 'b'].join(',')", 'a,b'],
    ["'  x '.trim()", 'x'],
    ["'hello'.substring(1, 3) + 'hello'.charAt(4)", 'elo'],
    // standard macros and functions
    ['[1, 2, 3].exists_one(x, x > 2)', true],
    ['[1, 2].map(x, x * 2).filter(x, x > 2)', [4n]],
    ["{'a': 1}.all(k, k == 'a') && {'a': 1}.exists(k, k == 'a')", true],
    ["'x'.startsWith('x') && 'x'.endsWith('x') && 'xyz'.contains('y') && size('héllo') == 5", true],
    ["string(12) + string(double('1.5'))", '121.5'],
    [
      "duration('1h30m') > duration('90m') || timestamp('2024-01-01T00:00:00Z') < timestamp('2025-01-01T00:00:00Z')",
      true,
    ],
    // int() and double() parse strings as Go's strconv does
    ["int('42') + int('-1') + int('+1')", 42n],
  ])('%s', (expression, expected) => {
    const value = run(expression);
    const plain = (v: unknown): unknown =>
      typeof v === 'object' && v !== null && Symbol.iterator in v
        ? [...(v as Iterable<unknown>)].map(plain)
        : v;
    expect(plain(value)).toEqual(expected);
  });

  it.each([
    ["int('')", 'strconv.ParseInt: parsing "": invalid syntax'],
    ["int(' 1')", 'strconv.ParseInt: parsing " 1": invalid syntax'],
    ["int('0x10')", 'strconv.ParseInt: parsing "0x10": invalid syntax'],
    [
      "int('9223372036854775808')",
      'strconv.ParseInt: parsing "9223372036854775808": value out of range',
    ],
    ["double('')", 'strconv.ParseFloat: parsing "": invalid syntax'],
    ['[].min()', 'min called on empty list'],
    ['self.missing', 'no such key: missing'],
    ["self.a + 'x'", 'no such overload: _+_(int, string)'],
  ])('%s is an evaluation error', (expression, message) => {
    expect(run(expression, new Map([['a', 1n]]))).toEqual({ error: message });
  });

  it('tells which variables a rule reads (transition rules read oldSelf)', () => {
    const compiled = cel.compile('self.a == oldSelf.a');
    expect('variables' in compiled && [...compiled.variables].sort()).toEqual(['oldSelf', 'self']);
  });

  it('refuses expressions it cannot run: syntax errors and functions it does not have', () => {
    expect(cel.compile('self.a +')).toEqual({ error: expect.stringMatching(/^syntax error: /) });
    expect(cel.compile("self.url().getHost() == 'x'")).toEqual({
      error: "undeclared reference to 'getHost', 'url'",
    });
  });

  it('binds formatted strings as Kubernetes types them', () => {
    const at = cel.formatted('date-time', '2024-01-01T00:00:00Z');
    const day = cel.formatted('date', '2024-01-01');
    const compiled = cel.compile("self == timestamp('2024-01-01T00:00:00Z')");
    if ('error' in compiled) throw new Error(compiled.error);
    expect(compiled.evaluate({ self: at })).toEqual({ value: true });
    expect(compiled.evaluate({ self: day })).toEqual({ value: true });
    expect(cel.formatted('date-time', 'not a time')).toBeUndefined();
    expect(cel.formatted('byte', 'AQI=')).toEqual(Uint8Array.from([1, 2]));
    expect(cel.formatted('int32', '1')).toBeUndefined();
  });

  it('words errors as cel-go does', () => {
    expect(celGoWording('field not found: spec')).toBe('no such key: spec');
    expect(celGoWording('division by zero')).toBe('division by zero');
  });
});
