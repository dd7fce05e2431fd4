// YAML read as Kubernetes reads it (docs/yaml-as-kubernetes-reads-it.md). Every expected value
// and refusal below was checked against kubectl 1.32 (`kubectl label --local -f FILE x=y -o json`,
// which decodes the file as `kubectl apply` does, without a cluster).
import { describe, expect, it } from 'vitest';
import { formatFloatKey } from '../../../lambda/adapters/files/kube-yaml.js';
import {
  type DocumentTally,
  parseManifestText,
} from '../../../lambda/adapters/files/parse-manifests.js';

const HEADER = 'apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: x\n';

/** `body` as the spec of an EC2NodeClass; returns the spec as the scanner read it. */
function spec(body: string): unknown {
  const parsed = parseManifestText(`${HEADER}spec:\n${body.replace(/^/gm, '  ')}\n`, 'x.yaml');
  expect(parsed.errors).toEqual([]);
  return (parsed.nodeClasses[0]?.raw as { spec?: unknown } | undefined)?.spec;
}

/** The input errors for `text`. */
function errors(text: string) {
  return parseManifestText(text, 'x.yaml').errors;
}

describe('YAML 1.1 scalars, as go-yaml v2 resolves them', () => {
  it('reads y/yes/on and n/no/off in their three spellings as booleans, other casings as text', () => {
    expect(spec('a: [y, Y, yes, Yes, YES, on, On, ON, true, True, TRUE]')).toEqual({
      a: Array(11).fill(true),
    });
    expect(spec('a: [n, N, no, No, NO, off, Off, OFF, false, False, FALSE]')).toEqual({
      a: Array(11).fill(false),
    });
    expect(spec('a: [yEs, oN, tRue, t, f, o, "yes", \'off\']')).toEqual({
      a: ['yEs', 'oN', 'tRue', 't', 'f', 'o', 'yes', 'off'],
    });
  });

  it('gives a NodeClass its booleans: detailedMonitoring: yes and associatePublicIPAddress: off', () => {
    const parsed = parseManifestText(
      `${HEADER}spec:\n  role: R\n  detailedMonitoring: yes\n  associatePublicIPAddress: off\n`,
      'x.yaml'
    );
    const [entry] = parsed.nodeClasses;
    expect(entry?.raw).toMatchObject({
      spec: { detailedMonitoring: true, associatePublicIPAddress: false },
    });
    // The bug: `yes` read as the string "yes", a schema failure.
    const issues = entry === undefined || entry.parsed.ok ? [] : entry.parsed.issues;
    expect(issues.map((issue) => issue.path)).not.toContain('spec.detailedMonitoring');
    expect(issues.map((issue) => issue.path)).not.toContain('spec.associatePublicIPAddress');
  });

  it('reads null spellings, octal, binary, hex, underscores and floats; not base 60 or timestamps', () => {
    expect(
      spec(
        'a: [~, null, Null, NULL, nULL, "", 0777, 0o17, 0b101, -0b11, 0x1F, 1_000, 08, 1e3, .5, +1, -010, 1., 1_0.5, 12:30, 190:20:30, 2024-01-01, 1e999, 0x]'
      )
    ).toEqual({
      a: [
        null,
        null,
        null,
        null,
        'nULL',
        '',
        511,
        15,
        5,
        -3,
        31,
        1000,
        8,
        1000,
        0.5,
        1,
        -8,
        1,
        10.5,
        '12:30',
        '190:20:30',
        '2024-01-01',
        '1e999',
        '0x',
      ],
    });
  });

  it('applies standard tags as go-yaml does and refuses a value that does not fit its tag', () => {
    expect(
      spec(
        'a: !!str 12\nb: !!int "12"\nc: !!float 1\nd: !!bool yes\ne: !custom 12\nf: !!binary aGk=\ng: !!null ""'
      )
    ).toEqual({ a: '12', b: 12, c: 1, d: true, e: '12', f: 'hi', g: null });
    expect(errors(`${HEADER}spec:\n  a: !!int 1.5\n`)).toEqual([
      {
        source: 'x.yaml:6',
        message:
          'document 1 cannot be read: cannot decode !!float `1.5` as a !!int (kubectl refuses it too)',
      },
    ]);
  });

  it('turns map keys into JSON keys as sigs.k8s.io/yaml does', () => {
    expect(
      spec('tags: {n: a, yes: b, 0x10: c, 1.5: d, 1e6: e, 123456789.0: f, __proto__: g}')
    ).toEqual({
      tags: {
        false: 'a',
        true: 'b',
        '16': 'c',
        '1.5': 'd',
        '1e+06': 'e',
        '1.2345679e+08': 'f',
        ['__proto__']: 'g',
      },
    });
    expect(Object.getPrototypeOf(spec('__proto__: {polluted: 1}'))).toBe(Object.prototype);
  });

  it('formats float keys with Go strconv.FormatFloat(v, g, -1, 32)', () => {
    const cases: [number, string][] = [
      [1, '1'],
      [-1.5, '-1.5'],
      [0.1, '0.1'],
      [1e-5, '1e-05'],
      [100000, '100000'],
      [1e6, '1e+06'],
      [1e20, '1e+20'],
      [Number.POSITIVE_INFINITY, '.inf'],
      [Number.NaN, '.nan'],
    ];
    for (const [value, key] of cases) expect(formatFloatKey(value)).toBe(key);
  });
});

describe('merge keys, as go-yaml v2 applies them', () => {
  it('merges an aliased map, so the merged httpTokens reaches the NodeClass', () => {
    const text = `${HEADER}insecure: &insecure {httpTokens: optional}\nspec:\n  role: R\n  metadataOptions: {<<: *insecure}\n`;
    const [entry] = parseManifestText(text, 'x.yaml').nodeClasses;
    expect(entry?.raw).toMatchObject({ spec: { metadataOptions: { httpTokens: 'optional' } } });
    // The merged key's own line: where a reader finds the value.
    expect(entry?.source?.positions?.['spec.metadataOptions.httpTokens']).toEqual({
      line: 5,
      column: 22,
    });
    expect(entry?.source?.positions?.['spec.metadataOptions']).toEqual({ line: 8, column: 3 });
  });

  it('writes merged keys where `<<` stands: over the keys before it, under the keys after it', () => {
    expect(
      spec(
        'x: &x {httpTokens: optional, hop: 2}\nbefore: {httpTokens: required, <<: *x}\nafter: {<<: *x, httpTokens: required}'
      )
    ).toEqual({
      x: { httpTokens: 'optional', hop: 2 },
      before: { httpTokens: 'optional', hop: 2 },
      after: { httpTokens: 'required', hop: 2 },
    });
  });

  it('gives earlier maps of a merged sequence precedence, and merges a map merged into another', () => {
    expect(
      spec('x: &x {a: 1, <<: {b: 2}}\ny: &y {c: 3}\nz: {<<: [*x, *y, {a: 9, d: 4}], e: 5}')
    ).toMatchObject({ z: { a: 1, b: 2, c: 3, d: 4, e: 5 } });
    expect(spec("q: {'<<': {a: 1}}\nt: {!!merge <<: {a: 1}}")).toEqual({
      q: { '<<': { a: 1 } },
      t: { a: 1 },
    });
  });

  it('refuses to merge anything but maps, and an anchor holding itself', () => {
    for (const body of ['a: &a 1\nb: {<<: *a}', 'b: {<<: [{a: 1}, 2]}', 'b: {<<: ~}']) {
      expect(errors(`${HEADER}spec:\n${body.replace(/^/gm, '  ')}\n`)[0]?.message).toBe(
        'document 1 cannot be read: map merge requires map or sequence of maps as the value (kubectl refuses it too)'
      );
    }
    expect(errors('a: &a {<<: *a}\n')[0]?.message).toContain("anchor 'a' value contains itself");
    expect(errors('a: *nowhere\n')[0]?.message).toContain("unknown anchor 'nowhere' referenced");
  });

  it('resolves an alias to the anchor defined last before it', () => {
    expect(spec('a: &x 1\nb: &y [*x]\nc: &x 2\nd: *y\ne: *x')).toEqual({
      a: 1,
      b: [1],
      c: 2,
      d: [1],
      e: 2,
    });
  });
});

describe('duplicate keys, as kubectl reads them (non-strict: the last one wins)', () => {
  it('keeps the last value, and points at the key that gave it', () => {
    const text = `${HEADER}spec:\n  metadataOptions:\n    httpTokens: optional\n    httpTokens: required\n`;
    const [entry] = parseManifestText(text, 'x.yaml').nodeClasses;
    expect(entry?.raw).toMatchObject({ spec: { metadataOptions: { httpTokens: 'required' } } });
    expect(entry?.source?.positions?.['spec.metadataOptions.httpTokens']).toEqual({
      line: 8,
      column: 5,
    });
  });

  it('replaces a whole map, not merging the two', () => {
    expect(spec('a: {b: 1}\na: {c: 2}')).toEqual({ a: { c: 2 } });
  });
});

describe('documents and text kubectl refuses are input errors', () => {
  it('refuses .nan and .inf, which JSON cannot hold, unless a later key replaces them', () => {
    expect(errors(`${HEADER}spec:\n  a: [-.Inf]\n`)).toEqual([
      {
        source: 'x.yaml:1',
        message:
          'document 1 cannot be read: it holds .nan or .inf, which JSON cannot hold (kubectl refuses it too)',
      },
    ]);
    expect(spec('a: .nan\na: 1')).toEqual({ a: 1 });
  });

  it('refuses null, sequence and uint64 map keys', () => {
    expect(errors('~: 1\n')[0]?.message).toContain('a null map key');
    expect(errors('? [1]\n: 1\n')[0]?.message).toContain('invalid map key');
    expect(errors('18446744073709551615: 1\n')[0]?.message).toContain('uint64');
  });

  it('refuses control characters with their line, hinting at UTF-16 for NUL', () => {
    expect(errors('a: 1\nb: x\u0001\n')).toEqual([
      {
        source: 'x.yaml:2',
        message:
          'holds the control character U+0001, which YAML does not allow (kubectl refuses it too); not scanned',
      },
    ]);
    expect(errors('a\u0000:\u0000 \u00001\u0000')[0]?.message).toMatch(/U\+0000: UTF-16 or UTF-32/);
    for (const character of ['\u007f', '\u0080', '\ufffe']) {
      expect(errors(`a: "${character}"\n`)[0]?.message, character).toMatch(/control character/);
    }
    // NEL is a line break to go-yaml: read differently, so not read at all.
    expect(errors('a: "x\u0085y"\n')[0]?.message).toMatch(/U\+0085 \(NEL\)/);
  });

  it('lets JSON carry DEL and C1 characters in strings, as Go decodes JSON', () => {
    const json = `{"apiVersion":"karpenter.k8s.aws/v1","kind":"EC2NodeClass","metadata":{"name":"j"},"spec":{"a":"x\u007f\u0085"}}`;
    const parsed = parseManifestText(json, 'x.json');
    expect(parsed.errors).toEqual([]);
    expect(parsed.nodeClasses[0]?.raw).toMatchObject({ spec: { a: 'x\u007f\u0085' } });
  });

  it('refuses a `---` line followed by content, and %YAML or %TAG directives', () => {
    expect(errors(`${HEADER}--- {a: 1}\n`)).toEqual([
      {
        source: 'x.yaml:5',
        message:
          'has content after a `---` document separator ({a: 1}), which kubectl refuses ("invalid Yaml document separator"); not scanned',
      },
    ]);
    expect(errors(`${HEADER}--- # comment\n${HEADER}`)).toEqual([]);
    expect(errors(`%YAML 1.1\n---\n${HEADER}`)[0]?.message).toMatch(
      /^document 1 follows a %YAML or %TAG directive, which kubectl refuses/
    );
  });

  it('skips a document that follows `...` without `---`, which kubectl never decodes', () => {
    const parsed = parseManifestText(
      `${HEADER}...\n${HEADER.replace('name: x', 'name: y')}`,
      'x.yaml'
    );
    expect(parsed.errors).toEqual([]);
    expect(parsed.nodeClasses.map((entry) => entry.name)).toEqual(['x']);
  });
});

describe('aliases within the limits', () => {
  it('shares anchors within a document, never across documents (kubectl neither)', () => {
    const pool = (requirements: string) =>
      `apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: p}\nspec:\n  template:\n    spec:\n${requirements}`;
    const within = pool(
      '      requirements: &req [{key: a, operator: Exists}]\n      other: *req\n'
    );
    expect(parseManifestText(within, 'x.yaml').nodePools[0]?.raw).toMatchObject({
      spec: { template: { spec: { other: [{ key: 'a', operator: 'Exists' }] } } },
    });
    const across = `x: &req [{key: a, operator: Exists}]\n---\n${pool('      requirements: *req\n')}`;
    expect(parseManifestText(across, 'x.yaml').errors).toEqual([
      {
        source: 'x.yaml:9',
        message:
          "document 2 cannot be read: unknown anchor 'req' referenced (kubectl refuses it too)",
      },
    ]);
  });

  it('refuses excessive aliasing where go-yaml does', () => {
    const levels = 'abcdef'.split('');
    const bomb = levels
      .map((name, index) => {
        const previous = levels[index - 1];
        return `${name}: &${name} [${Array(9)
          .fill(previous ? `*${previous}` : 'x')
          .join(', ')}]`;
      })
      .join('\n');
    expect(errors(`${bomb}\n`)[0]?.message).toBe(
      'document 1 cannot be read: document contains excessive aliasing (kubectl refuses it too)'
    );
  });

  it('counts the nodes aliases repeat against the token limits', () => {
    const text = `a: &a [${Array(50).fill('1').join(', ')}]\nb: [*a, *a, *a, *a]\n`;
    const limits = { maxDocuments: 10, maxDocumentTokens: 150, maxTotalTokens: 10_000 };
    expect(parseManifestText(text, 'x.yaml', '', limits).errors).toEqual([
      {
        source: 'x.yaml:1',
        message:
          'document 1 repeats 204 YAML nodes through aliases, more than the tokens one document may hold (limit 150, set NODECLASS_SCAN_MAX_DOCUMENT_TOKENS to raise it); file not scanned',
      },
    ]);
  });
});

describe('the document tally (what tells an empty input apart)', () => {
  it('counts documents with content, not empty, comment-only or null ones', () => {
    const count = (text: string) => {
      const tally: DocumentTally = { documents: 0 };
      parseManifestText(text, 'x.yaml', '', undefined, undefined, tally);
      return tally.documents;
    };
    expect(count('')).toBe(0);
    expect(count('# only a comment\n---\n---\n~\n---\nnull\n')).toBe(0);
    expect(count('apiVersion: v1\nkind: List\nitems: []\n')).toBe(1);
    expect(count('a: [unclosed\n')).toBe(1);
  });
});
