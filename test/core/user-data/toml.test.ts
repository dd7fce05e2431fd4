// The TOML reader behind user-data-valid: TOML 1.0.0 as go-toml v2 (Karpenter's parser) reads it.
// Valid documents are the spec's own examples (https://toml.io/en/v1.0.0); invalid ones the
// mistakes users make and the rules go-toml enforces.
import { describe, expect, it } from 'vitest';
import { parseToml, type TomlNode, type TomlTable } from '../../../lambda/core/user-data/toml.js';

function parsed(text: string): TomlTable {
  const result = parseToml(text);
  if (!result.ok) throw new Error(`unexpected error: ${JSON.stringify(result.error)}`);
  return result.root;
}

/** The plain value of a node (tables as objects), for comparisons. */
function plain(node: TomlNode): unknown {
  switch (node.kind) {
    case 'table':
      return Object.fromEntries([...node.entries].map(([key, value]) => [key, plain(value)]));
    case 'table-array':
      return node.tables.map(plain);
    case 'array':
      return node.items.map(plain);
    case 'integer':
      return node.integer;
    default:
      return node.value;
  }
}

function errorOf(text: string): { line: number; column: number; message: string } | undefined {
  const result = parseToml(text);
  return result.ok ? undefined : result.error;
}

describe('parseToml: valid TOML 1.0', () => {
  it('reads keys, strings, numbers, booleans, dates, arrays and tables with their lines', () => {
    // Prepare
    const text = [
      '# comment',
      'title = "TOML \\"Example\\" \\u00e9"',
      "path = 'C:\\Users\\nodejs'",
      'bare_key-1 = 1_000',
      '"quoted key" = 0xDEAD_beef',
      "physical.color = 'orange'",
      'site."google.com" = true',
      'floats = [ +1.0, 3.1415, -0.01, 5e+22, 1e06, -2E-2, 6.626e-34, 224_617.445_991, inf, -nan ]',
      'dates = [ 1979-05-27T07:32:00Z, 1979-05-27T00:32:00.999999-07:00, 1979-05-27 07:32:00Z, 1979-05-27T07:32:00, 1979-05-27, 07:32:00, 00:32:00.999999 ]',
      'ints = [ +99, -17, 0, 0o755, 0b1101_0110, 9223372036854775807, -9223372036854775808 ]',
      'nested = [ [ 1, 2 ], ["a", "b",], ]',
      'multi = """',
      'Roses are red\\',
      '   Violets are blue"""',
      "lit = '''",
      'The first newline is',
      "trimmed in raw strings.'''",
      'quotes = """Here are two quotation marks: "". Simple enough."""',
      'five = """Here are fifteen quotation marks: ""\\"""\\"""\\"""\\"""\\"."""',
      "apos = '''That,' she said, 'is still pointless.''''",
      'inline = { x = 1, y.z = 2 }',
      '',
      '[servers.alpha]',
      'ip = "10.0.0.1"',
      '',
      '[[products]]',
      'name = "Hammer"',
      '[[products]]',
      '[[products]]',
      'name = "Nail"',
      '[products.meta]',
      'ok = false',
    ].join('\n');

    // Act
    const root = parsed(text);

    // Assess
    expect(plain(root)).toMatchObject({
      title: 'TOML "Example" é',
      path: 'C:\\Users\\nodejs',
      'bare_key-1': 1000n,
      'quoted key': 0xdeadbeefn,
      physical: { color: 'orange' },
      site: { 'google.com': true },
      ints: [99n, -17n, 0n, 0o755n, 0b11010110n, 9223372036854775807n, -9223372036854775808n],
      nested: [
        [1n, 2n],
        ['a', 'b'],
      ],
      multi: 'Roses are redViolets are blue',
      lit: 'The first newline is\ntrimmed in raw strings.',
      quotes: 'Here are two quotation marks: "". Simple enough.',
      five: 'Here are fifteen quotation marks: """"""""""""""".',
      apos: "That,' she said, 'is still pointless.'",
      inline: { x: 1n, y: { z: 2n } },
      servers: { alpha: { ip: '10.0.0.1' } },
      products: [{ name: 'Hammer' }, {}, { name: 'Nail', meta: { ok: false } }],
    });
    const kinds = (root.entries.get('dates') as { items: TomlNode[] }).items.map((n) => n.kind);
    expect(kinds).toEqual([
      'offset-datetime',
      'offset-datetime',
      'offset-datetime',
      'local-datetime',
      'local-date',
      'local-time',
      'local-time',
    ]);
    expect(root.entries.get('servers')?.line).toBe(23);
    const alpha = (root.entries.get('servers') as TomlTable).entries.get('alpha') as TomlTable;
    expect(alpha.entries.get('ip')?.line).toBe(24);
  });

  it('accepts what go-toml accepts about defining tables', () => {
    for (const text of [
      '[x.y.z.w]\n[x]',
      '[fruit]\napple.color = "red"\napple.taste.sweet = true\n[fruit.apple.texture]\nsmooth = true',
      '[a.b.c.d]\n[a]\nb.c.x = 1',
      '[[a]]\n[a.b]\n[[a]]\n[a.b]',
      'a = "x" # comment é',
      '\uFEFFa = 1',
      'a = 1\r\nb = 2\r\n',
      'empty = {}\n"" = 1',
    ]) {
      expect(errorOf(text), text).toBeUndefined();
    }
  });
});

describe('parseToml: errors, with the line and column Karpenter’s parser stops at', () => {
  it.each([
    ['a YAML-style colon', 'a = 1\nb: 2', 2, 2, "expected '=' after the key \"b\", found ':'"],
    [
      'an unquoted string',
      'a = hello',
      1,
      5,
      '"hello" is not a valid value (strings must be quoted)',
    ],
    ['a missing value', 'a =\nb = 1', 1, 4, 'expected a value'],
    ['an unterminated string', 'a = "abc\nb = 1', 1, 9, 'unterminated string'],
    ['an invalid escape', 'a = "\\x41"', 1, 6, 'invalid escape \\x'],
    ['a TOML 1.1 escape', 'a = "\\e"', 1, 6, 'invalid escape \\e'],
    [
      'a newline in an inline table (1.1 only)',
      'a = { b = 1,\n c = 2 }',
      1,
      13,
      'must be on one line',
    ],
    ['a trailing comma in an inline table', 'a = { b = 1, }', 1, 14, 'trailing comma'],
    ['a time without seconds (1.1 only)', 't = 07:32', 1, 5, 'times need seconds'],
    ['a duplicate key', 'a = 1\na = 2', 2, 1, 'the key "a" is defined twice'],
    ['a table defined twice', '[a]\nb = 1\n[a]', 3, 1, 'table [a] is defined twice'],
    [
      'a header over a dotted-key table',
      '[fruit]\napple.color = "red"\n[fruit.apple]',
      3,
      1,
      'table [fruit.apple] is defined twice',
    ],
    [
      'dotted keys into a defined table',
      '[a.b.c]\nz = 9\n[a]\nb.c.t = 1',
      4,
      1,
      'extends table "b.c"',
    ],
    ['a key under a value', 'a = 1\na.b = 2', 2, 1, '"a" is a value, not a table'],
    ['a header under an inline table', 'a = {}\n[a.b]', 2, 1, '"a" is a value, not a table'],
    ['an array of tables over a static array', 'a = []\n[[a]]', 2, 1, 'already defined as a value'],
    ['a table over an array of tables', '[[a]]\n[a]', 2, 1, 'already defined as a array-table'],
    ['an integer with a leading zero', 'a = 01', 1, 5, 'not a valid value'],
    ['an integer out of range', 'a = 9223372036854775808', 1, 5, 'does not fit in 64 bits'],
    ['an invalid date', 'd = 2023-02-29', 1, 5, 'not a valid date'],
    ['a bare key with a slash', 'example.com/team = "a"', 1, 12, "expected '=' after the key"],
    ['text after a value', 'a = 1 2', 1, 7, 'expected a line break after the value'],
    ['a control character in a comment', 'a = 1 # \u0001', 1, 9, 'not allowed in a comment'],
    ['a lone carriage return', 'a = 1\rb = 2', 1, 6, 'expected a line break'],
    ['an unclosed header', '[settings.kubernetes\nx = 1', 1, 21, "expected ']'"],
    ['an unclosed array', 'a = [1, 2', 1, 10, "expected ',' or ']'"],
    ['an unterminated multi-line string', 'a = """abc\n', 1, 5, 'unterminated multi-line string'],
  ])('%s', (_label, text, line, column, message) => {
    const error = errorOf(text);
    expect(error).toMatchObject({ line, column });
    expect(error?.message).toContain(message);
  });

  it('bounds nesting on hostile input', () => {
    const error = errorOf(`a = ${'['.repeat(500)}`);
    expect(error?.message).toContain('nested too deeply');
  });
});
