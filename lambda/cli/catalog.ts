// The README's check catalog, the docs/checks/ pages' headers and the config file's JSON schema,
// generated from the registry (`npm run docs`) so they cannot drift.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { CheckMeta } from '../core/check.js';
import { CHECKS } from '../core/checks/index.js';
import { checkDocPath, checkDocsProblems, publicUrlOf, updateCheckDocs } from './check-docs.js';
import { CONFIG_SCHEMA_PATH, updateConfigJsonSchema } from './config-schema.js';

export const CATALOG_START = '<!-- catalog:start -->';
export const CATALOG_END = '<!-- catalog:end -->';
export const README_PATH = join(import.meta.dirname, '..', '..', 'README.md');

function cell(text: string): string {
  return text
    .replace(/\r?\n/g, ' ')
    .replace(/\\/g, '\\\\')
    .replace(/\|/g, '\\|')
    .replace(/</g, '&lt;');
}

/** `#8072` links to aws/karpenter-provider-aws, URLs and docs pages become links. */
function reference(text: string): string {
  const url = publicUrlOf(text);
  if (url !== undefined) return text.startsWith('#') ? `[${text}](${url})` : `<${url}>`;
  if (text.startsWith('docs/')) return `[${cell(text)}](${text})`;
  return cell(text);
}

/** The catalog as a Markdown table, in registry order. */
export function renderCatalogMarkdown(checks: readonly CheckMeta[]): string {
  const rows = checks.map((check) =>
    [
      `[\`${check.id}\`](${checkDocPath(check.id)})`,
      check.severity,
      check.inputs.join(', '),
      cell(check.title),
      cell(check.remediation),
      check.references.map(reference).join(', '),
    ].join(' | ')
  );
  return [
    '| ID | Severity | Inputs | What it checks | Remediation | References |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows.map((row) => `| ${row} |`),
  ].join('\n');
}

/** The README with the text between the catalog markers replaced by the rendered table. */
export function withCatalog(readme: string, checks: readonly CheckMeta[]): string {
  const start = readme.indexOf(CATALOG_START);
  const end = readme.indexOf(CATALOG_END);
  if (start < 0 || end < start) {
    throw new Error(`README.md needs the markers ${CATALOG_START} and ${CATALOG_END}, in order`);
  }
  const before = readme.slice(0, start + CATALOG_START.length);
  const after = readme.slice(end);
  return `${before}\n${renderCatalogMarkdown(checks)}\n${after}`;
}

/** Rewrites README.md's catalog; returns true when it changed. */
export async function updateReadmeCatalog(path = README_PATH): Promise<boolean> {
  const readme = await readFile(path, 'utf8');
  const updated = withCatalog(readme, CHECKS);
  if (updated === readme) return false;
  await writeFile(path, updated);
  return true;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const changed = await updateReadmeCatalog();
  process.stdout.write(
    changed ? `README.md: catalog updated (${CHECKS.length} checks)\n` : 'README.md: up to date\n'
  );
  for (const page of await updateCheckDocs(CHECKS)) process.stdout.write(`${page}: updated\n`);
  if (await updateConfigJsonSchema()) process.stdout.write(`${CONFIG_SCHEMA_PATH}: updated\n`);
  // What the generator cannot fix: pages of no check, sections still to write.
  const problems = await checkDocsProblems(CHECKS);
  for (const problem of problems) process.stderr.write(`${problem}\n`);
  if (problems.length > 0) process.exitCode = 1;
}
