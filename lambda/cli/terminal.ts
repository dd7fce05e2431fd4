// Every line the CLI prints can carry text it did not write: file names, world-file keys, manifest
// fields, an API server's answer. A terminal obeys control characters in that text (`ESC[2J`
// clears the screen, `ESC]0;…BEL` retitles the window, C1 `CSI` is ESC's 8-bit twin) and bidi
// controls reorder what the reader sees (https://trojansource.codes). Here they are shown, never
// obeyed: each becomes a visible `\uXXXX`.

// C0 controls, DEL, C1 controls; the Arabic letter mark, LRM/RLM, the line and paragraph
// separators, bidi embeddings/overrides (U+202A–U+202E) and isolates (U+2066–U+2069).
const UNSAFE = '\\u0000-\\u001F\\u007F-\\u009F\\u061C\\u200E\\u200F\\u2028-\\u202E\\u2066-\\u2069';
const UNSAFE_CHAR = new RegExp(`[${UNSAFE}]`, 'g');
// The guard's view: a complete SGR sequence (colour) as one match, else one unsafe character.
const GUARDED = new RegExp(`\\u001B\\[[0-9;]*m|[${UNSAFE}]`, 'g');
// What the guard changes: `UNSAFE` without the tab (U+0009) and line feed (U+000A) it keeps.
// Text without any is returned as is, sparing a replacement call per line (a report has millions).
const CHANGED_BY_GUARD = new RegExp(
  `[${UNSAFE.replace('\\u0000-\\u001F', '\\u0000-\\u0008\\u000B-\\u001F')}]`
);

/** `\u001B` for ESC: what a reader sees instead of a control character. */
export function visibleEscape(char: string): string {
  return `\\u${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * Untrusted text made safe to print inside a line: every control and bidi character, line breaks
 * and tabs included, becomes a visible `\uXXXX`, so the text can neither act on the terminal nor
 * start a line of its own. Apply it to the data, before adding colour.
 */
export function terminalSafe(text: string): string {
  return text.replace(UNSAFE_CHAR, visibleEscape);
}

export interface TerminalOutputOptions {
  /** Let SGR sequences (`ESC[…m`, colour) through: the table colours its own output on a TTY. */
  readonly sgr: boolean;
}

/**
 * The last step before bytes reach stdout or stderr: whatever a formatter missed is escaped as in
 * `terminalSafe`, keeping only line breaks and tabs (layout) and, with `sgr`, colour sequences.
 * Raw C1 or bidi characters inside JSON strings become `\uXXXX` escapes of the same value.
 */
export function terminalOutput(text: string, options: TerminalOutputOptions): string {
  if (!CHANGED_BY_GUARD.test(text)) return text;
  return text.replace(GUARDED, (match) => {
    if (match.length > 1)
      return options.sgr ? match : `${visibleEscape('\u001b')}${match.slice(1)}`;
    return match === '\n' || match === '\t' ? match : visibleEscape(match);
  });
}
