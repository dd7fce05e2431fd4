// The config file as people expect it: .yaml or .yml, found up to the repository root, holding
// every scan option; NODECLASS_SCAN_* variables; flag > variable > file > default; a JSON schema.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { parseCliConfig } from '../../lambda/cli/config-file.js';
import {
  CONFIG_SCHEMA_PATH,
  configJsonSchema,
  renderConfigJsonSchema,
} from '../../lambda/cli/config-schema.js';
import { EXIT_FINDINGS, EXIT_OK, EXIT_USAGE } from '../../lambda/cli/main.js';
import { ENV_SETTINGS, SETTINGS } from '../../lambda/cli/scan-settings.js';
import type { ScanReport } from '../../lambda/core/report.js';
import { ConfigError } from '../../lambda/shared/errors.js';
import { runCliCaptured, useTempTrees } from './support/run-cli.js';

const REPO = join(import.meta.dirname, '..', '..');
const tree = useTempTrees();

const NODE_CLASS = `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: web
spec:
  amiSelectorTerms:
    - alias: al2023@latest
  instanceProfile: arn:aws:iam::123456789012:instance-profile/KarpenterNode
  metadataOptions:
    httpTokens: optional
  subnetSelectorTerms:
    - tags:
        karpenter.sh/discovery: demo
  securityGroupSelectorTerms:
    - tags:
        karpenter.sh/discovery: demo
`;

function report(stdout: string): ScanReport {
  return JSON.parse(stdout) as ScanReport;
}

const checkIds = (stdout: string) => [...new Set(report(stdout).findings.map((f) => f.checkId))];

describe('finding the config file', () => {
  it('reads .nodeclass-scanner.yml as it reads .yaml', async () => {
    const dir = tree({ 'nc.yaml': NODE_CLASS, '.nodeclass-scanner.yml': 'format: json\n' });
    const run = await runCliCaptured(['scan', join(dir, 'nc.yaml')], { cwd: dir });
    expect(report(run.stdout).version).toBe(1);
  });

  it('looks in parent directories up to the repository root (the directory holding .git)', async () => {
    // Prepare: a config above the repository is not the repository's
    const dir = tree({
      '.nodeclass-scanner.yaml': 'format: junit\n',
      'repo/.git/HEAD': 'ref: refs/heads/main\n',
      'repo/.nodeclass-scanner.yaml': 'format: json\nonly: imds-v2-required\n',
      'repo/k8s/prod/nc.yaml': NODE_CLASS,
      'other/k8s/nc.yaml': NODE_CLASS,
    });
    // Act
    const inRepo = await runCliCaptured(['scan', join(dir, 'repo/k8s/prod/nc.yaml')], {
      cwd: join(dir, 'repo/k8s/prod'),
    });
    const outside = await runCliCaptured(['scan', join(dir, 'other/k8s/nc.yaml')], {
      cwd: join(dir, 'other/k8s'),
    });
    // Assess
    expect(checkIds(inRepo.stdout)).toEqual(['imds-v2-required']);
    // Outside a repository only the working directory counts: the file two levels up is not read.
    expect(outside.stdout).toMatch(/\nSummary: /);
  });

  it('stops at the repository root: a file above it is never read', async () => {
    const dir = tree({
      '.nodeclass-scanner.yaml': 'format: json\n',
      'repo/.git': 'gitdir: /elsewhere\n',
      'repo/k8s/nc.yaml': NODE_CLASS,
    });
    const run = await runCliCaptured(['scan', join(dir, 'repo/k8s/nc.yaml')], {
      cwd: join(dir, 'repo/k8s'),
    });
    expect(run.stdout).toMatch(/\nSummary: /);
  });

  it('refuses a directory holding both .yaml and .yml', async () => {
    const dir = tree({
      'nc.yaml': NODE_CLASS,
      '.nodeclass-scanner.yaml': 'format: json\n',
      '.nodeclass-scanner.yml': 'format: sarif\n',
    });
    const run = await runCliCaptured(['scan', join(dir, 'nc.yaml')], { cwd: dir });
    expect(run).toEqual({
      code: EXIT_USAGE,
      stdout: '',
      stderr:
        'nodeclass-scan: .nodeclass-scanner.yaml and .nodeclass-scanner.yml both exist: keep one\n',
    });
  });
});

describe('scan options in the config file', () => {
  it('sets every option of scan: each flag has its key (camelCase)', async () => {
    // Prepare: the flags scan --help lists
    const help = await runCliCaptured(['scan', '--help']);
    const flags = [...help.stdout.matchAll(/^ {2}(?:-\w, )?--([a-z-]+)/gm)]
      .map((match) => match[1] ?? '')
      .filter(
        // --config names the file; --now is one run's evaluation time, no setting to keep.
        (flag) => !['help', 'config', 'no-annotation-suppression', 'now'].includes(flag)
      )
      .map((flag) => flag.replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase()));
    // Assess
    expect(flags.length).toBeGreaterThan(20);
    expect([...flags].sort()).toEqual(SETTINGS.map((spec) => spec.key).sort());
  });

  it('applies the file: format, fail-on, filters, checks, versions, quiet, output', async () => {
    // Prepare
    const dir = tree({
      'k8s/nc.yaml': NODE_CLASS,
      'k8s/.git/HEAD': '',
      'k8s/.nodeclass-scanner.yaml': stringify({
        format: 'JSON',
        failOn: 'Critical',
        severity: 'medium,low',
        status: ['fail'],
        skip: ['ami-selector-pinned'],
        karpenterVersion: '1.6.0',
        output: 'reports/scan.json',
        quiet: true,
      }),
      'k8s/reports/.keep': '',
      'k8s/sub/.keep': '',
    });
    // Act: from a subdirectory, so the output path is the file's, not the working directory's
    const run = await runCliCaptured(['scan', join(dir, 'k8s/nc.yaml')], {
      cwd: join(dir, 'k8s/sub'),
    });
    // Assess
    expect(run.code).toBe(EXIT_FINDINGS);
    expect(run.stdout).toBe('');
    const written = report(readFileSync(join(dir, 'k8s/reports/scan.json'), 'utf8'));
    expect(written.findings.map((f) => [f.checkId, f.severity, f.status])).toEqual([
      ['imds-v2-required', 'medium', 'fail'],
      // karpenterVersion 1.6.0 reached the version-aware check: without it, not applicable.
      ['karpenter-version-supported', 'medium', 'fail'],
    ]);
  });

  it('resolves the world file relative to the config file', async () => {
    const dir = tree({
      'repo/.git/HEAD': '',
      'repo/.nodeclass-scanner.yaml': 'world: world.json\nformat: json\nfailOn: none\n',
      'repo/world.json': readFileSync(join(REPO, 'examples/world.json'), 'utf8'),
      'repo/deep/er/.keep': '',
    });
    const run = await runCliCaptured(['scan'], { cwd: join(dir, 'repo/deep/er') });
    expect(run.code).toBe(EXIT_OK);
    expect(report(run.stdout).summary.clusters.length).toBeGreaterThan(0);
  });

  it('takes source options from the file only when the command line names no source', async () => {
    // The file says live AWS; --world on the command line replaces that, no conflict.
    const dir = tree({
      '.nodeclass-scanner.yaml': 'aws: true\nformat: json\nfailOn: none\n',
    });
    const run = await runCliCaptured(['scan', '--world', join(REPO, 'examples/world.json')], {
      cwd: dir,
    });
    expect(run.code).toBe(EXIT_OK);
    expect(report(run.stdout).summary.clusters.length).toBeGreaterThan(0);
  });

  it('names the file, the key and the problem; suggests the key or check meant', async () => {
    const cases: [string, string][] = [
      ['fromat: json\n', 'unknown key "fromat" (did you mean "format"?)'],
      [
        'failOn: hihg\n',
        'failOn: "hihg" is not one of critical, high, medium, low, info, none (did you mean "high"?)',
      ],
      [
        'only: [imds-v2-requried]\n',
        'only: unknown check id "imds-v2-requried" (did you mean "imds-v2-required"?) (see `nodeclass-scan checks`)',
      ],
      [
        'kubernetesVersion: 1.30\n',
        'kubernetesVersion: expected text: quote it ("1.3"; YAML reads it as a number)',
      ],
    ];
    for (const [text, problem] of cases) {
      const dir = tree({ 'nc.yaml': NODE_CLASS, '.nodeclass-scanner.yaml': text });
      const run = await runCliCaptured(['scan', join(dir, 'nc.yaml')], { cwd: dir });
      expect(run.code, text).toBe(EXIT_USAGE);
      expect(run.stderr, text).toBe(`nodeclass-scan: .nodeclass-scanner.yaml: ${problem}\n`);
    }
  });
});

describe("the README's config example", () => {
  it('is valid for the scanner and for its JSON schema', () => {
    const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
    const example = /```yaml\n(# yaml-language-server: [\s\S]*?)```/.exec(readme)?.[1] ?? '';
    const config = parseCliConfig(example, 'README.md');
    expect(config.settings).toMatchObject({ format: 'sarif', failOn: 'medium' });
    const validate = new Ajv({ strict: false }).compile(configJsonSchema());
    expect(validate(parse(example))).toBe(true);
    expect(example).toContain(`$schema=./node_modules/nodeclass-scanner/${CONFIG_SCHEMA_PATH}`);
  });
});

describe('precedence: flag > NODECLASS_SCAN_* > file > default', () => {
  const dir = () =>
    tree({
      'nc.yaml': NODE_CLASS,
      '.nodeclass-scanner.yaml': 'format: junit\nfailOn: none\nseverity: low\n',
    });

  it('the variable beats the file, the flag beats the variable', async () => {
    const cwd = dir();
    const env = { NODECLASS_SCAN_FORMAT: 'Json', NODECLASS_SCAN_SEVERITY: 'critical,medium' };
    const fromEnv = await runCliCaptured(['scan', join(cwd, 'nc.yaml')], { cwd, env });
    const fromFlag = await runCliCaptured(['scan', join(cwd, 'nc.yaml'), '--format', 'sarif'], {
      cwd,
      env,
    });
    const fromFile = await runCliCaptured(['scan', join(cwd, 'nc.yaml')], { cwd });
    expect(fromEnv.code).toBe(EXIT_OK);
    expect([...new Set(report(fromEnv.stdout).findings.map((f) => f.severity))].sort()).toEqual([
      'critical',
      'medium',
    ]);
    expect(JSON.parse(fromFlag.stdout).version).toBe('2.1.0');
    expect(fromFile.stdout).toMatch(/^<\?xml/);
  });

  it('reads NODECLASS_SCAN_FAIL_ON, _REGION, _KARPENTER_VERSION and _STATUS', async () => {
    const cwd = dir();
    const run = await runCliCaptured(
      [
        'scan',
        join(cwd, 'nc.yaml'),
        '--format',
        'json',
        '--severity',
        'critical,high,medium,low,info',
      ],
      {
        cwd,
        env: {
          NODECLASS_SCAN_FAIL_ON: 'HIGH',
          NODECLASS_SCAN_REGION: 'us-iso-east-1',
          NODECLASS_SCAN_KARPENTER_VERSION: '1.6.0',
          NODECLASS_SCAN_STATUS: 'fail',
        },
      }
    );
    expect(run.code).toBe(EXIT_FINDINGS);
    const findings = report(run.stdout).findings;
    expect(findings.every((f) => f.status === 'fail')).toBe(true);
    // ISO region and a Karpenter before v1.7.0: the IPv6 defect applies.
    expect(findings.map((f) => f.checkId)).toContain('imds-ipv6-supported');
    expect(ENV_SETTINGS.map((setting) => setting.env).sort()).toEqual([
      'NODECLASS_SCAN_FAIL_ON',
      'NODECLASS_SCAN_FORMAT',
      'NODECLASS_SCAN_KARPENTER_VERSION',
      'NODECLASS_SCAN_REGION',
      'NODECLASS_SCAN_SEVERITY',
      'NODECLASS_SCAN_STATUS',
    ]);
  });

  it('refuses an invalid variable, naming it; an empty one is unset', async () => {
    const cwd = dir();
    const bad = await runCliCaptured(['scan', join(cwd, 'nc.yaml')], {
      cwd,
      env: { NODECLASS_SCAN_FAIL_ON: 'urgent' },
    });
    const empty = await runCliCaptured(['scan', join(cwd, 'nc.yaml')], {
      cwd,
      env: { NODECLASS_SCAN_FORMAT: '' },
    });
    expect(bad.code).toBe(EXIT_USAGE);
    expect(bad.stderr).toBe(
      'nodeclass-scan: NODECLASS_SCAN_FAIL_ON: "urgent" is not one of critical, high, medium, low, info, none\n'
    );
    expect(empty.stdout).toMatch(/^<\?xml/);
  });
});

describe('the JSON schema of the config file', () => {
  const schema = configJsonSchema();
  const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);

  it(`ships as ${CONFIG_SCHEMA_PATH}, current (run \`npm run docs\` when this fails)`, () => {
    expect(readFileSync(join(REPO, CONFIG_SCHEMA_PATH), 'utf8')).toBe(renderConfigJsonSchema());
    const packageJson = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
      files: string[];
    };
    expect(packageJson.files).toContain('schema/');
  });

  const VALID: Record<string, unknown> = {
    cluster: ['prod', 'staging'],
    region: 'eu-west-1',
    world: 'world.json',
    aws: true,
    profile: 'ops',
    karpenterVersion: '1.7.0',
    kubernetesVersion: '1.32',
    format: 'sarif',
    output: 'scan.sarif',
    failOn: 'medium',
    severity: ['critical', 'high'],
    status: 'fail,error',
    quiet: true,
    only: ['imds-v2-required'],
    skip: 'ami-selector-pinned,imds-hop-limit',
    nonProduction: false,
    baseline: 'baseline.json',
    stdinName: 'rendered/prod.yaml',
    awsAccountId: '111122223333',
    controllerRole: { prod: 'arn:aws:iam::111122223333:role/KarpenterController' },
    dryRunRole: 'arn:aws:iam::111122223333:role/DryRun',
    controllerPolicy: ['iam/controller.json'],
    permissionsBoundary: 'iam/boundary.json',
    crd: ['crds/karpenter.k8s.aws_ec2nodeclasses.yaml'],
    annotationSuppression: ['imds-*'],
    ignore: [
      {
        check: 'node-role-*',
        resource: '*/EC2NodeClass/legacy-*',
        reason: 'IRSA',
        expires: '2027-01-31',
      },
    ],
  };

  it('covers every key the scanner reads, and accepts what the scanner accepts', () => {
    expect(Object.keys(schema.properties as object).sort()).toEqual(Object.keys(VALID).sort());
    expect(validate(VALID), JSON.stringify(validate.errors)).toBe(true);
    expect(() => parseCliConfig(stringify(VALID), 'c.yaml')).not.toThrow();
  });

  it.each([
    ['an unknown key', { colour: true }],
    ['an unknown format', { format: 'xml' }],
    ['an unknown severity', { failOn: 'urgent' }],
    ['an unknown check', { only: ['no-such-check'] }],
    ['a version as a number', { karpenterVersion: 1.7 }],
    ['a boolean as text', { quiet: 'yes' }],
    ['a rule without a reason', { ignore: [{ check: '*', resource: '*/*/*' }] }],
    ['a controller role that is no ARN', { controllerRole: { prod: 'KarpenterController' } }],
  ])('rejects what the scanner rejects: %s', (_name, config) => {
    expect(validate(config)).toBe(false);
    expect(() => parseCliConfig(stringify(config), 'c.yaml')).toThrow(ConfigError);
  });
});
