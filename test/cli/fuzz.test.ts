import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { OUTPUT_FORMATS } from '../../lambda/cli/formats/index.js';
import type { ScanReport } from '../../lambda/core/report.js';
import { propertyRuns } from '../support/property-runs.js';
import { asffErrors } from './support/asff-schema.js';
import { ReportContract } from './support/report-contract.js';
import { runCliCaptured, tempTree } from './support/run-cli.js';
import { sarifErrors } from './support/sarif-schema.js';
import { parseXml } from './support/strict-xml.js';

// Inputs the CLI must survive: arbitrary text, YAML-ish token soup, JSON values, NodeClass-shaped
// objects with random (often wrong-typed) fields, huge strings and deep nesting.

const yamlTokens = fc
  .array(
    fc.constantFrom(
      'apiVersion: karpenter.k8s.aws/v1\n',
      'kind: EC2NodeClass\n',
      'kind: List\nitems:\n',
      'metadata:\n  name: x\n',
      'spec:\n',
      '  amiSelectorTerms:\n',
      '    - alias: al2023@latest\n',
      '---\n',
      '- ',
      ': ',
      '&a ',
      '*a ',
      '<<: *a\n',
      '[',
      ']',
      '{',
      '}',
      '"',
      "'",
      '\t',
      '\n',
      '  ',
      '? ',
      '|\n',
      '>-\n',
      '# comment\n',
      '!!binary ',
      '!!str ',
      '%YAML 1.2\n',
      '\u0000',
      '\ufeff',
      '😀'
    ),
    { maxLength: 60 }
  )
  .map((tokens) => tokens.join(''));

const anyText = fc.oneof(fc.string({ maxLength: 400, unit: 'binary' }), yamlTokens);

const hugeString = fc
  .tuple(fc.string({ minLength: 1, maxLength: 3 }), fc.integer({ min: 5_000, max: 30_000 }))
  .map(([chunk, length]) => chunk.repeat(Math.ceil(length / chunk.length)).slice(0, length));

const deeplyNested = fc
  .tuple(fc.integer({ min: 1, max: 3_000 }), fc.boolean())
  .map(([depth, arrays]) =>
    arrays
      ? `${'['.repeat(depth)}1${']'.repeat(depth)}`
      : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`
  );

const oddValue = fc.oneof(
  { arbitrary: fc.anything({ maxDepth: 3 }), weight: 6 },
  { arbitrary: hugeString, weight: 1 },
  {
    arbitrary: fc.constantFrom(
      '',
      ' ',
      'arn:aws:iam::1:instance-profile/x',
      'a/b',
      '-1',
      'null',
      '@'
    ),
    weight: 3,
  }
);

const maybe = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined });

const selectorTerm = fc.record(
  {
    alias: fc.oneof(
      fc.constantFrom('al2023@latest', 'al2@v20240807', 'bottlerocket@1.2.3', 'windows2022@latest'),
      oddValue
    ),
    id: fc.oneof(fc.constant('ami-0123456789abcdef0'), oddValue),
    name: oddValue,
    owner: oddValue,
    ssmParameter: oddValue,
    tags: fc.oneof(fc.dictionary(fc.string(), fc.string(), { maxKeys: 4 }), oddValue),
  },
  { requiredKeys: [] }
);

const nodeClassShaped = fc.record(
  {
    apiVersion: fc.oneof(
      fc.constantFrom('karpenter.k8s.aws/v1', 'karpenter.k8s.aws/v1beta1'),
      oddValue
    ),
    kind: fc.oneof(fc.constantFrom('EC2NodeClass', 'NodePool'), oddValue),
    metadata: fc.oneof(
      fc.record(
        {
          name: oddValue,
          annotations: fc.oneof(
            fc.record({
              'nodeclass-scanner/region': fc.constantFrom('us-iso-east-1', 'eu-west-1', 'mars-1'),
              'nodeclass-scanner/karpenter-version': fc.constantFrom('1.6.0', 'v1.7.0', 'x'),
            }),
            oddValue
          ),
        },
        { requiredKeys: [] }
      ),
      oddValue
    ),
    spec: fc.oneof(
      fc.record(
        {
          amiSelectorTerms: fc.oneof(fc.array(selectorTerm, { maxLength: 35 }), oddValue),
          subnetSelectorTerms: fc.oneof(fc.array(selectorTerm, { maxLength: 3 }), oddValue),
          securityGroupSelectorTerms: fc.oneof(fc.array(selectorTerm, { maxLength: 3 }), oddValue),
          role: oddValue,
          instanceProfile: oddValue,
          amiFamily: fc.oneof(fc.constantFrom('AL2023', 'AL2', 'Custom', 'Windows2022'), oddValue),
          tags: fc.oneof(
            fc.dictionary(
              fc.oneof(
                fc.constantFrom(
                  'kubernetes.io/cluster/demo',
                  'karpenter.sh/nodepool',
                  'eks:eks-cluster-name',
                  ''
                ),
                fc.string()
              ),
              fc.oneof(fc.string(), oddValue)
            ),
            oddValue
          ),
          metadataOptions: fc.oneof(
            fc.record(
              {
                httpTokens: fc.oneof(fc.constantFrom('optional', 'required'), oddValue),
                httpProtocolIPv6: fc.oneof(fc.constantFrom('enabled', 'disabled'), oddValue),
                httpPutResponseHopLimit: fc.oneof(fc.integer({ min: -1, max: 70 }), oddValue),
                httpEndpoint: oddValue,
              },
              { requiredKeys: [] }
            ),
            oddValue
          ),
          blockDeviceMappings: fc.oneof(
            fc.array(
              fc.record(
                {
                  deviceName: oddValue,
                  rootVolume: fc.oneof(fc.boolean(), oddValue),
                  ebs: fc.oneof(
                    fc.record(
                      { encrypted: fc.oneof(fc.boolean(), oddValue), volumeSize: oddValue },
                      { requiredKeys: [] }
                    ),
                    oddValue
                  ),
                },
                { requiredKeys: [] }
              ),
              { maxLength: 3 }
            ),
            oddValue
          ),
          kubelet: oddValue,
        },
        { requiredKeys: [] }
      ),
      oddValue
    ),
    status: maybe(oddValue),
  },
  { requiredKeys: [] }
);

/** A manifest file: its text and extension. */
const manifest = fc.oneof(
  anyText.map((text) => ({ text, extension: '.yaml' })),
  fc
    .jsonValue({ maxDepth: 4 })
    .map((value) => ({ text: JSON.stringify(value), extension: '.json' })),
  fc
    .array(nodeClassShaped, { minLength: 1, maxLength: 3 })
    .chain((objects) =>
      fc.constantFrom(
        { text: objects.map((o) => safeYaml(o)).join('---\n'), extension: '.yaml' },
        { text: safeJson({ apiVersion: 'v1', kind: 'List', items: objects }), extension: '.json' }
      )
    ),
  deeplyNested.map((nested) => ({
    text: `{"apiVersion":"karpenter.k8s.aws/v1","kind":"EC2NodeClass","metadata":{"name":"deep"},"spec":{"kubelet":${nested},"amiSelectorTerms":${nested}}}`,
    extension: '.json',
  })),
  hugeString.map((huge) => ({
    text: `apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: ${JSON.stringify(huge)}\nspec:\n  role: ${JSON.stringify(huge)}\n`,
    extension: '.yaml',
  }))
);

// fc.anything() yields values (-0, undefined in arrays, symbols-as-keys never) that YAML and JSON
// cannot all express; serialise what they can and fall back to a marker.
function safeYaml(value: unknown): string {
  try {
    return stringify(value, { aliasDuplicateObjects: false });
  } catch {
    return 'unserialisable: true\n';
  }
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? 'null';
  } catch {
    return 'null';
  }
}

const options = fc.record({
  region: maybe(fc.constantFrom('us-east-1', 'us-iso-east-1', 'us-isob-east-1', 'cn-north-1')),
  karpenterVersion: maybe(fc.constantFrom('1.2.1', 'v1.7.0', '1.7.0-rc.1', '0.37.0')),
  viaStdin: fc.boolean(),
  nonProduction: fc.boolean(),
});

const { dir, cleanup } = tempTree({});
afterAll(cleanup);

function assertWellFormed(format: (typeof OUTPUT_FORMATS)[number], stdout: string): void {
  switch (format) {
    case 'json':
      ReportContract.parse(JSON.parse(stdout));
      return;
    case 'sarif':
      expect(sarifErrors(JSON.parse(stdout))).toEqual([]);
      return;
    case 'junit':
      expect(parseXml(stdout).name).toBe('testsuites');
      return;
    case 'asff':
      // Without a region (manifests only) there is no ASFF to write: a usage error, no output.
      if (stdout !== '') expect(asffErrors(JSON.parse(stdout))).toEqual([]);
      return;
    case 'table':
      // The summary ends the table; wrapped, it continues under its text.
      expect(stdout).toMatch(/\nSummary: [^\n]*(\n {9}[^\n]*)*\n$/);
      // biome-ignore lint/suspicious/noControlCharactersInRegex: asserting none reach the terminal.
      expect(stdout).not.toMatch(/[\u0000-\u0009\u000B-\u001F\u007F-\u009F]/);
      return;
  }
}

describe('CLI fuzzing', () => {
  it('never crashes: exit 0/1/2 and a well-formed report in every format', async () => {
    await fc.assert(
      fc.asyncProperty(manifest, options, async ({ text, extension }, flags) => {
        const file = join(dir, `input${extension}`);
        writeFileSync(file, text);
        const argv = [
          'scan',
          flags.viaStdin ? '-' : file,
          ...(flags.region ? ['--region', flags.region] : []),
          ...(flags.karpenterVersion ? ['--karpenter-version', flags.karpenterVersion] : []),
          ...(flags.nonProduction ? ['--non-production'] : []),
        ];
        let jsonReport: ScanReport | undefined;
        for (const format of OUTPUT_FORMATS) {
          const account = format === 'asff' ? ['--aws-account-id', '123456789012'] : [];
          const run = await runCliCaptured([...argv, ...account, '--format', format], {
            stdin: text,
          });
          expect([0, 1, 2]).toContain(run.code);
          if (format === 'asff' && flags.region) expect(run.stdout).not.toBe('');
          expect(run.stderr).not.toContain('internal error');
          assertWellFormed(format, run.stdout);
          if (format === 'json') jsonReport = JSON.parse(run.stdout);
          if (format === 'sarif' && jsonReport) {
            // One result per fail, error or suppressed finding; a follow-on is folded into its root.
            const open = jsonReport.findings.filter((finding) =>
              ['fail', 'error', 'suppressed'].includes(finding.status)
            );
            const ids = new Set(open.map((finding) => finding.id));
            const reported = open.filter(
              (finding) => finding.causedBy === undefined || !ids.has(finding.causedBy)
            );
            expect(JSON.parse(run.stdout).runs[0].results).toHaveLength(reported.length);
          }
        }
      }),
      { numRuns: propertyRuns(150) }
    );
    // Bounded by numRuns, not by time; the generous timeout only absorbs a loaded CI machine.
  }, 180_000);
});
