// One page per check in docs/checks/: a header generated from the check's metadata (refreshed by
// `npm run docs`) above sections written by hand. A test keeps the two in step.
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, posix, resolve } from 'node:path';
import { type CheckMeta, scopeOf } from '../core/check.js';

/**
 * The directory holding docs/checks: the repository from the sources (lambda/cli/), the installed
 * package from its bundle (dist/lib/…), which ships the pages for SARIF help.
 */
function docsRoot(start: string): string {
  for (let directory = start; ; directory = dirname(directory)) {
    if (existsSync(join(directory, 'docs', 'checks', CHECK_DOCS_INDEX))) return directory;
    if (dirname(directory) === directory) return join(start, '..', '..');
  }
}

const CHECK_DOCS_INDEX = 'README.md';
export const REPOSITORY_ROOT = docsRoot(import.meta.dirname);
export const CHECK_DOCS_DIR = join(REPOSITORY_ROOT, 'docs', 'checks');

export const GENERATED_START =
  '<!-- generated:start (`npm run docs` rewrites this block from the check metadata) -->';
export const GENERATED_END = '<!-- generated:end -->';

/** Hand-written sections every page needs, in order; alternatives share a slot. */
const REQUIRED_SECTIONS: readonly (readonly string[])[] = [
  ['What it checks'],
  ['Why launches fail', 'Why it matters'],
  ['How to fix'],
  ['References'],
];

const KARPENTER_ISSUES = 'https://github.com/aws/karpenter-provider-aws/issues/';

/** The repository-relative path of a check's page. */
export function checkDocPath(id: string): string {
  return `docs/checks/${id}.md`;
}

/** `#NNNN` as its aws/karpenter-provider-aws URL; an `https://` URL as is; otherwise undefined. */
export function publicUrlOf(reference: string): string | undefined {
  const issue = /^#(\d+)$/.exec(reference.trim());
  if (issue) return `${KARPENTER_ISSUES}${issue[1]}`;
  return /^https:\/\/\S+$/.test(reference.trim()) ? reference.trim() : undefined;
}

/** A docs page of this repository (`docs/….md`), which must exist. */
export function isRepositoryDoc(reference: string): boolean {
  return /^docs\/[\w./-]+\.md$/.test(reference) && !reference.includes('..');
}

function inline(text: string): string {
  return text.replace(/\r?\n/g, ' ').replace(/</g, '&lt;');
}

/** The generated header block of a check's page (markers included). */
export function renderGeneratedBlock(check: CheckMeta): string {
  const evidence =
    check.material.length === 0
      ? 'status and severity only'
      : check.material.map((path) => `\`${path}\``).join(', ');
  return [
    GENERATED_START,
    `# \`${check.id}\`: ${inline(check.title)}`,
    '',
    '| | |',
    '| --- | --- |',
    `| ID | \`${check.id}\` |`,
    `| Default severity | ${check.severity} |`,
    `| Reports on | ${scopeOf(check).join(', ')} |`,
    `| Group | ${check.group} |`,
    `| Needs | ${check.inputs.join(', ')} |`,
    `| Evidence that tells findings apart | ${evidence} |`,
    '',
    `**In short:** ${inline(check.rationale)}`,
    '',
    `**Fix in short:** ${inline(check.remediation)}`,
    GENERATED_END,
  ].join('\n');
}

/** A new page: the generated block and the sections to write, each empty but for a hint. */
export function renderSkeleton(check: CheckMeta): string {
  const hints: Record<string, string> = {
    'What it checks': 'the condition, field by field, and when the check does not apply',
    'Why launches fail': 'what Karpenter or EC2 does when the condition does not hold',
    'How to fix': 'concrete YAML or CLI',
    References: 'public URLs (upstream source, Karpenter or AWS docs) or other docs/ pages',
  };
  const sections = REQUIRED_SECTIONS.map((slot) => {
    const heading = slot[0] ?? '';
    return `## ${heading}\n\n<!-- write: ${hints[heading] ?? heading} -->\n`;
  });
  return `${renderGeneratedBlock(check)}\n\n${sections.join('\n')}`;
}

/** The page with its generated block replaced; undefined when the markers are missing. */
function withGeneratedBlock(doc: string, check: CheckMeta): string | undefined {
  const start = doc.indexOf(GENERATED_START);
  const end = doc.indexOf(GENERATED_END);
  if (start < 0 || end < start) return undefined;
  return `${doc.slice(0, start)}${renderGeneratedBlock(check)}${doc.slice(end + GENERATED_END.length)}`;
}

/** Level-2 sections of a page: heading → body (HTML comments removed, trimmed). */
function sectionsOf(doc: string): Map<string, string> {
  const sections = new Map<string, string>();
  const parts = doc.split(/^## +/m).slice(1);
  for (const part of parts) {
    const newline = part.indexOf('\n');
    const heading = (newline < 0 ? part : part.slice(0, newline)).trim();
    const body = newline < 0 ? '' : part.slice(newline + 1);
    sections.set(heading, body.replace(/<!--[\s\S]*?-->/g, '').trim());
  }
  return sections;
}

const guides = new Map<string, string | undefined>();

/**
 * The "How to fix" section of a check's page, for SARIF rule help: relative links become
 * repository paths (they would not resolve where the help is shown). Undefined without a page,
 * as when the scanner runs from a bundle without docs/.
 */
export function howToFixOf(id: string, dir = CHECK_DOCS_DIR): string | undefined {
  const key = join(dir, `${id}.md`);
  if (!guides.has(key)) {
    const section = existsSync(key)
      ? sectionsOf(readFileSync(key, 'utf8')).get('How to fix')
      : undefined;
    guides.set(
      key,
      section?.replace(
        /\[([^\]]+)\]\((?!https:)([^)#\s]+)(#[^)\s]*)?\)/g,
        (_, label: string, target: string) => `${label} (\`${posix.join('docs/checks', target)}\`)`
      )
    );
  }
  return guides.get(key) || undefined;
}

/** Words that point at documents outside this repository that readers cannot open. */
const INTERNAL_REFERENCE =
  /§|karpenter-validations|aws-facts|scanner-anchors|style-anchors|CHECKS\.md|ARCHITECTURE\.md|\/work\//;

/** Targets of Markdown links and autolinks in a text. */
function linkTargetsOf(text: string): string[] {
  const targets: string[] = [];
  for (const match of text.matchAll(/\]\(([^)\s]+)\)|<(https?:\/\/[^>\s]+)>/g)) {
    const target = match[1] ?? match[2];
    if (target !== undefined) targets.push(target);
  }
  return targets;
}

/**
 * What is wrong with one check's page: stale generated block, missing or empty sections, links
 * that are neither public URLs nor files of this repository, internal references.
 */
export function checkDocProblems(check: CheckMeta, doc: string, docFile: string): string[] {
  const problems: string[] = [];
  const where = checkDocPath(check.id);
  const refreshed = withGeneratedBlock(doc, check);
  if (refreshed === undefined) {
    problems.push(`${where}: the generated block markers are missing`);
  } else if (refreshed !== doc) {
    problems.push(`${where}: the generated block is stale (run \`npm run docs\`)`);
  }
  const sections = sectionsOf(doc);
  for (const slot of REQUIRED_SECTIONS) {
    const heading = slot.find((name) => sections.has(name));
    if (heading === undefined) {
      problems.push(`${where}: section "## ${slot.join('" or "## ')}" is missing`);
    } else if ((sections.get(heading) ?? '') === '') {
      problems.push(`${where}: section "## ${heading}" is empty`);
    }
  }
  const internal = INTERNAL_REFERENCE.exec(doc);
  if (internal)
    problems.push(`${where}: cites a document outside the repository ("${internal[0]}")`);
  for (const target of linkTargetsOf(doc)) {
    if (/^https:\/\//.test(target) || target.startsWith('#')) continue;
    if (/^[a-z]+:/i.test(target)) {
      problems.push(`${where}: link ${target} is not an https URL`);
      continue;
    }
    const file = resolve(dirname(docFile), target.replace(/#.*$/, ''));
    if (!existsSync(file)) problems.push(`${where}: link ${target} points at no file`);
  }
  return problems;
}

/** The index page, docs/checks/README.md, fully generated. */
export function renderIndex(checks: readonly CheckMeta[]): string {
  const rows = checks.map(
    (check) =>
      `| [\`${check.id}\`](${check.id}.md) | ${check.severity} | ${scopeOf(check).join(', ')} | ${check.inputs.join(', ')} | ${inline(check.title).replace(/\|/g, '\\|')} |`
  );
  return [
    '# Checks',
    '',
    '<!-- Generated by `npm run docs` from the check metadata; edit the checks, not this file. -->',
    '',
    `${checks.length} checks, in the order the scanner runs them. Each page says what the check looks at, why Karpenter fails to launch nodes (or why it matters) when the condition does not hold, how to fix it, and where to read more.`,
    '',
    '| Check | Default severity | Reports on | Needs | What it checks |',
    '| --- | --- | --- | --- | --- |',
    ...rows,
    '',
  ].join('\n');
}

/** Every problem in docs/checks/: pages missing, stale or incomplete, pages of no check, stale index. */
export async function checkDocsProblems(
  checks: readonly CheckMeta[],
  dir = CHECK_DOCS_DIR
): Promise<string[]> {
  const problems: string[] = [];
  const files = existsSync(dir) ? await readdir(dir) : [];
  const ids = new Set(checks.map((check) => check.id));
  for (const file of files) {
    if (!file.endsWith('.md') || file === CHECK_DOCS_INDEX) continue;
    const id = file.slice(0, -'.md'.length);
    if (!ids.has(id))
      problems.push(`${checkDocPath(id)}: documents no check (remove or rename it)`);
  }
  for (const check of checks) {
    const file = join(dir, `${check.id}.md`);
    if (!existsSync(file)) {
      problems.push(`${checkDocPath(check.id)}: missing (run \`npm run docs\` to create it)`);
      continue;
    }
    problems.push(...checkDocProblems(check, await readFile(file, 'utf8'), file));
  }
  const index = join(dir, CHECK_DOCS_INDEX);
  if (!existsSync(index) || (await readFile(index, 'utf8')) !== renderIndex(checks)) {
    problems.push('docs/checks/README.md: stale (run `npm run docs`)');
  }
  return problems;
}

/** Creates missing pages as skeletons, refreshes generated blocks and the index; returns changes. */
export async function updateCheckDocs(
  checks: readonly CheckMeta[],
  dir = CHECK_DOCS_DIR
): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const changed: string[] = [];
  for (const check of checks) {
    const file = join(dir, `${check.id}.md`);
    if (!existsSync(file)) {
      await writeFile(file, renderSkeleton(check));
      changed.push(`${checkDocPath(check.id)} (new skeleton: write its sections)`);
      continue;
    }
    const doc = await readFile(file, 'utf8');
    const updated = withGeneratedBlock(doc, check);
    if (updated === undefined) {
      throw new Error(`${checkDocPath(check.id)} lacks the generated block markers`);
    }
    if (updated !== doc) {
      await writeFile(file, updated);
      changed.push(checkDocPath(check.id));
    }
  }
  const index = join(dir, CHECK_DOCS_INDEX);
  const rendered = renderIndex(checks);
  if (!existsSync(index) || (await readFile(index, 'utf8')) !== rendered) {
    await writeFile(index, rendered);
    changed.push('docs/checks/README.md');
  }
  return changed;
}
