import { join } from 'node:path';
import type { Log, Result } from 'sarif';
import { describe, expect, it } from 'vitest';
import {
  artifactUri,
  FINDING_FINGERPRINT,
  formatSarif,
  pseudoPath,
  referenceUrl,
  repositoryWebUrl,
} from '../../../lambda/cli/formats/sarif.js';
import { type SourceIndex, sourceIndexOf } from '../../../lambda/cli/formats/sources.js';
import type { CheckMeta } from '../../../lambda/core/check.js';
import { CHECKS } from '../../../lambda/core/checks/index.js';
import type { Finding, Severity } from '../../../lambda/core/model.js';
import { runCliCaptured } from '../support/run-cli.js';
import { sarifErrors } from '../support/sarif-schema.js';
import { aFinding, aReport, inventoryFrom, nodeClass, TWO_NODECLASSES } from './fixtures.js';

const cwd = '/repo';
const sources = sourceIndexOf(inventoryFrom('manifests/nodeclasses.yaml', TWO_NODECLASSES));
const WORLD = join(import.meta.dirname, '../../../examples/world.json');

function sarifOf(
  findings: readonly Finding[],
  options: {
    sources?: SourceIndex;
    inputErrors?: { source: string; message: string }[];
    stdinName?: string;
    checks?: readonly CheckMeta[];
  } = {}
): Log {
  const report = aReport(findings, { inputErrors: options.inputErrors ?? [] });
  return JSON.parse(
    formatSarif(report, {
      checks: options.checks ?? CHECKS,
      sources: options.sources ?? sources,
      cwd,
      toolVersion: '0.1.0',
      ...(options.stdinName === undefined ? {} : { stdinName: options.stdinName }),
    })
  ) as Log;
}

const resultsOf = (log: Log): Result[] => log.runs[0]?.results ?? [];
const noticesOf = (log: Log): Result[] =>
  (log.runs[0]?.properties?.notices as Result[] | undefined) ?? [];
const uriOf = (result: Result | undefined) =>
  result?.locations?.[0]?.physicalLocation?.artifactLocation?.uri;

/** What GitHub code scanning needs of every result before it accepts an upload. */
function expectUploadable(log: Log): void {
  expect(sarifErrors(log)).toEqual([]);
  for (const result of resultsOf(log)) {
    const physical = result.locations?.[0]?.physicalLocation;
    expect(physical?.artifactLocation?.uri, result.ruleId).toMatch(/\S/);
    expect(physical?.region?.startLine, result.ruleId).toBeGreaterThanOrEqual(1);
  }
}

const arnFinding = aFinding({
  checkId: 'instance-profile-is-name',
  severity: 'critical',
  resource: nodeClass('arn-profile'),
  location: { path: 'spec.instanceProfile' },
});

describe('formatSarif', () => {
  it('produces a log that validates against the SARIF 2.1.0 schema', () => {
    // Prepare
    const findings = [
      arnFinding,
      aFinding({ checkId: 'ami-owner-explicit', status: 'error', resource: nodeClass('tagged') }),
      aFinding({ checkId: 'role-is-name', status: 'pass' }),
      aFinding({
        checkId: 'node-role-policies',
        status: 'suppressed',
        resource: nodeClass('tagged'),
        suppression: { reason: 'CNI has its own role', source: 'config', status: 'fail' },
      }),
    ];
    // Act
    const log = sarifOf(findings, { inputErrors: [{ source: 'x.yaml:3', message: 'bad YAML' }] });
    // Assess
    expectUploadable(log);
    expect(log.version).toBe('2.1.0');
  });

  it('reports fail, error and suppressed findings only', () => {
    const log = sarifOf([
      aFinding({ checkId: 'a', status: 'fail', resource: nodeClass('one') }),
      aFinding({ checkId: 'b', status: 'error', resource: nodeClass('one') }),
      aFinding({ checkId: 'c', status: 'pass', resource: nodeClass('one') }),
      aFinding({ checkId: 'd', status: 'not-applicable', resource: nodeClass('one') }),
      aFinding({
        checkId: 'e',
        status: 'suppressed',
        resource: nodeClass('one'),
        suppression: { reason: 'accepted', source: 'config', status: 'fail' },
      }),
    ]);
    expect(
      resultsOf(log)
        .map((result) => result.ruleId)
        .sort()
    ).toEqual(['a', 'b', 'e']);
  });

  it('keeps notices out of results (code scanning would open an alert) and lists them in the run as informational results', () => {
    // Prepare
    const notice = aFinding({
      checkId: 'karpenter-version-supported',
      status: 'notice',
      severity: 'info',
      resource: { cluster: 'prod', kind: 'Cluster', name: 'prod' },
      message: 'Expected, not an error: validation dry-runs succeed as HTTP 412 DryRunOperation.',
    });

    // Act
    const log = sarifOf([notice, arnFinding]);

    // Assess
    expect(sarifErrors(log)).toEqual([]);
    expect(resultsOf(log).map((result) => result.ruleId)).toEqual(['instance-profile-is-name']);
    const [listed, ...others] = noticesOf(log);
    expect(others).toEqual([]);
    // SARIF 2.1.0 `result.level`: a kind other than `fail` requires level `none`.
    expect(listed).toMatchObject({
      ruleId: 'karpenter-version-supported',
      kind: 'informational',
      level: 'none',
      partialFingerprints: { [FINDING_FINGERPRINT]: notice.id },
      properties: { status: 'notice', severity: 'info' },
    });
    expect(listed?.message.text).toContain('HTTP 412 DryRunOperation');
    expect(uriOf(listed)).toBe('clusters/prod/cluster.yaml');
  });

  it('adds no notices property to a run without notices', () => {
    expect(sarifOf([arnFinding]).runs[0]?.properties).not.toHaveProperty('notices');
  });

  it.each<[Severity, string]>([
    ['critical', 'error'],
    ['high', 'error'],
    ['medium', 'warning'],
    ['low', 'note'],
    ['info', 'note'],
  ])('maps severity %s to level %s', (severity, level) => {
    const [result] = resultsOf(sarifOf([aFinding({ checkId: 'x', severity })]));
    expect(result?.level).toBe(level);
  });

  it('carries the finding id as a partial fingerprint for deduplication', () => {
    const [result] = resultsOf(sarifOf([arnFinding]));
    expect(result?.partialFingerprints).toEqual({ [FINDING_FINGERPRINT]: arnFinding.id });
  });

  it('states how each result compares with a baseline, when the report has one', () => {
    // Prepare
    const report = {
      ...aReport([]),
      findings: [
        { ...aFinding({ checkId: 'a' }), change: 'new' as const },
        { ...aFinding({ checkId: 'b' }), change: 'changed' as const },
        { ...aFinding({ checkId: 'c' }), change: 'unchanged' as const },
        aFinding({ checkId: 'd' }),
      ],
    };

    // Act
    const log = JSON.parse(
      formatSarif(report, { checks: CHECKS, sources, cwd, toolVersion: '0.1.0' })
    ) as Log;

    // Assess
    expect(resultsOf(log).map((result) => [result.ruleId, result.baselineState])).toEqual([
      ['a', 'new'],
      ['b', 'updated'],
      ['c', 'unchanged'],
      ['d', undefined],
    ]);
    expect(sarifErrors(log)).toEqual([]);
  });

  it('indexes each result to its rule', () => {
    const [result] = resultsOf(sarifOf([arnFinding]));
    const rules = sarifOf([]).runs[0]?.tool.driver.rules ?? [];
    expect(rules[result?.ruleIndex ?? -1]?.id).toBe('instance-profile-is-name');
  });

  it('reports unreadable inputs as failed-execution notifications', () => {
    const log = sarifOf([], { inputErrors: [{ source: 'x.yaml:3', message: 'bad YAML' }] });
    const [invocation] = log.runs[0]?.invocations ?? [];
    expect(invocation?.executionSuccessful).toBe(false);
    expect(invocation?.toolExecutionNotifications?.[0]?.message.text).toBe('x.yaml:3: bad YAML');
  });
});

describe('formatSarif rules', () => {
  const rules = sarifOf([]).runs[0]?.tool.driver.rules ?? [];

  it('lists every registered check as a rule with its title and severity', () => {
    expect(rules.map((rule) => rule.id)).toEqual(CHECKS.map((check) => check.id));
    for (const [index, check] of CHECKS.entries()) {
      expect(rules[index]?.shortDescription?.text).toBe(check.title);
      expect(rules[index]?.properties?.severity).toBe(check.severity);
    }
  });

  it('gives every rule help in text and markdown: what it checks and how to fix it', () => {
    for (const [index, check] of CHECKS.entries()) {
      const help = rules[index]?.help;
      expect(help?.text).toContain(check.title);
      expect(help?.text).toContain(check.remediation);
      expect(help?.markdown).toContain(`\`${check.id}\``);
      expect(help?.markdown).toMatch(/\*\*How to fix:\*\* \S/);
    }
  });

  it("explains in every rule's help why a violation matters, with the check's rationale", () => {
    for (const [index, check] of CHECKS.entries()) {
      const help = rules[index]?.help;
      expect(help?.text, check.id).toContain(`\n\nWhy it matters: ${check.rationale}\n\n`);
      const section = /^\*\*Why it matters:\*\* (.+)$/m.exec(help?.markdown ?? '')?.[1] ?? '';
      // Markdown escapes are undone before comparing with the plain rationale.
      expect(section.replace(/\\(.)/g, '$1'), check.id).toBe(check.rationale);
      expect(check.rationale.trim(), check.id).not.toBe('');
      expect(rules[index]?.fullDescription?.text, check.id).toBe(
        `${check.title}. ${check.rationale}`
      );
    }
  });

  it('escapes the rationale as Markdown, like the other help text', () => {
    const check: CheckMeta = {
      ...(CHECKS[0] as CheckMeta),
      rationale: 'Denied ec2:Describe* calls leave <name> unresolved.',
    };
    const [rule] = sarifOf([], { checks: [check] }).runs[0]?.tool.driver.rules ?? [];
    expect(rule?.help?.markdown).toContain(
      '**Why it matters:** Denied ec2:Describe\\* calls leave \\<name\\> unresolved.'
    );
    expect(rule?.help?.text).toContain(
      'Why it matters: Denied ec2:Describe* calls leave <name> unresolved.'
    );
  });

  it('gives every rule a numeric security-severity in [0, 10] that ranks like its severity', () => {
    const scores = new Map<Severity, number>();
    for (const [index, check] of CHECKS.entries()) {
      const score = Number(rules[index]?.properties?.['security-severity']);
      expect(score, check.id).toBeGreaterThanOrEqual(0);
      expect(score, check.id).toBeLessThanOrEqual(10);
      scores.set(check.severity, score);
      expect(rules[index]?.properties?.tags).toContain('karpenter');
    }
    expect(scores.get('critical')).toBe(9.5);
    expect(scores.get('high')).toBe(7.5);
    expect(scores.get('medium')).toBe(5.5);
  });

  it('links #NNNN references to the upstream issue and leaves out references that are not links', () => {
    // Prepare
    const check: CheckMeta = {
      ...(CHECKS[0] as CheckMeta),
      id: 'links',
      title: 'Names a <name> and cluster/*',
      references: ['#8072', 'internal notes §1.2', 'https://karpenter.sh/docs/'],
    };

    // Act
    const [rule] = sarifOf([], { checks: [check] }).runs[0]?.tool.driver.rules ?? [];

    // Assess
    expect(rule?.help?.markdown).toContain(
      '[aws/karpenter-provider-aws#8072](https://github.com/aws/karpenter-provider-aws/issues/8072)'
    );
    expect(rule?.help?.markdown).toContain('<https://karpenter.sh/docs/>');
    expect(rule?.help?.markdown).toContain('Names a \\<name\\> and cluster/\\*');
    expect(JSON.stringify(rule)).not.toContain('§');
    expect(rule?.properties?.references).toEqual([
      'https://github.com/aws/karpenter-provider-aws/issues/8072',
      'https://karpenter.sh/docs/',
    ]);
  });

  it('names the check page of docs/checks/ and links it on the repository as helpUri', () => {
    for (const [index, check] of CHECKS.entries()) {
      expect(rules[index]?.help?.text, check.id).toContain(`docs/checks/${check.id}.md`);
      expect(rules[index]?.help?.markdown, check.id).toContain(`\`docs/checks/${check.id}.md\``);
      expect(rules[index]?.helpUri, check.id).toBe(
        `https://github.com/nodeclass-scanner/nodeclass-scanner/blob/main/docs/checks/${check.id}.md`
      );
    }
  });

  it.each([
    ['git+https://github.com/o/r.git', 'https://github.com/o/r'],
    [{ type: 'git', url: 'https://gitlab.example/o/r' }, 'https://gitlab.example/o/r'],
    ['github:o/r', undefined],
    [undefined, undefined],
  ])('reads the repository %o as %s', (repository, url) => {
    expect(repositoryWebUrl(repository)).toBe(url);
  });

  it("adds the written How to fix of the check's page to the Markdown help, links as paths", () => {
    const help = (id: string) => rules.find((rule) => rule.id === id)?.help?.markdown ?? '';
    expect(help('instance-profile-is-name')).toContain(
      'instanceProfile: KarpenterNodeInstanceProfile'
    );
    expect(help('controller-role-found')).toContain('aws eks create-pod-identity-association');
    // A relative link of the page would not resolve in a code-scanning alert.
    expect(help('nodeclass-ready')).toContain('`docs/checks/status-agrees-with-scan.md`');
    for (const rule of rules) {
      expect(rule.help?.markdown, rule.id).not.toMatch(/\]\((?!https:)/);
      expect(rule.help?.markdown, rule.id).toMatch(/\n```/);
    }
  });

  it('never shows a reference that is not a public link, for any registered check', () => {
    const text = JSON.stringify(rules);
    for (const reference of CHECKS.flatMap((check) => check.references)) {
      if (referenceUrl(reference) === undefined) expect(text).not.toContain(reference);
    }
    expect(text).not.toContain('§');
  });
});

describe('formatSarif locations', () => {
  it('points at the line and column of the offending field, relative to the working directory', () => {
    const [result] = resultsOf(sarifOf([arnFinding]));
    const physical = result?.locations?.[0]?.physicalLocation;
    expect(physical?.artifactLocation?.uri).toBe('manifests/nodeclasses.yaml');
    expect(physical?.region).toEqual({ startLine: 8, startColumn: 3 });
  });

  it('points at nested paths such as spec.amiSelectorTerms[0].tags.team', () => {
    const finding = aFinding({
      checkId: 'ami-owner-explicit',
      resource: nodeClass('tagged'),
      location: { path: 'spec.amiSelectorTerms[0].tags.team' },
    });
    const [result] = resultsOf(sarifOf([finding]));
    expect(result?.locations?.[0]?.physicalLocation?.region).toEqual({
      startLine: 23,
      startColumn: 9,
    });
  });

  it('falls back to the nearest parent path that exists in the file', () => {
    const finding = aFinding({
      checkId: 'imds-v2-required',
      resource: nodeClass('tagged'),
      location: { path: 'spec.metadataOptions.httpTokens' },
    });
    const [result] = resultsOf(sarifOf([finding]));
    // spec.metadataOptions is absent (the CRD default applies): the finding lands on `spec:`.
    expect(result?.locations?.[0]?.physicalLocation?.region?.startLine).toBe(20);
  });

  it('falls back to the first line of the object when the finding has no path', () => {
    const finding = aFinding({ checkId: 'x', resource: nodeClass('tagged') });
    const [result] = resultsOf(sarifOf([finding]));
    expect(result?.locations?.[0]?.physicalLocation?.region?.startLine).toBe(16);
  });

  it('names standard input `stdin`, at the offending line, with the object as logical location', () => {
    // Prepare
    const stdinSources = sourceIndexOf(inventoryFrom('<stdin>', TWO_NODECLASSES));

    // Act
    const [result] = resultsOf(sarifOf([arnFinding], { sources: stdinSources }));

    // Assess
    expect(uriOf(result)).toBe('stdin');
    expect(result?.locations?.[0]?.physicalLocation?.region).toEqual({
      startLine: 8,
      startColumn: 3,
    });
    expect(result?.locations?.[0]?.logicalLocations?.[0]?.fullyQualifiedName).toBe(
      'EC2NodeClass/arn-profile'
    );
  });

  it('names standard input after --stdin-name, as a repository-relative path', () => {
    const stdinSources = sourceIndexOf(inventoryFrom('<stdin>', TWO_NODECLASSES));
    const log = sarifOf([arnFinding], {
      sources: stdinSources,
      stdinName: 'k8s/prod nodeclasses.yaml',
    });
    expect(uriOf(resultsOf(log)[0])).toBe('k8s/prod%20nodeclasses.yaml');
    expectUploadable(log);
  });

  it('gives objects without a manifest (live, world file) a stable pseudo-path per kind', () => {
    // Prepare: no sources at all, as for objects read from a cluster.
    const findings = [
      aFinding({ checkId: 'a', resource: nodeClass('default', 'prod') }),
      aFinding({ checkId: 'b', resource: { cluster: 'prod', kind: 'NodePool', name: 'general' } }),
      aFinding({
        checkId: 'scanner-can-read-cluster',
        resource: { cluster: 'prod', kind: 'Cluster', name: 'prod' },
      }),
      aFinding({ checkId: 'c', resource: { cluster: '', kind: 'Cluster', name: '' } }),
    ];

    // Act
    const log = sarifOf(findings, { sources: new Map() });

    // Assess
    expectUploadable(log);
    expect(
      Object.fromEntries(resultsOf(log).map((result) => [result.ruleId, uriOf(result)]))
    ).toEqual({
      a: 'clusters/prod/ec2nodeclasses/default.yaml',
      b: 'clusters/prod/nodepools/general.yaml',
      'scanner-can-read-cluster': 'clusters/prod/cluster.yaml',
      c: 'clusters/cluster.yaml',
    });
  });

  it('encodes names in pseudo-paths so they stay one path segment', () => {
    expect(pseudoPath({ cluster: 'a/b', kind: 'EC2NodeClass', name: 'x y' })).toBe(
      'clusters/a%2Fb/ec2nodeclasses/x%20y.yaml'
    );
  });
});

describe('formatSarif suppressions and follow-on findings', () => {
  it('reports suppressed findings with the reason: inSource for annotations, external for config', () => {
    // Prepare
    const annotated = aFinding({
      checkId: 'node-role-policies',
      status: 'suppressed',
      resource: nodeClass('tagged'),
      suppression: { reason: 'CNI has its own role', source: 'annotation', status: 'fail' },
    });
    const configured = aFinding({
      checkId: 'ami-selector-pinned',
      status: 'suppressed',
      resource: nodeClass('arn-profile'),
      suppression: {
        reason: 'legacy, replaced in Q3',
        source: 'config',
        status: 'error',
        expires: '2027-01-01',
      },
    });

    // Act
    const results = resultsOf(sarifOf([annotated, configured]));

    // Assess
    const byRule = new Map(results.map((result) => [result.ruleId, result]));
    expect(byRule.get('node-role-policies')?.suppressions).toEqual([
      {
        kind: 'inSource',
        status: 'accepted',
        justification: 'CNI has its own role',
        properties: { status: 'fail' },
      },
    ]);
    expect(byRule.get('ami-selector-pinned')?.suppressions).toEqual([
      {
        kind: 'external',
        status: 'accepted',
        justification: 'legacy, replaced in Q3',
        properties: { status: 'error', expires: '2027-01-01' },
      },
    ]);
    expect(byRule.get('ami-selector-pinned')?.message.text).toContain(
      'Suppressed (config): legacy, replaced in Q3'
    );
  });

  it('gives open findings no suppressions', () => {
    expect(resultsOf(sarifOf([arnFinding]))[0]?.suppressions).toBeUndefined();
  });

  it('folds a follow-on finding into its root result instead of raising its own alert', () => {
    // Prepare
    const root = aFinding({ checkId: 'ami-alias-resolves', resource: nodeClass('tagged') });
    const followOn = aFinding({
      checkId: 'controller-can-launch',
      status: 'error',
      severity: 'critical',
      resource: nodeClass('tagged'),
      causedBy: root.id,
    });

    // Act
    const results = resultsOf(sarifOf([root, followOn]));

    // Assess
    expect(results.map((result) => result.ruleId)).toEqual(['ami-alias-resolves']);
    expect(results[0]?.message.text).toContain('could not check: controller-can-launch');
    expect(results[0]?.properties?.followOns).toEqual([
      { id: followOn.id, checkId: 'controller-can-launch' },
    ]);
  });

  it('reports a follow-on finding on its own when its root is not in the report', () => {
    const followOn = aFinding({
      checkId: 'controller-can-launch',
      status: 'error',
      resource: nodeClass('tagged'),
      causedBy: 'not-reported',
    });
    expect(resultsOf(sarifOf([followOn])).map((result) => result.ruleId)).toEqual([
      'controller-can-launch',
    ]);
  });
});

describe('scan --format sarif (the real CLI)', () => {
  const STDIN_ONLY = ['--only', 'instance-profile-is-name,ami-owner-explicit'];

  it('locates findings on standard input as `stdin`, or the --stdin-name given', async () => {
    // Act
    const plain = await runCliCaptured(['scan', '-', ...STDIN_ONLY, '--format', 'sarif'], {
      stdin: TWO_NODECLASSES,
      cwd,
    });
    const named = await runCliCaptured(
      ['scan', '-', ...STDIN_ONLY, '--format', 'sarif', '--stdin-name', 'k8s/nodeclasses.yaml'],
      { stdin: TWO_NODECLASSES, cwd }
    );

    // Assess
    const plainLog = JSON.parse(plain.stdout) as Log;
    const namedLog = JSON.parse(named.stdout) as Log;
    expect(resultsOf(plainLog).length).toBeGreaterThan(0);
    expectUploadable(plainLog);
    expectUploadable(namedLog);
    expect(new Set(resultsOf(plainLog).map(uriOf))).toEqual(new Set(['stdin']));
    expect(new Set(resultsOf(namedLog).map(uriOf))).toEqual(new Set(['k8s/nodeclasses.yaml']));
    const arn = resultsOf(namedLog).find((result) => result.ruleId === 'instance-profile-is-name');
    expect(arn?.locations?.[0]?.physicalLocation?.region?.startLine).toBe(8);
  });

  it('reports an object annotated to ignore a check as an inSource suppression', async () => {
    // Prepare
    const annotated = TWO_NODECLASSES.replace(
      '  name: arn-profile\n',
      '  name: arn-profile\n  annotations:\n    ignore-check.nodeclass-scanner/instance-profile-is-name: "migrating in Q3"\n'
    );

    // Act
    const run = await runCliCaptured(
      ['scan', '-', '--only', 'instance-profile-is-name', '--format', 'sarif'],
      { stdin: annotated, cwd }
    );

    // Assess
    const log = JSON.parse(run.stdout) as Log;
    expectUploadable(log);
    expect(run.code).toBe(0);
    const [result] = resultsOf(log);
    expect(result?.suppressions?.[0]).toMatchObject({
      kind: 'inSource',
      justification: 'migrating in Q3',
    });
    expect(result?.locations?.[0]?.physicalLocation?.region?.startLine).toBe(10);
  });

  it('refuses an empty --stdin-name', async () => {
    const run = await runCliCaptured(['scan', '-', '--stdin-name', ' ', '--format', 'sarif'], {
      stdin: TWO_NODECLASSES,
    });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
  });

  it('locates world-file findings at stable pseudo-paths, cluster-level ones included', async () => {
    // Act
    const run = await runCliCaptured(
      ['scan', '--world', WORLD, '--format', 'sarif', '--fail-on', 'none'],
      { now: new Date('2026-11-22T12:00:00Z'), cwd }
    );

    // Assess
    const log = JSON.parse(run.stdout) as Log;
    expectUploadable(log);
    // The world's one cluster-level finding is the 412 dry-run notice, kept out of `results`.
    const uris = [...resultsOf(log), ...noticesOf(log)].map(uriOf);
    expect(uris).toContain('clusters/prod-use1/ec2nodeclasses/copied.yaml');
    expect(noticesOf(log).map(uriOf)).toContain('clusters/prod-use1/cluster.yaml');
    for (const uri of uris) {
      expect(uri).toMatch(
        /^clusters\/[a-z0-9-]+\/((ec2nodeclasses|nodepools)\/[a-z0-9-]+\.yaml|cluster\.yaml)$/
      );
    }
  });
});

describe('artifactUri', () => {
  it('is relative with forward slashes and percent-encoding below the working directory', () => {
    expect(artifactUri('a dir/x#1.yaml', cwd)).toBe('a%20dir/x%231.yaml');
    expect(artifactUri(join(cwd, 'k8s', 'x.yaml'), cwd)).toBe('k8s/x.yaml');
  });

  it('is an absolute file URI outside the working directory', () => {
    expect(artifactUri('/elsewhere/x.yaml', cwd)).toBe('file:///elsewhere/x.yaml');
    expect(artifactUri('../x.yaml', cwd)).toBe('file:///x.yaml');
  });
});
