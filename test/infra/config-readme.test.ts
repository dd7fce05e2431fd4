// README's "Configuration" table is the settings table, rendered: every key, its prop, its
// variable, its default and range, and nothing else.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_KEYS } from '../../infra/config.js';
import { SETTING_NAMES } from '../../lambda/shared/settings.js';
import { configurationTable, readmeConfigurationTable } from '../../scripts/readme-config-table.js';
import { REPO_ROOT } from './support.js';

describe('README configuration table', () => {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');

  it('is the settings table, rendered (npx tsx scripts/readme-config-table.ts rewrites it)', () => {
    expect(readmeConfigurationTable(readme).lines).toEqual(configurationTable());
  });

  it('lists each context key the app reads once, in its first column', () => {
    const keys = configurationTable()
      .slice(2)
      .map((row) => /^\| `([^`]+)`/.exec(row)?.[1]);
    expect(keys).toEqual([...SETTING_NAMES]);
    expect([...CONFIG_KEYS].sort()).toEqual([...SETTING_NAMES].sort());
  });

  it('states ranges and defaults as the table has them (one number, one place)', () => {
    const row = (key: string) =>
      configurationTable().find((line) => line.startsWith(`| \`${key}\` |`)) ?? '';
    expect(row('scanConcurrency')).toContain('| `4` |');
    expect(row('scanConcurrency')).toContain('Range: 2–100.');
    expect(row('alertBatchThreshold')).toContain('| `ALERT_BATCH_THRESHOLD` | `5` |');
    expect(row('scheduleMinutes')).toContain('| `schedule` (Duration) | — | `15` |');
    expect(row('clusters')).toContain('none: set it');
  });
});
