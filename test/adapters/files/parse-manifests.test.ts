import { describe, expect, it } from 'vitest';
import {
  flowNestingTooDeep,
  MAX_FLOW_NESTING,
  MAX_NESTING,
  MAX_POSITIONS,
  parseManifestText,
} from '../../../lambda/adapters/files/parse-manifests.js';

const NODECLASS = `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  amiSelectorTerms:
    - alias: al2023@v20251001
    - id: ami-0123456789abcdef0
  role: KarpenterNodeRole
  subnetSelectorTerms:
    - tags:
        karpenter.sh/discovery: demo
  securityGroupSelectorTerms:
    - tags:
        karpenter.sh/discovery: demo
`;

const NODEPOOL = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: general
spec:
  template:
    spec:
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: default
      requirements: []
`;

const CONFIGMAP = `apiVersion: v1
kind: ConfigMap
metadata:
  name: unrelated
data:
  key: value
`;

describe('parseManifestText', () => {
  it('reads every document of a multi-document file and ignores other kinds', () => {
    // Act
    const parsed = parseManifestText(`${CONFIGMAP}---\n${NODECLASS}---\n${NODEPOOL}`, 'all.yaml');
    // Assess
    expect(parsed.errors).toEqual([]);
    expect(parsed.nodeClasses.map((entry) => entry.name)).toEqual(['default']);
    expect(parsed.nodeClasses[0]?.parsed.ok).toBe(true);
    expect(parsed.nodeClasses[0]?.source).toMatchObject({ file: 'all.yaml', document: 1 });
    expect(parsed.nodePools.map((entry) => entry.name)).toEqual(['general']);
    expect(parsed.nodePools[0]?.parsed.ok).toBe(true);
  });

  it('records 1-based positions of keys and sequence items, nested paths included', () => {
    const [entry] = parseManifestText(NODECLASS, 'nc.yaml').nodeClasses;
    const positions = entry?.source?.positions ?? {};
    expect(positions['']).toEqual({ line: 1, column: 1 });
    expect(positions.spec).toEqual({ line: 5, column: 1 });
    expect(positions['spec.amiSelectorTerms']).toEqual({ line: 6, column: 3 });
    expect(positions['spec.amiSelectorTerms[0]']).toEqual({ line: 7, column: 7 });
    expect(positions['spec.amiSelectorTerms[0].alias']).toEqual({ line: 7, column: 7 });
    expect(positions['spec.amiSelectorTerms[1].id']).toEqual({ line: 8, column: 7 });
    expect(positions['spec.subnetSelectorTerms[0].tags.karpenter.sh/discovery']).toEqual({
      line: 12,
      column: 9,
    });
  });

  it('counts lines across documents', () => {
    const [entry] = parseManifestText(`${CONFIGMAP}---\n${NODECLASS}`, 'two.yaml').nodeClasses;
    const offset = CONFIGMAP.split('\n').length;
    expect(entry?.source?.positions?.['spec.role']).toEqual({ line: 9 + offset, column: 3 });
  });

  it('unpacks List kinds, with positions pointing into the list', () => {
    const indent = (text: string) =>
      text
        .trimEnd()
        .split('\n')
        .map((line, index) => (index === 0 ? `- ${line}` : `  ${line}`))
        .join('\n');
    const list = `apiVersion: v1\nkind: List\nitems:\n${indent(CONFIGMAP)}\n${indent(NODECLASS)}\n${indent(NODEPOOL)}\n`;
    const parsed = parseManifestText(list, 'list.yaml');
    expect(parsed.errors).toEqual([]);
    expect(parsed.nodeClasses.map((entry) => entry.name)).toEqual(['default']);
    expect(parsed.nodePools.map((entry) => entry.name)).toEqual(['general']);
    const configMapLines = CONFIGMAP.trimEnd().split('\n').length;
    expect(parsed.nodeClasses[0]?.source?.positions?.['spec.amiSelectorTerms[0].alias']).toEqual({
      line: 3 + configMapLines + 7,
      column: 9,
    });
  });

  it('unpacks typed lists such as EC2NodeClassList', () => {
    const list = JSON.stringify({
      apiVersion: 'karpenter.k8s.aws/v1',
      kind: 'EC2NodeClassList',
      items: [
        { apiVersion: 'karpenter.k8s.aws/v1', kind: 'EC2NodeClass', metadata: { name: 'a' } },
        { apiVersion: 'karpenter.k8s.aws/v1', kind: 'EC2NodeClass', metadata: { name: 'b' } },
      ],
    });
    const parsed = parseManifestText(list, 'list.json');
    expect(parsed.nodeClasses.map((entry) => entry.name)).toEqual(['a', 'b']);
  });

  it('reads JSON, tab-indented as editors write it, with positions', () => {
    const json =
      '{\n\t"apiVersion": "karpenter.k8s.aws/v1",\n\t"kind": "EC2NodeClass",\n\t"metadata": {\n\t\t"name": "from-json"\n\t},\n\t"spec": {\n\t\t"instanceProfile": "arn:aws:iam::1:instance-profile/x"\n\t}\n}\n';
    const parsed = parseManifestText(json, 'nc.json');
    expect(parsed.errors).toEqual([]);
    expect(parsed.nodeClasses[0]?.name).toBe('from-json');
    expect(parsed.nodeClasses[0]?.source?.positions?.['spec.instanceProfile']).toEqual({
      line: 8,
      column: 3,
    });
  });

  it('keeps objects that do not validate, with their issues, rather than dropping them', () => {
    const parsed = parseManifestText(
      NODECLASS.replace('  role: KarpenterNodeRole\n', '  role: 42\n'),
      'nc.yaml'
    );
    expect(parsed.nodeClasses).toHaveLength(1);
    expect(parsed.nodeClasses[0]?.parsed).toMatchObject({
      ok: false,
      issues: [expect.objectContaining({ path: 'spec.role' })],
    });
  });

  it('names an object without metadata.name after its file and document', () => {
    const parsed = parseManifestText(NODECLASS.replace('  name: default\n', ''), 'x.yaml');
    expect(parsed.nodeClasses[0]?.name).toBe('x.yaml#1');
  });

  it('ignores objects of other API groups that reuse the kind names', () => {
    const parsed = parseManifestText(
      NODECLASS.replace('karpenter.k8s.aws/v1', 'example.com/v1'),
      'x.yaml'
    );
    expect(parsed.nodeClasses).toEqual([]);
  });

  it('reports a syntax error with file and line, and still reads the other documents', () => {
    const parsed = parseManifestText(
      `${NODECLASS}---\nfoo: [unclosed\nbar: 1\n---\n${NODEPOOL}`,
      'x.yaml'
    );
    expect(parsed.errors).toHaveLength(1);
    expect(parsed.errors[0]?.source).toMatch(/^x\.yaml:1[7-9]$/);
    expect(parsed.errors[0]?.message).toContain('document 2 is not valid YAML/JSON');
    expect(parsed.nodeClasses).toHaveLength(1);
    expect(parsed.nodePools).toHaveLength(1);
  });

  it('refuses an alias bomb instead of expanding it', () => {
    const levels = 'abcdefghij'.split('');
    const bomb = levels
      .map((name, index) => {
        const previous = levels[index - 1];
        const items = previous ? Array(10).fill(`*${previous}`) : Array(10).fill('"lol"');
        return `${name}: &${name} [${items.join(', ')}]`;
      })
      .join('\n');
    const text = `apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: bomb\nspec:\n  tags:\n    x: y\n${bomb.replace(/^/gm, '  ')}\n`;
    const parsed = parseManifestText(text, 'bomb.yaml');
    expect(parsed.nodeClasses).toEqual([]);
    expect(parsed.errors[0]?.message).toMatch(/cannot be read: .*alias/i);
  });

  it('reports nesting too deep for the parser as an error, not a crash', () => {
    const parsed = parseManifestText(`${'['.repeat(20_000)}${']'.repeat(20_000)}`, 'deep.yaml');
    expect(parsed.errors).toHaveLength(1);
    expect(parsed.errors[0]?.source).toBe('deep.yaml:1');
  });

  it('refuses flow nesting the YAML parser cannot survive before parsing it (found by fuzzing)', () => {
    // 4,000 nested arrays made the parser's regex compiler run out of memory and kill the process.
    const text = `{"apiVersion":"karpenter.k8s.aws/v1","kind":"EC2NodeClass","metadata":{"name":"deep"},\n"spec":{"kubelet":${'['.repeat(4_000)}${']'.repeat(4_000)}}}`;
    const parsed = parseManifestText(text, 'deep.json');
    expect(parsed.nodeClasses).toEqual([]);
    expect(parsed.errors).toEqual([
      {
        source: 'deep.json:2',
        message: `brackets nest more than ${MAX_FLOW_NESTING} levels deep; not parsed`,
      },
    ]);
  });

  it('counts brackets only outside quoted strings and comments', () => {
    const deepInStrings = `a: "${'['.repeat(2_000)}"\nb: '${'{'.repeat(2_000)}'\nc: 1 # ${'['.repeat(2_000)}\n`;
    expect(flowNestingTooDeep(deepInStrings, MAX_FLOW_NESTING)).toBeUndefined();
    expect(flowNestingTooDeep(`x: ${'['.repeat(3)}`, 2)).toBe(1);
  });

  it('refuses documents nested deeper than the limit, whatever the stack depth', () => {
    const nested = (depth: number) =>
      `{"apiVersion":"karpenter.k8s.aws/v1","kind":"EC2NodeClass","metadata":{"name":"d"},"spec":{"kubelet":${'['.repeat(depth)}${']'.repeat(depth)}}}`;
    // The object, spec and kubelet's arrays: 2 + depth levels.
    const accepted = parseManifestText(nested(MAX_NESTING - 2), 'ok.json');
    expect(accepted.errors).toEqual([]);
    expect(accepted.nodeClasses).toHaveLength(1);
    const refused = parseManifestText(nested(MAX_NESTING - 1), 'deep.json');
    expect(refused.nodeClasses).toEqual([]);
    expect(refused.errors).toEqual([
      {
        source: 'deep.json:1',
        message: `document 1 is nested more than ${MAX_NESTING} levels deep`,
      },
    ]);
  });

  it('bounds the positions it records for a huge object', () => {
    const tags = Array.from({ length: MAX_POSITIONS + 500 }, (_, i) => `    k${i}: v`).join('\n');
    const parsed = parseManifestText(`${NODECLASS}  tags:\n${tags}\n`, 'big.yaml');
    const positions = parsed.nodeClasses[0]?.source?.positions ?? {};
    expect(Object.keys(positions).length).toBeLessThanOrEqual(MAX_POSITIONS);
    expect(positions['spec.amiSelectorTerms[0].alias']).toEqual({ line: 7, column: 7 });
  });

  it('bounds the depth it records positions for', () => {
    const deep = `${'['.repeat(150)}${']'.repeat(150)}`;
    const parsed = parseManifestText(`${NODECLASS}  kubelet:\n    deep: ${deep}\n`, 'deep.yaml');
    const paths = Object.keys(parsed.nodeClasses[0]?.source?.positions ?? {});
    expect(paths).toContain('spec.kubelet.deep');
    expect(paths.some((path) => path.split('[').length > 70)).toBe(false);
  });

  it('ignores empty documents and empty files', () => {
    expect(parseManifestText('', 'empty.yaml')).toEqual({
      nodeClasses: [],
      nodePools: [],
      errors: [],
    });
    expect(parseManifestText('---\n---\n', 'empty.yaml').errors).toEqual([]);
  });
});

describe('parseManifestText limits', () => {
  const limits = { maxDocuments: 3, maxDocumentTokens: 200, maxTotalTokens: 1_000 };

  it('reads a file at the limits in full', () => {
    const parsed = parseManifestText(
      `${CONFIGMAP}---\n${NODECLASS}---\n${NODEPOOL}`,
      'ok.yaml',
      '',
      {
        ...limits,
        maxDocumentTokens: 100,
      }
    );
    expect(parsed.errors).toEqual([]);
    expect(parsed.nodeClasses).toHaveLength(1);
    expect(parsed.nodePools).toHaveLength(1);
  });

  it('refuses a file with more documents than allowed, keeping none of its objects', () => {
    const parsed = parseManifestText(`${NODECLASS}---\n`.repeat(4), 'many.yaml', '', limits);
    expect(parsed.nodeClasses).toEqual([]);
    expect(parsed.errors).toEqual([
      {
        source: 'many.yaml:48',
        message:
          'holds too many documents (limit 3, set NODECLASS_SCAN_MAX_DOCUMENTS to raise it); not scanned',
      },
    ]);
  });

  it('refuses a document with more tokens than allowed, at the line where it passed the limit', () => {
    const flow = `${NODECLASS}---\nitems: [${'1,'.repeat(150)}1]\n`;
    const parsed = parseManifestText(flow, 'flow.yaml', '', limits);
    expect(parsed.nodeClasses).toEqual([]);
    expect(parsed.errors).toEqual([
      {
        source: 'flow.yaml:17',
        message:
          'document 2 holds too many YAML tokens (limit 200, set NODECLASS_SCAN_MAX_DOCUMENT_TOKENS to raise it); file not scanned',
      },
    ]);
  });

  it('counts blank lines, comments and stray `...` markers, which cost memory too', () => {
    for (const filler of ['\n', '# note\n', '...\n', '}\n']) {
      const parsed = parseManifestText(`a: 1\n${filler.repeat(300)}`, 'filler.yaml', '', {
        ...limits,
        maxDocuments: 100,
      });
      expect(parsed.errors[0]?.message, JSON.stringify(filler)).toMatch(
        /too many (YAML tokens|documents)/
      );
    }
  });

  it('shares one token budget across the files of a scan', () => {
    const budget = { tokensLeft: 100 }; // one NodeClass is 58 tokens
    const scan = { ...limits, maxTotalTokens: 100 };
    const first = parseManifestText(NODECLASS, 'first.yaml', '', scan, budget);
    const second = parseManifestText(NODECLASS, 'second.yaml', '', scan, budget);
    expect(first.errors).toEqual([]);
    expect(first.nodeClasses).toHaveLength(1);
    expect(second.nodeClasses).toEqual([]);
    expect(second.errors).toEqual([
      {
        source: expect.stringMatching(/^second\.yaml:\d+$/),
        message:
          "the scan's files hold too many YAML tokens in all (limit 100, set NODECLASS_SCAN_MAX_TOKENS to raise it); file not scanned",
      },
    ]);
    expect(budget.tokensLeft).toBeLessThan(0);
  });

  it('stops a 10 MiB flow array and a 10 MiB `---` stream early under the default limits', () => {
    const flow = parseManifestText(`[${'1,'.repeat(5 * 1024 * 1024)}1]`, 'flow.yaml');
    expect(flow.errors).toEqual([
      expect.objectContaining({
        source: 'flow.yaml:1',
        message: expect.stringContaining('NODECLASS_SCAN_MAX_DOCUMENT_TOKENS'),
      }),
    ]);
    const dashes = parseManifestText('---\n'.repeat(2_500_000), 'dashes.yaml');
    expect(dashes.errors).toEqual([
      expect.objectContaining({
        source: 'dashes.yaml:10001',
        message: expect.stringContaining('NODECLASS_SCAN_MAX_DOCUMENTS'),
      }),
    ]);
  }, 120_000);

  it('leaves stack traces on after parsing (they are off only while the parser runs)', () => {
    const before = Error.stackTraceLimit;
    parseManifestText('a: [unclosed\n', 'bad.yaml');
    expect(Error.stackTraceLimit).toBe(before);
    expect(before).toBeGreaterThan(0);
  });
});
