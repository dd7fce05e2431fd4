// README's "Configuration" table, rendered from the settings table (lambda/shared/settings.ts).
// `npx tsx scripts/readme-config-table.ts` rewrites it in README.md; a test keeps the two equal.
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SETTING_NAMES, SETTINGS, type SettingSpec } from '../lambda/shared/settings.js';

const README = join(fileURLToPath(new URL('../', import.meta.url)), 'README.md');
const HEADER = [
  '| Key | Construct prop | Lambda variable | Default | Meaning |',
  '| --- | --- | --- | --- | --- |',
];

function defaultCell(spec: SettingSpec): string {
  if (spec.defaultText !== undefined) return spec.defaultText;
  if (!('default' in spec) || spec.default === undefined) return 'unset';
  const value = spec.default;
  return `\`${typeof value === 'string' ? value : JSON.stringify(value)}\``;
}

function rangeText(spec: SettingSpec): string {
  if (spec.type === 'integer' && spec.allowed === undefined) {
    return ` Range: ${spec.min}–${spec.max}.`;
  }
  if (spec.type === 'choice') {
    return ` One of ${spec.choices.map((choice) => `\`${choice}\``).join(', ')}.`;
  }
  return '';
}

function propCell(spec: SettingSpec): string {
  if (spec.prop === undefined) return '—';
  return spec.unit === undefined ? `\`${spec.prop}\`` : `\`${spec.prop}\` (Duration)`;
}

/** The table's Markdown lines, header included. */
export function configurationTable(): string[] {
  return [
    ...HEADER,
    ...SETTING_NAMES.map((name) => {
      const spec: SettingSpec = SETTINGS[name];
      const env = spec.env === undefined ? '—' : `\`${spec.env}\``;
      const meaning = `${spec.doc}${rangeText(spec)}`.replaceAll('|', '\\|');
      return `| \`${name}\` | ${propCell(spec)} | ${env} | ${defaultCell(spec)} | ${meaning} |`;
    }),
  ];
}

/** The table in README's `## Configuration` section: the first run of lines starting with `|`. */
export function readmeConfigurationTable(readme: string): { start: number; lines: string[] } {
  const lines = readme.split('\n');
  const section = lines.indexOf('## Configuration');
  const start = lines.findIndex((line, index) => index > section && line.startsWith('| '));
  if (section < 0 || start < 0) return { start: -1, lines: [] };
  let end = start;
  while (lines[end]?.startsWith('|')) end++;
  return { start, lines: lines.slice(start, end) };
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const readme = readFileSync(README, 'utf8');
  const { start, lines } = readmeConfigurationTable(readme);
  if (start < 0) throw new Error('README.md has no table under "## Configuration"');
  const all = readme.split('\n');
  all.splice(start, lines.length, ...configurationTable());
  writeFileSync(README, all.join('\n'));
}
