// Karpenter's examples/v1 define an EC2NodeClass named `default` in many files, as GitOps
// repositories do per cluster: each object's findings must carry its own id and location.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findingId } from '../../lambda/core/model.js';
import { ReportContract } from './support/report-contract.js';
import { runCliCaptured, useTempTrees } from './support/run-cli.js';

const tree = useTempTrees();

const CONFIG_MAP = `apiVersion: v1
kind: ConfigMap
metadata:
  name: unrelated
data:
  a: b
`;

// Pinned image, instance profile given as an ARN (instance-profile-is-name fails), accepted here.
const A = `${CONFIG_MAP}---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
  annotations:
    ignore-check.nodeclass-scanner/instance-profile-is-name: "rendered by the old chart"
spec:
  amiSelectorTerms:
    - id: ami-0123456789abcdef0
  instanceProfile: arn:aws:iam::123456789012:instance-profile/KarpenterNode
  subnetSelectorTerms:
    - tags:
        karpenter.sh/discovery: a
  securityGroupSelectorTerms:
    - tags:
        karpenter.sh/discovery: a
`;

// @latest alias (ami-selector-pinned fails) and the same ARN, not accepted.
const B = `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  instanceProfile: arn:aws:iam::123456789012:instance-profile/KarpenterNode
  subnetSelectorTerms:
    - tags:
        karpenter.sh/discovery: b
  securityGroupSelectorTerms:
    - tags:
        karpenter.sh/discovery: b
  amiSelectorTerms:
    - alias: al2023@latest
`;

// A List whose second item is another `default`, with a role (instance-profile-is-name passes).
const C = `apiVersion: v1
kind: List
items:
  - apiVersion: karpenter.k8s.aws/v1
    kind: EC2NodeClass
    metadata:
      name: solo
    spec:
      role: KarpenterNodeRole
      amiSelectorTerms:
        - alias: bottlerocket@latest
      subnetSelectorTerms:
        - tags:
            karpenter.sh/discovery: c
      securityGroupSelectorTerms:
        - tags:
            karpenter.sh/discovery: c
  - apiVersion: karpenter.k8s.aws/v1
    kind: EC2NodeClass
    metadata:
      name: default
    spec:
      role: KarpenterNodeRole
      subnetSelectorTerms:
        - tags:
            karpenter.sh/discovery: c
      securityGroupSelectorTerms:
        - tags:
            karpenter.sh/discovery: c
      amiSelectorTerms:
        - alias: al2@latest
`;

const FILE_A = 'clusters/a/nodeclass.yaml';
const FILE_B = 'clusters/b/nodeclass.yaml';
const FILE_C = 'clusters/c/list.yaml';

/** 1-based line of the first line of `text` containing `needle`. */
function lineOf(text: string, needle: string): number {
  const index = text.split('\n').findIndex((line) => line.includes(needle));
  if (index < 0) throw new Error(`fixture lacks ${needle}`);
  return index + 1;
}

/** Scans the three files; `path` names each file as the scan does (the directory is given absolute). */
async function scan(format: string) {
  const dir = tree({ [FILE_A]: A, [FILE_B]: B, [FILE_C]: C });
  const run = await runCliCaptured(['scan', join(dir, 'clusters'), '--format', format], {
    cwd: dir,
  });
  return { ...run, path: (file: string) => join(dir, file) };
}

describe('same-named manifest objects in different files', () => {
  it('JSON: each object has its own origin and finding ids; annotations stay on their object', async () => {
    // Act
    const run = await scan('json');
    const { path } = run;
    // Assess
    expect(run.stderr).toBe('');
    const report = ReportContract.parse(JSON.parse(run.stdout));
    const of = (checkId: string) => report.findings.filter((f) => f.checkId === checkId);

    const schema = of('nodeclass-schema-valid');
    expect(schema.map((f) => f.resource)).toEqual(
      expect.arrayContaining([
        {
          cluster: '',
          kind: 'EC2NodeClass',
          name: 'default',
          origin: { file: path(FILE_A), document: 1 },
        },
        {
          cluster: '',
          kind: 'EC2NodeClass',
          name: 'default',
          origin: { file: path(FILE_B), document: 0 },
        },
        {
          cluster: '',
          kind: 'EC2NodeClass',
          name: 'default',
          origin: { file: path(FILE_C), document: 0, item: 1 },
        },
        // A unique name needs no origin, and its ids do not depend on file names.
        { cluster: '', kind: 'EC2NodeClass', name: 'solo' },
      ])
    );
    expect(new Set(report.findings.map((f) => f.id)).size).toBe(report.findings.length);
    const solo = schema.find((f) => f.resource.name === 'solo');
    expect(solo?.id).toBe(
      findingId('nodeclass-schema-valid', { cluster: '', kind: 'EC2NodeClass', name: 'solo' })
    );

    const profile = of('instance-profile-is-name').filter((f) => f.resource.name === 'default');
    const byFile = (file: string) => profile.find((f) => f.resource.origin?.file === path(file));
    expect(byFile(FILE_A)).toMatchObject({
      status: 'suppressed',
      suppression: { source: 'annotation', reason: 'rendered by the old chart' },
    });
    expect(byFile(FILE_B)?.status).toBe('fail');
    expect(byFile(FILE_C)?.status).not.toMatch(/fail|suppressed/);

    const pinned = of('ami-selector-pinned').filter((f) => f.status === 'fail');
    expect(pinned.map((f) => [f.resource.name, f.resource.origin?.file]).sort()).toEqual([
      ['default', path(FILE_B)],
      ['default', path(FILE_C)],
      ['solo', undefined],
    ]);
  });

  it('SARIF: each result points at its own file and line', async () => {
    const run = await scan('sarif');
    const sarif = JSON.parse(run.stdout) as {
      runs: {
        results: {
          ruleId: string;
          kind?: string;
          suppressions?: unknown[];
          locations: {
            physicalLocation: {
              artifactLocation: { uri: string };
              region: { startLine: number };
            };
            logicalLocations: { fullyQualifiedName: string }[];
          }[];
        }[];
      }[];
    };
    const results = sarif.runs[0]?.results ?? [];
    const where = (ruleId: string) =>
      results
        .filter((r) => r.ruleId === ruleId)
        .map((r) => {
          const location = r.locations[0];
          return [
            location?.physicalLocation.artifactLocation.uri,
            location?.physicalLocation.region.startLine,
            r.suppressions === undefined ? 'open' : 'suppressed',
          ];
        })
        .sort();
    expect(where('ami-selector-pinned')).toEqual(
      [
        [FILE_B, lineOf(B, 'al2023@latest'), 'open'],
        [FILE_C, lineOf(C, 'al2@latest'), 'open'],
        [FILE_C, lineOf(C, 'bottlerocket@latest'), 'open'],
      ].sort()
    );
    expect(where('instance-profile-is-name')).toEqual([
      [FILE_A, lineOf(A, 'instanceProfile:'), 'suppressed'],
      [FILE_B, lineOf(B, 'instanceProfile:'), 'open'],
    ]);
    const names = results
      .filter((r) => r.ruleId === 'ami-selector-pinned')
      .map((r) => r.locations[0]?.logicalLocations[0]?.fullyQualifiedName)
      .sort();
    expect(names).toEqual([
      `EC2NodeClass/default@${run.path(FILE_B)}#1`,
      `EC2NodeClass/default@${run.path(FILE_C)}#1.items[1]`,
      'EC2NodeClass/solo',
    ]);
  });

  it('table: one block per object, headed by its own file and line', async () => {
    const run = await scan('table');
    const blocks = run.stdout.split('\n\n');
    const block = (heading: string) => blocks.find((b) => b.includes(heading)) ?? '';
    const a = block(
      `EC2NodeClass default  (${run.path(FILE_A)}:${lineOf(A, 'kind: EC2NodeClass') - 1})`
    );
    const b = block(`EC2NodeClass default  (${run.path(FILE_B)}:1)`);
    const c = block(
      `EC2NodeClass default  (${run.path(FILE_C)}:${lineOf(C, 'name: default') - 3})`
    );
    expect(a).toMatch(/suppressed {2}instance-profile-is-name/);
    expect(a).not.toContain('ami-selector-pinned');
    expect(b).toMatch(/CRITICAL fail {2}instance-profile-is-name/);
    expect(b).toContain('ami-selector-pinned');
    expect(c).toContain('al2@latest');
    expect(c).not.toContain('instance-profile-is-name');
  });

  it('JUnit: one testsuite per object, named with its file and document', async () => {
    const run = await scan('junit');
    const suites = [...run.stdout.matchAll(/<testsuite name="([^"]*)"/g)].map((m) => m[1]);
    const [a, b, c] = [FILE_A, FILE_B, FILE_C].map(run.path);
    expect(suites).toEqual(
      expect.arrayContaining([
        `default (${a}#2)`,
        `default (${b}#1)`,
        `default (${c}#1.items[1])`,
        'solo',
      ])
    );
    const suiteOf = (name: string) =>
      run.stdout.slice(run.stdout.indexOf(`<testsuite name="${name}"`)).split('</testsuite>')[0] ??
      '';
    expect(suiteOf(`default (${b}#1)`)).toMatch(
      /<testcase[^>]*name="ami-selector-pinned"[^>]*>\s*<failure/
    );
    expect(suiteOf(`default (${a}#2)`)).not.toMatch(/name="ami-selector-pinned"[^>]*>\s*<failure/);
  });
});

describe('world and live finding ids', () => {
  it('are unchanged: resources carry no origin and ids hash cluster, kind and name only', async () => {
    const run = await runCliCaptured([
      'scan',
      '--world',
      join(import.meta.dirname, '../../examples/world.json'),
      '--format',
      'json',
    ]);
    const report = ReportContract.parse(JSON.parse(run.stdout));
    expect(report.findings.some((f) => f.resource.origin !== undefined)).toBe(false);
    const schema = report.findings.find(
      (f) =>
        f.checkId === 'nodeclass-schema-valid' &&
        f.status === 'pass' &&
        f.resource.cluster === 'prod-use1' &&
        f.resource.name === 'analytics'
    );
    // The id this finding had before origins existed (stored Lambda state and baselines use it).
    expect(schema?.id).toBe('fe6e3f1766f59a46');
  });
});

describe('same-named manifest objects against AWS facts', () => {
  it('collects and checks each object against its own selectors', async () => {
    // Prepare: same name, different subnets (the `network: edge` subnets are nearly full).
    const nodeClass = (subnetTags: string) =>
      [
        'apiVersion: karpenter.k8s.aws/v1',
        'kind: EC2NodeClass',
        'metadata: { name: default }',
        'spec:',
        '  amiSelectorTerms: [{ alias: al2023@v20251103 }]',
        '  role: KarpenterNodeRole-prod-use1',
        `  subnetSelectorTerms: [{ tags: { ${subnetTags} } }]`,
        '  securityGroupSelectorTerms: [{ tags: { karpenter.sh/discovery: prod-use1 } }]',
        '',
      ].join('\n');
    const dir = tree({
      'edge/nodeclass.yaml': nodeClass('network: edge'),
      'main/nodeclass.yaml': nodeClass('karpenter.sh/discovery: prod-use1'),
    });
    // Act
    const run = await runCliCaptured(
      [
        'scan',
        '--world',
        join(import.meta.dirname, '../../examples/world.json'),
        '--cluster',
        'prod-use1',
        '--format',
        'json',
        join(dir, 'edge'),
        join(dir, 'main'),
      ],
      { now: new Date('2026-05-01T00:00:00Z') }
    );
    // Assess
    const report = ReportContract.parse(JSON.parse(run.stdout));
    const subnets = report.findings.filter((f) => f.checkId === 'subnets-have-free-ips');
    expect(
      subnets.map((f) => [f.resource.origin?.file, f.status === 'fail' ? 'fail' : 'ok']).sort()
    ).toEqual([
      [join(dir, 'edge/nodeclass.yaml'), 'fail'],
      [join(dir, 'main/nodeclass.yaml'), 'ok'],
    ]);
  });
});
