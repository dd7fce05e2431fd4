// The README's "Configuration" table lists exactly the context keys the app's schema reads.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_KEYS } from '../../infra/config.js';
import { REPO_ROOT } from './support.js';

/** The keys in the first column of the table under `## Configuration` (a cell may name several). */
function documentedKeys(readme: string): string[] {
  const section = readme.split(/^## /m).find((part) => part.startsWith('Configuration\n')) ?? '';
  const rows = section.split('\n').filter((line) => line.startsWith('| `'));
  return rows.flatMap((row) => {
    const cell = row.split('|')[1] ?? '';
    return [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1] ?? '');
  });
}

describe('README configuration table', () => {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');

  it('documents every context key once, and no key the app does not read', () => {
    const documented = documentedKeys(readme);
    expect(documented.length).toBeGreaterThan(20);
    expect(new Set(documented).size).toBe(documented.length);
    expect([...documented].sort()).toEqual([...CONFIG_KEYS].sort());
  });

  it('gives every key a default and a meaning', () => {
    const section = readme.split(/^## /m).find((part) => part.startsWith('Configuration\n')) ?? '';
    for (const row of section.split('\n').filter((line) => line.startsWith('| `'))) {
      const [, defaultCell = '', meaning = ''] = row.split(' | ');
      expect(defaultCell.trim(), row).not.toBe('');
      expect(meaning.replace(/\|$/, '').trim().length, row).toBeGreaterThan(10);
    }
  });
});
