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

/** Sanitises every string (keys included) in a JSON-like value, bounding size and depth. */
export function sanitizeDeep(
  value: unknown,
  limits: DeepLimits = EVIDENCE_LIMITS,
  depth = 0
): unknown {
  if (typeof value === 'string')
    return sanitizeText(value, { maxLength: limits.maxString, multiline: true });
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return value;
  if (value === undefined) return undefined;
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

/** UTF-8 byte length, without `TextEncoder`-free assumptions about the runtime. */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
  }
  return bytes;
}

/**
 * An SNS email `Subject`: ASCII only, no line breaks or control characters, under 100 characters
 * (SNS Publish API reference).
 */
export function emailSubject(value: string): string {
  const ascii = value
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/[·•]/g, '-')
    .replace(/[^\x20-\x7e]/g, '');
  return truncateText(sanitizeText(ascii, { maxLength: 99 }).replace(/[‹›…＠]/g, ''), 99)
    .replace(/[^\x20-\x7e]/g, '')
    .trim();
}
