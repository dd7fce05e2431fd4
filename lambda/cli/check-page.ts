// `nodeclass-scan checks ID`: a check's page from docs/checks/<id>.md (the repository's, or the one
// the package ships), laid out for a terminal: headings, wrapped paragraphs and lists, code blocks
// as they are, links as their URLs.

import { existsSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import type { CheckMeta } from '../core/check.js';
import { CHECKS } from '../core/checks/index.js';
import { didYouMean } from '../core/suggest.js';
import { ConfigError } from '../shared/errors.js';
import { CHECK_DOCS_DIR, checkDocPath, publicUrlOf } from './check-docs.js';
import type { CatalogFormat } from './formats/catalog.js';
import { catalogEntry } from './formats/catalog.js';
import { hangingLines } from './formats/wrap.js';

/** Inline Markdown as plain text: links as `text (target)`, no emphasis or code marks. */
function inline(text: string): string {
  return text
    .replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (_, label: string, target: string) => {
      const page = /^([a-z0-9-]+)\.md$/.exec(target);
      if (page && CHECKS.some((check) => check.id === page[1])) {
        return `${label} (nodeclass-scan checks ${page[1]})`;
      }
      if (/^https?:/.test(target)) return `${label} (${target})`;
      if (target.startsWith('#')) return label;
      // Another page of docs/: its path in the repository and the package.
      return `${label} (${posix.join('docs/checks', target)})`;
    })
    .replace(/<(https?:\/\/[^>\s]+)>/g, '$1')
    .replace(/\*\*([^*]+)\*\*/g, '$1')
    .replace(/`([^`]+)`/g, '$1')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

function cellsOf(row: string): string[] {
  return row
    .trim()
    .replace(/^\||\|$/g, '')
    .split(/(?<!\\)\|/)
    .map((cell) => inline(cell.trim().replace(/\\\|/g, '|')));
}

/** A Markdown table: `key: value` lines for a two-column table without headings, else records. */
function tableLines(rows: readonly string[], width: number): string[] {
  const [head = '', , ...body] = rows;
  const headings = cellsOf(head);
  if (headings.every((cell) => cell === '')) {
    return body.flatMap((row) => {
      const [key = '', ...values] = cellsOf(row);
      return hangingLines(`  ${key}: `, values.join(' '), 4, width);
    });
  }
  return body.flatMap((row) => {
    const [first = '', ...rest] = cellsOf(row);
    const details = rest
      .map((cell, index) => `${headings[index + 1] ?? ''}: ${cell}`)
      .filter((detail) => !detail.endsWith(': '));
    return [
      ...hangingLines('  - ', first, 4, width),
      ...(details.length === 0 ? [] : hangingLines('    ', details.join('; '), 4, width)),
    ];
  });
}

/** The page's Markdown laid out for a terminal of `width` columns. */
function renderCheckPage(markdown: string, width: number): string {
  const lines = markdown.replace(/<!--[\s\S]*?-->/g, '').split('\n');
  const out: string[] = [];
  const blank = () => {
    if (out.length > 0 && out[out.length - 1] !== '') out.push('');
  };
  let index = 0;
  const paragraph: string[] = [];
  const flush = () => {
    if (paragraph.length === 0) return;
    const text = inline(paragraph.join(' '));
    paragraph.length = 0;
    const item = /^(\s*)([-*]|\d+\.) (.*)$/.exec(text);
    if (item) {
      const marker = `${' '.repeat(2 + (item[1] ?? '').length)}${item[2]} `;
      out.push(...hangingLines(marker, item[3] ?? '', marker.length, width));
    } else {
      out.push(...hangingLines('  ', text, 2, width));
    }
  };
  while (index < lines.length) {
    const line = lines[index] ?? '';
    index += 1;
    if (line.trimStart().startsWith('```')) {
      flush();
      const indent = line.length - line.trimStart().length;
      while (index < lines.length && !(lines[index] ?? '').trimStart().startsWith('```')) {
        out.push(`    ${(lines[index] ?? '').slice(indent)}`.trimEnd());
        index += 1;
      }
      index += 1;
      continue;
    }
    const heading = /^(#{1,6}) +(.*)$/.exec(line);
    if (heading) {
      flush();
      blank();
      const title = inline(heading[2] ?? '');
      const text = (heading[1] ?? '').length === 1 ? title : title.toUpperCase();
      out.push(...hangingLines('', text, 2, width));
      continue;
    }
    if (line.trimStart().startsWith('|')) {
      flush();
      const rows = [line];
      while (index < lines.length && (lines[index] ?? '').trimStart().startsWith('|')) {
        rows.push(lines[index] ?? '');
        index += 1;
      }
      out.push(...tableLines(rows, width));
      continue;
    }
    if (line.trim() === '') {
      flush();
      blank();
      continue;
    }
    // A new list item ends the one before; an indented line continues it.
    if (/^\s*([-*]|\d+\.) /.test(line)) flush();
    paragraph.push(paragraph.length === 0 ? line.trimEnd() : line.trim());
  }
  flush();
  while (out[out.length - 1] === '') out.pop();
  return `${out.join('\n')}\n`;
}

/** Without a page (a build without docs/): what the catalog knows. */
function metadataPage(check: CheckMeta): string {
  const references = check.references.map(
    (reference) => `- ${publicUrlOf(reference) ?? reference}`
  );
  return [
    `# \`${check.id}\`: ${check.title}`,
    '',
    `| | |\n| --- | --- |\n| Default severity | ${check.severity} |\n| Needs | ${check.inputs.join(', ')} |`,
    '',
    '## Why it matters',
    '',
    check.rationale,
    '',
    '## How to fix',
    '',
    check.remediation,
    ...(references.length === 0 ? [] : ['', '## References', '', ...references]),
  ].join('\n');
}

/** `unknown check "x" (did you mean "y"?)`, with ids that contain the word when none is close. */
function unknownCheck(id: string): ConfigError {
  const ids = CHECKS.map((check) => check.id);
  const containing = ids
    .filter((candidate) => id.length >= 3 && candidate.includes(id))
    .slice(0, 4)
    .map((candidate) => `"${candidate}"`);
  const hint =
    didYouMean(id, ids) ||
    (containing.length === 0
      ? ''
      : ` (did you mean ${containing.length === 1 ? '' : 'one of '}${containing.join(', ')}?)`);
  return new ConfigError(
    `checks: unknown check "${id}"${hint}; \`nodeclass-scan checks\` lists them`
  );
}

/** The page of check `id` (table: laid out; json: the catalog entry with the page's Markdown). */
export function checkPage(id: string, format: CatalogFormat, width: number): string {
  const check = CHECKS.find((candidate) => candidate.id === id);
  if (check === undefined) throw unknownCheck(id);
  const file = join(CHECK_DOCS_DIR, `${id}.md`);
  const markdown = existsSync(file) ? readFileSync(file, 'utf8') : metadataPage(check);
  if (format === 'json') {
    return `${JSON.stringify(
      { ...catalogEntry(check), page: { path: checkDocPath(id), markdown } },
      null,
      2
    )}\n`;
  }
  return renderCheckPage(markdown, width);
}
