// Text laid out for a terminal of a given width: lines broken at spaces with a hanging indent,
// and JSON (IAM policies in remediations) as an indented block. A word longer than a line (a URL,
// an ARN) is never cut: it stands alone on its line, which then runs past the width.

const ESC = '\u001b';
// Colour (SGR) sequences; built from text, as a control character in a literal reads as a mistake.
const SGR = new RegExp(`${ESC}\\[[0-9;]*m`, 'g');

/** The width the terminal gives `text`: colour sequences take none, each code point one column. */
export function visibleWidth(text: string): number {
  let width = 0;
  for (const _ of text.replace(SGR, '')) width += 1;
  return width;
}

/**
 * `first` (a prefix: label, indent, colour) followed by `text`, broken at spaces so that each line
 * fits `width`; lines after the first start with `indent` spaces. Without `width`, one line.
 */
export function hangingLines(
  first: string,
  text: string,
  indent: number,
  width: number | undefined
): string[] {
  if (width === undefined || visibleWidth(first) + visibleWidth(text) <= width) {
    return [`${first}${text}`];
  }
  const pad = ' '.repeat(indent);
  const lines: string[] = [];
  let line = first;
  let used = visibleWidth(first);
  let placed = 0;
  // A separator (`a · b`) ends its line rather than starting the next.
  const words: string[] = [];
  for (const word of text.split(' ')) {
    if (word === '') continue;
    if (word === '·' && words.length > 0) words[words.length - 1] += ' ·';
    else words.push(word);
  }
  for (const word of words) {
    const size = visibleWidth(word);
    if (placed === 0) {
      // After a prefix wider than the indent, a word that does not fit starts the next line.
      if (lines.length === 0 && used + size > width && used > indent) {
        lines.push(line.trimEnd());
        line = pad;
        used = indent;
      }
      line += word;
      used += size;
    } else if (used + 1 + size <= width) {
      line += ` ${word}`;
      used += 1 + size;
    } else {
      lines.push(line);
      line = `${pad}${word}`;
      used = indent + size;
    }
    placed += 1;
  }
  lines.push(line);
  return lines;
}

/**
 * A JSON value pretty-printed at `indent` spaces (two more per level), lists of plain values on
 * one line when they fit. A member whose value does not fit after its key gets the value on the
 * next line, one level deeper (unless `breakMembers` is false): still valid JSON, so the block can
 * be copied as it is.
 */
export function jsonBlock(
  value: unknown,
  indent: number,
  width: number | undefined,
  options: { readonly breakMembers?: boolean } = {}
): string[] {
  const breakMembers = options.breakMembers ?? true;
  const lines: string[] = [];
  const emit = (node: unknown, depth: number, head: string, tail: string): void => {
    const pad = ' '.repeat(indent + depth * 2);
    const entries =
      Array.isArray(node) || (node !== null && typeof node === 'object')
        ? Array.isArray(node)
          ? node.map((item) => ['', item] as const)
          : Object.entries(node).map(([key, item]) => [`${JSON.stringify(key)}: `, item] as const)
        : undefined;
    if (entries === undefined || entries.length === 0) {
      const scalar = JSON.stringify(node) ?? 'null';
      const whole = `${pad}${head}${scalar}${tail}`;
      if (breakMembers && head !== '' && width !== undefined && visibleWidth(whole) > width) {
        lines.push(`${pad}${head.trimEnd()}`, `${pad}  ${scalar}${tail}`);
      } else {
        lines.push(whole);
      }
      return;
    }
    // A list of plain values on one line when it fits: "Action": ["iam:PassRole"].
    if (Array.isArray(node) && node.every((item) => item === null || typeof item !== 'object')) {
      const inline = `${pad}${head}[${node.map((item) => JSON.stringify(item)).join(', ')}]${tail}`;
      if (width === undefined || visibleWidth(inline) <= width) {
        lines.push(inline);
        return;
      }
    }
    const [open, close] = Array.isArray(node) ? ['[', ']'] : ['{', '}'];
    lines.push(`${pad}${head}${open}`);
    entries.forEach(([key, item], index) => {
      emit(item, depth + 1, key, index === entries.length - 1 ? '' : ',');
    });
    lines.push(`${pad}${close}${tail}`);
  };
  emit(value, 0, '', '');
  return lines;
}

/** Text with embedded JSON objects: the text pieces, and each object (an IAM policy) parsed. */
export type TextPiece =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'json'; readonly value: unknown };

/** Where the JSON object starting at `start` ends (after its `}`), or -1. */
function objectEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let index = start; index < text.length; index++) {
    const char = text[index];
    if (inString) {
      if (char === '\\') index += 1;
      else if (char === '"') inString = false;
    } else if (char === '"') {
      inString = true;
    } else if (char === '{' || char === '[') {
      depth += 1;
    } else if (char === '}' || char === ']') {
      depth -= 1;
      if (depth === 0) return index + 1;
    }
  }
  return -1;
}

/**
 * Splits out IAM policy documents written inline as JSON (`{"Version":…,"Statement":[…]}`), so they
 * can be shown as blocks; any other text, braces included, stays text.
 */
export function splitPolicies(text: string): TextPiece[] {
  const pieces: TextPiece[] = [];
  let rest = 0;
  let from = 0;
  for (;;) {
    const start = text.indexOf('{"', from);
    if (start < 0) break;
    const end = objectEnd(text, start);
    if (end < 0) break;
    let value: unknown;
    try {
      value = JSON.parse(text.slice(start, end));
    } catch {
      from = start + 1;
      continue;
    }
    if (value === null || typeof value !== 'object' || !('Statement' in value)) {
      from = start + 1;
      continue;
    }
    const before = text.slice(rest, start).trim();
    if (before !== '') pieces.push({ kind: 'text', text: before });
    pieces.push({ kind: 'json', value });
    rest = end;
    from = end;
  }
  const after = text.slice(rest).trim();
  if (after !== '' || pieces.length === 0) pieces.push({ kind: 'text', text: after });
  return pieces;
}
