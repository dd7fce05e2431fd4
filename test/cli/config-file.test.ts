import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_CONFIG_FILE,
  expiredRuleWarnings,
  loadCliConfig,
  parseCliConfig,
} from '../../lambda/cli/config-file.js';
import { ConfigError } from '../../lambda/shared/errors.js';
import { useTempTrees } from './support/run-cli.js';

const tree = useTempTrees();

const RULE = `ignore:
  - check: node-role-policies
    resource: "*/EC2NodeClass/legacy-*"
    reason: the VPC CNI has its own role (IRSA)
    expires: 2027-01-31
`;

function usageError(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('parseCliConfig', () => {
  it('reads ignore rules; an unquoted YAML date stays the date as written', () => {
    expect(parseCliConfig(RULE, 'scan.yaml')).toEqual({
      file: 'scan.yaml',
      ignore: [
        {
          check: 'node-role-policies',
          resource: '*/EC2NodeClass/legacy-*',
          reason: 'the VPC CNI has its own role (IRSA)',
          expires: '2027-01-31',
        },
      ],
    });
  });

  it('reads an empty or comment-only file as no rules', () => {
    expect(parseCliConfig('# nothing yet\n', 'scan.yaml').ignore).toEqual([]);
    expect(parseCliConfig('ignore: []\n', 'scan.yaml').ignore).toEqual([]);
    expect(parseCliConfig('ignore:\n#  - check: "*"\n', 'scan.yaml').ignore).toEqual([]);
  });

  it('rejects unknown keys, naming the file and the key', () => {
    expect(usageError(() => parseCliConfig('ignores: []\n', 'scan.yaml'))).toBe(
      'scan.yaml: unknown key "ignores" (did you mean "ignore"?)'
    );
    expect(usageError(() => parseCliConfig('fromat: json\n', 'scan.yaml'))).toBe(
      'scan.yaml: unknown key "fromat" (did you mean "format"?)'
    );
    expect(usageError(() => parseCliConfig('colour: true\n', 'scan.yaml'))).toMatch(
      /^scan\.yaml: unknown key "colour" \(allowed: ignore, annotationSuppression, cluster, region, .*\)$/
    );
    expect(usageError(() => parseCliConfig(`${RULE}    owner: me\n`, 'scan.yaml'))).toBe(
      'scan.yaml: ignore[0]: unknown key "owner" (allowed: check, resource, reason, expires)'
    );
  });

  it('names the rule whose check id is unknown', () => {
    const text = RULE.replace('node-role-policies', 'node-role-policy');
    expect(usageError(() => parseCliConfig(text, 'scan.yaml'))).toBe(
      'scan.yaml: ignore[0].check: unknown check id "node-role-policy" (did you mean "node-role-policies"?) (see `nodeclass-scan checks`)'
    );
  });

  it('requires a reason and a readable expiry date', () => {
    const text = 'ignore:\n  - check: "*"\n    resource: "*/*/*"\n    expires: next week\n';
    const message = usageError(() => parseCliConfig(text, 'scan.yaml'));
    expect(message).toContain('ignore[0].reason: required: the reason the finding is accepted');
    expect(message).toContain('ignore[0].expires: "next week" is not a date');
  });

  it('reads annotationSuppression: allow, deny, or a list of check ids; absent when not set', () => {
    expect(parseCliConfig('ignore: []\n', 'scan.yaml')).not.toHaveProperty('annotationSuppression');
    expect(parseCliConfig('annotationSuppression: deny\n', 'scan.yaml').annotationSuppression).toBe(
      'deny'
    );
    expect(
      parseCliConfig('annotationSuppression:\n  - imds-*\n  - node-role-policies\n', 'scan.yaml')
        .annotationSuppression
    ).toEqual(['imds-*', 'node-role-policies']);
    expect(usageError(() => parseCliConfig('annotationSuppression: no\n', 'scan.yaml'))).toBe(
      'scan.yaml: annotationSuppression[0]: unknown check id "no" (see `nodeclass-scan checks`)'
    );
    expect(usageError(() => parseCliConfig('annotationSuppression: true\n', 'scan.yaml'))).toBe(
      'scan.yaml: annotationSuppression: expected allow, deny or a list of check ids (see `nodeclass-scan checks`)'
    );
  });

  it('reports YAML syntax errors with the file name', () => {
    expect(usageError(() => parseCliConfig('ignore: [\n', 'scan.yaml'))).toMatch(
      /^scan\.yaml: not valid YAML: /
    );
  });
});

describe("the README's example config file", () => {
  it('is a valid config file', () => {
    // Prepare
    const readme = readFileSync(join(import.meta.dirname, '../../README.md'), 'utf8');
    const example = /```yaml\n(ignore:\n[\s\S]*?)```/.exec(readme)?.[1];
    // Act
    const config = parseCliConfig(example ?? '', 'README.md');
    // Assess
    expect(config.ignore).toEqual([
      expect.objectContaining({ check: 'node-role-policies', resource: '*/EC2NodeClass/legacy-*' }),
    ]);
  });
});

describe('loadCliConfig', () => {
  it(`discovers ${DEFAULT_CONFIG_FILE} in the working directory`, async () => {
    const dir = tree({ [DEFAULT_CONFIG_FILE]: RULE });
    const config = await loadCliConfig({ cwd: dir });
    expect(config.file).toBe(DEFAULT_CONFIG_FILE);
    expect(config.ignore).toHaveLength(1);
  });

  it('is empty without a config file', async () => {
    const dir = tree({ 'other.yaml': RULE });
    expect(await loadCliConfig({ cwd: dir })).toEqual({ ignore: [] });
  });

  it('reads --config relative to the working directory, in place of the default file', async () => {
    const dir = tree({ [DEFAULT_CONFIG_FILE]: 'ignores: []\n', 'ci/scan.yaml': RULE });
    const config = await loadCliConfig({ cwd: dir, explicit: 'ci/scan.yaml' });
    expect(config.ignore).toHaveLength(1);
  });

  it('fails when the --config file does not exist', async () => {
    const dir = tree({});
    await expect(loadCliConfig({ cwd: dir, explicit: 'missing.yaml' })).rejects.toThrow(
      new ConfigError('missing.yaml: cannot read (ENOENT)')
    );
  });
});

describe('expiredRuleWarnings', () => {
  it('warns once per rule past its expiry, naming it', () => {
    // Prepare
    const config = parseCliConfig(
      `${RULE}  - check: imds-v2-required\n    resource: "*/*/*"\n    reason: no expiry\n`,
      'scan.yaml'
    );
    // Act
    const before = expiredRuleWarnings(config, new Date('2027-01-31T23:00:00Z'));
    const after = expiredRuleWarnings(config, new Date('2027-02-01T00:00:00Z'));
    // Assess
    expect(before).toEqual([]);
    expect(after).toEqual([
      'nodeclass-scan: warning: scan.yaml: ignore[0] (node-role-policies on */EC2NodeClass/legacy-*) expired 2027-01-31; its findings are reported again\n',
    ]);
  });
});
