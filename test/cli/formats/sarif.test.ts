import { join } from 'node:path';
import type { Log } from 'sarif';
import { describe, expect, it } from 'vitest';
import {
  artifactUri,
  FINDING_FINGERPRINT,
  formatSarif,
} from '../../../lambda/cli/formats/sarif.js';
import { type SourceIndex, sourceIndexOf } from '../../../lambda/cli/formats/sources.js';
import { CHECKS } from '../../../lambda/core/checks/index.js';
import type { Finding, Severity } from '../../../lambda/core/model.js';
import { sarifErrors } from '../support/sarif-schema.js';
import { aFinding, aReport, inventoryFrom, nodeClass, TWO_NODECLASSES } from './fixtures.js';

const cwd = '/repo';
const sources = sourceIndexOf(inventoryFrom('manifests/nodeclasses.yaml', TWO_NODECLASSES));

function sarifOf(
  findings: readonly Finding[],
  options: { sources?: SourceIndex; inputErrors?: { source: string; message: string }[] } = {}
): Log {
  const report = aReport(findings, { inputErrors: options.inputErrors ?? [] });
  return JSON.parse(
    formatSarif(report, {
      checks: CHECKS,
      sources: options.sources ?? sources,
      cwd,
      toolVersion: '0.1.0',
    })
  ) as Log;
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
    ];
    // Act
    const log = sarifOf(findings, { inputErrors: [{ source: 'x.yaml:3', message: 'bad YAML' }] });
    // Assess
    expect(sarifErrors(log)).toEqual([]);
    expect(log.version).toBe('2.1.0');
  });

  it('lists every registered check as a rule with title, remediation and severity', () => {
    const rules = sarifOf([]).runs[0]?.tool.driver.rules ?? [];
    expect(rules.map((rule) => rule.id)).toEqual(CHECKS.map((check) => check.id));
    for (const [index, check] of CHECKS.entries()) {
      expect(rules[index]?.shortDescription?.text).toBe(check.title);
      expect(rules[index]?.help?.text).toBe(check.remediation);
      expect(rules[index]?.properties?.severity).toBe(check.severity);
    }
  });

  it('reports fail and error findings only', () => {
    const log = sarifOf([
      aFinding({ checkId: 'a', status: 'fail', resource: nodeClass('one') }),
      aFinding({ checkId: 'b', status: 'error', resource: nodeClass('one') }),
      aFinding({ checkId: 'c', status: 'pass', resource: nodeClass('one') }),
      aFinding({ checkId: 'd', status: 'not-applicable', resource: nodeClass('one') }),
    ]);
    expect(log.runs[0]?.results?.map((result) => result.ruleId).sort()).toEqual(['a', 'b']);
  });

  it.each<[Severity, string]>([
    ['critical', 'error'],
    ['high', 'error'],
    ['medium', 'warning'],
    ['low', 'note'],
    ['info', 'note'],
  ])('maps severity %s to level %s', (severity, level) => {
    const [result] = sarifOf([aFinding({ checkId: 'x', severity })]).runs[0]?.results ?? [];
    expect(result?.level).toBe(level);
  });

  it('points at the line and column of the offending field, relative to the working directory', () => {
    const [result] = sarifOf([arnFinding]).runs[0]?.results ?? [];
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
    const [result] = sarifOf([finding]).runs[0]?.results ?? [];
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
    const [result] = sarifOf([finding]).runs[0]?.results ?? [];
    // spec.metadataOptions is absent (the CRD default applies): the finding lands on `spec:`.
    expect(result?.locations?.[0]?.physicalLocation?.region?.startLine).toBe(20);
  });

  it('falls back to the first line of the object when the finding has no path', () => {
    const finding = aFinding({ checkId: 'x', resource: nodeClass('tagged') });
    const [result] = sarifOf([finding]).runs[0]?.results ?? [];
    expect(result?.locations?.[0]?.physicalLocation?.region?.startLine).toBe(16);
  });

  it('gives a logical location only when the object has no file (stdin, clusters)', () => {
    const stdinSources = sourceIndexOf(inventoryFrom('<stdin>', TWO_NODECLASSES));
    const [result] = sarifOf([arnFinding], { sources: stdinSources }).runs[0]?.results ?? [];
    expect(result?.locations?.[0]?.physicalLocation).toBeUndefined();
    expect(result?.locations?.[0]?.logicalLocations?.[0]?.fullyQualifiedName).toBe(
      'EC2NodeClass/arn-profile'
    );
  });

  it('carries the finding id as a partial fingerprint for deduplication', () => {
    const [result] = sarifOf([arnFinding]).runs[0]?.results ?? [];
    expect(result?.partialFingerprints).toEqual({ [FINDING_FINGERPRINT]: arnFinding.id });
  });

  it('indexes each result to its rule', () => {
    const [result] = sarifOf([arnFinding]).runs[0]?.results ?? [];
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
