// `nodeclass-scan checks ID`: a check's documentation page in the terminal.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { EXIT_OK, EXIT_USAGE } from '../../lambda/cli/main.js';
import { CHECKS } from '../../lambda/core/checks/index.js';
import { runCliCaptured } from './support/run-cli.js';

const REPO = join(import.meta.dirname, '..', '..');
const BIN = join(REPO, 'bin', 'nodeclass-scan.js');

describe('nodeclass-scan checks ID', () => {
  it('prints the page: what, why, how to fix and links, wrapped to the terminal, no Markdown', async () => {
    // Act
    const { stdout, stderr } = await promisify(execFile)(
      'node',
      [BIN, 'checks', 'instance-profile-is-name'],
      { env: { ...process.env, COLUMNS: '80' } }
    );
    // Assess
    expect(stderr).toBe('');
    const lines = stdout.split('\n');
    expect(lines.slice(0, 2)).toEqual([
      'instance-profile-is-name: Instance profile is given as a name, not an ARN or',
      '  path',
    ]);
    expect(lines).toEqual(
      expect.arrayContaining([
        '  Default severity: critical',
        'WHAT IT CHECKS',
        'WHY LAUNCHES FAIL',
        'HOW TO FIX',
        '      instanceProfile: KarpenterNodeInstanceProfile',
        'REFERENCES',
        '  - https://github.com/aws/karpenter-provider-aws/issues/8072',
        '  - instance-profile-exists (nodeclass-scan checks instance-profile-exists)',
      ])
    );
    expect(stdout).not.toMatch(/^#|\]\(|<!--|\*\*|`/m);
    // Prose wraps; only the code block and single long tokens may run past the width.
    const prose = lines.filter((line) => !line.startsWith('    '));
    expect(prose.filter((line) => [...line].length > 80 && /\S\s+\S/.test(line.trim()))).toEqual(
      []
    );
  });

  it('renders every check page with its sections', async () => {
    for (const check of CHECKS) {
      const run = await runCliCaptured(['checks', check.id]);
      expect(run.code, check.id).toBe(EXIT_OK);
      expect(run.stdout, check.id).toMatch(new RegExp(`^${check.id}: `));
      expect(run.stdout, check.id).toMatch(/^WHAT IT CHECKS$/m);
      expect(run.stdout, check.id).toMatch(/^HOW TO FIX$/m);
      expect(run.stdout, check.id).toMatch(/^REFERENCES$/m);
    }
  });

  it('gives the catalog entry and the Markdown page with --format json', async () => {
    const run = await runCliCaptured(['checks', 'imds-v2-required', '--format', 'JSON']);
    const entry = JSON.parse(run.stdout) as {
      id: string;
      page: { path: string; markdown: string };
    };
    expect(entry.id).toBe('imds-v2-required');
    expect(entry.page).toEqual({
      path: 'docs/checks/imds-v2-required.md',
      markdown: readFileSync(join(REPO, 'docs/checks/imds-v2-required.md'), 'utf8'),
    });
  });

  it('suggests the check meant for an unknown id: the closest, or those containing it', async () => {
    const typo = await runCliCaptured(['checks', 'imds-v2-requried']);
    const part = await runCliCaptured(['checks', 'hop-limit']);
    const none = await runCliCaptured(['checks', 'zzzz']);
    expect(typo).toEqual({
      code: EXIT_USAGE,
      stdout: '',
      stderr:
        'nodeclass-scan: checks: unknown check "imds-v2-requried" (did you mean "imds-v2-required"?); `nodeclass-scan checks` lists them\n',
    });
    expect(part.stderr).toContain('(did you mean "imds-hop-limit"?)');
    expect(none.stderr).toBe(
      'nodeclass-scan: checks: unknown check "zzzz"; `nodeclass-scan checks` lists them\n'
    );
  });
});
