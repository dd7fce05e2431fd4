// Finding text carries user-controlled values (AWS tag values, names, Kubernetes fields). Before it
// reaches email or Slack it is neutralised: no mention tokens that page a whole channel, no control
// characters, no markup that turns into links or formatting, and bounded lengths.

export interface SanitizeOptions {
  readonly maxLength: number;
  /** Keep line breaks (descriptions); otherwise everything is one line (titles, attributes). */
  readonly multiline?: boolean;
  /** Also neutralise Markdown/mrkdwn formatting (Chatbot `client-markdown` text). */
  readonly markdown?: boolean;
}

const ELLIPSIS = '…';

// C0/C1 controls (tab and newline are handled separately), zero-width and bidi-override characters
// that can hide or reorder text.
const INVISIBLE_RANGES: readonly (readonly [number, number])[] = [
  [0x00, 0x08],
  [0x0b, 0x0c],
  [0x0e, 0x1f],
  [0x7f, 0x9f],
  [0x200b, 0x200f],
  [0x202a, 0x202e],
  [0x2060, 0x2064],
  [0x2066, 0x2069],
  [0xfeff, 0xfeff],
];

function stripInvisible(text: string): string {
  let kept = '';
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    // Fast path for the common printable ranges.
    if ((code >= 0x20 && code < 0x7f) || (code >= 0xa0 && code < 0x200b)) {
      kept += char;
      continue;
    }
    if (!INVISIBLE_RANGES.some(([low, high]) => code >= low && code <= high)) kept += char;
  }
  return kept;
}

/** `@here`, `@channel`, `@everyone` (Slack) in any case: the full-width `＠` never notifies. */
const BROADCAST_MENTION = /@(here|channel|everyone|all)\b/gi;

const MARKDOWN_LOOKALIKES: Readonly<Record<string, string>> = {
  '`': 'ˋ',
  '*': '∗',
  '~': '∼',
  '[': '［',
  ']': '］',
  '|': '│',
};

/**
 * Cuts to at most `maxLength` characters at a word boundary (after a space or a `/` of a path),
 * ending with `marker`. Only a single word longer than the limit is ever cut inside.
 */
export function shortenAtWord(value: string, maxLength: number, marker = ELLIPSIS): string {
  const chars = [...value];
  if (chars.length <= maxLength) return value;
  const room = maxLength - [...marker].length;
  if (room <= 0) return '';
  const head = chars.slice(0, room + 1).join('');
  const space = head.lastIndexOf(' ');
  const slash = head.lastIndexOf('/', room - 1);
  const boundary = Math.max(space, slash === -1 ? -1 : slash + 1);
  const cut = boundary > 0 ? head.slice(0, boundary) : chars.slice(0, room).join('');
  return `${cut.trimEnd()}${marker}`;
}

/** Cuts to `maxLength` code points, ending with `…` when cut. */
export function truncateText(value: string, maxLength: number): string {
  const chars = [...value];
  if (chars.length <= maxLength) return value;
  if (maxLength <= 0) return '';
  return `${chars.slice(0, maxLength - 1).join('')}${ELLIPSIS}`;
}

/**
 * Neutralises user-controlled text. `<` and `>` become look-alike guillemets, which kills every
 * Slack control sequence (`<!channel>`, `<!here>`, `<@U123>`, `<#C123>`, `<https://x|y>`) and HTML.
 */
export function sanitizeText(value: string, options: SanitizeOptions): string {
  // Work on a generous prefix only: the result is capped anyway, and evidence can be megabytes.
  let text = value
    .slice(0, options.maxLength * 2 + 16)
    .replace(/\r\n?/g, '\n')
    .replace(/\t/g, ' ');
  text = stripInvisible(text);
  if (!options.multiline) text = text.replace(/\n+/g, ' ');
  text = text
    .replace(/</g, '‹')
    .replace(/>/g, '›')
    .replace(BROADCAST_MENTION, (_match, word: string) => `＠${word}`);
  if (options.markdown) {
    text = text.replace(/[`*~[\]|]/g, (char) => MARKDOWN_LOOKALIKES[char] ?? char);
  }
  return truncateText(text.trim(), options.maxLength);
}

export interface DeepLimits {
  readonly maxString: number;
  readonly maxArray: number;
  readonly maxKeys: number;
  readonly maxDepth: number;
}

export const EVIDENCE_LIMITS: DeepLimits = {
  maxString: 1_000,
  maxArray: 50,
  maxKeys: 50,
  maxDepth: 6,
};

/**
 * IAM policy documents and statements are kept whole (IAM bounds their size: 6,144 characters per
 * managed policy), so a pasted statement is never cut or flattened inside a condition.
 */
export const POLICY_LIMITS: DeepLimits = {
  maxString: 2_048,
  maxArray: 1_000,
  maxKeys: 1_000,
  maxDepth: 8,
};

/** An IAM policy document (`Statement`) or a single statement (`Effect` with actions). */
export function isPolicyLike(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const record = value as Record<string, unknown>;
  if (Array.isArray(record.Statement)) return true;
  return (
    typeof record.Effect === 'string' &&
    (record.Action !== undefined || record.NotAction !== undefined)
  );
}

/**
 * Sanitises every string (keys included) in a JSON-like value, bounding size and depth. An IAM
 * policy document or statement inside is bounded by `POLICY_LIMITS` from its own root instead.
 */
export function sanitizeDeep(
  value: unknown,
  limits: DeepLimits = EVIDENCE_LIMITS,
  depth = 0
): unknown {
  if (typeof value === 'string')
    return sanitizeText(value, { maxLength: limits.maxString, multiline: true });
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return value;
  if (value === undefined) return undefined;
  if (limits !== POLICY_LIMITS && isPolicyLike(value)) return sanitizeDeep(value, POLICY_LIMITS);
  if (depth >= limits.maxDepth) return '[nested too deep]';
  if (Array.isArray(value)) {
    const items = value
      .slice(0, limits.maxArray)
      .map((item) => sanitizeDeep(item, limits, depth + 1));
    if (value.length > limits.maxArray) items.push(`[${value.length - limits.maxArray} more]`);
    return items;
  }
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    const kept = entries
      .slice(0, limits.maxKeys)
      .map(([key, item]) => [
        sanitizeText(key, { maxLength: 200 }),
        sanitizeDeep(item, limits, depth + 1),
      ]);
    if (entries.length > limits.maxKeys)
      kept.push(['…', `${entries.length - limits.maxKeys} more keys`]);
    return Object.fromEntries(kept);
  }
  return sanitizeText(String(value), { maxLength: limits.maxString });
}

/** UTF-8 byte length (one definition: finding budgets and message sizes count alike). */
export { utf8Length } from '../text-budget.js';

/** The longest SNS email `Subject` we send (SNS allows fewer than 100 characters). */
const MAX_SUBJECT_CHARS = 99;

function subjectText(value: string): string {
  const ascii = value
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/[·•]/g, '-')
    .replace(/[^\x20-\x7e]/g, '');
  // Sanitised whole (never a cut prefix), then shortened at a space by the caller.
  return sanitizeText(ascii, { maxLength: ascii.length + 1 })
    .replace(/[‹›…＠]/g, '')
    .replace(/[^\x20-\x7e]/g, '')
    .replace(/ {2,}/g, ' ')
    .trim();
}

/**
 * An SNS email `Subject`: ASCII only, no line breaks or control characters, under 100 characters
 * (SNS Publish API reference), shortened at a word boundary with `...`.
 */
export function emailSubject(value: string): string {
  return shortenAtWord(subjectText(value), MAX_SUBJECT_CHARS, '...');
}

/** The first of `candidates` (most informative first) that fits whole, else the last one shortened. */
export function fittingSubject(candidates: readonly string[]): string {
  for (const candidate of candidates) {
    const text = subjectText(candidate);
    if (text.length <= MAX_SUBJECT_CHARS) return text;
  }
  return emailSubject(candidates[candidates.length - 1] ?? '');
}

/** Text, or a code block the chat client shows verbatim (JSON to paste). */
export type TextBlock = string | { readonly code: string };

/**
 * Code for a Markdown code block: the same neutralisation as text (no mentions, no `<…>` control
 * sequences, no invisible characters) except Markdown, which a code block does not render. A
 * backtick becomes `ˋ` so nothing can close the fence; inside JSON strings that keeps it valid.
 */
function sanitizeCode(value: string): string {
  return stripInvisible(value.replace(/\r\n?/g, '\n').replace(/\t/g, '  '))
    .replace(/</g, '‹')
    .replace(/>/g, '›')
    .replace(BROADCAST_MENTION, (_match, word: string) => `＠${word}`)
    .replace(/`/g, 'ˋ');
}

/**
 * Markdown text of blocks within `maxLength`: text is neutralised (and cut when it must be), code
 * goes in a fenced block, whole or not at all (`omitted` says so): a cut JSON is worse than none.
 */
export function markdownBlocks(
  blocks: readonly TextBlock[],
  maxLength: number,
  omitted = '(too long for chat: see the email or the JSON message)'
): string {
  const parts: string[] = [];
  let used = 0;
  for (const block of blocks) {
    const separator = parts.length === 0 ? 0 : 1;
    const room = maxLength - used - separator;
    if (room <= 0) break;
    let part: string;
    if (typeof block === 'string') {
      part = sanitizeText(block, { maxLength: room, multiline: true, markdown: true });
    } else {
      const fenced = `\`\`\`\n${sanitizeCode(block.code)}\n\`\`\``;
      part =
        [...fenced].length <= room
          ? fenced
          : sanitizeText(omitted, { maxLength: room, markdown: true });
    }
    if (part === '') continue;
    parts.push(part);
    used += separator + [...part].length;
  }
  return parts.join('\n');
}
