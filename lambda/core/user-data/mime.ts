// MIME multi-part userData read the way Karpenter reads it before merging its own parts
// (https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/providers/amifamily/bootstrap/eksbootstrap.go
// for AL2, .../bootstrap/mime/mime.go for AL2023): Go's net/mail.ReadMessage for the outer headers,
// mime.ParseMediaType for the Content-Type, and mime/multipart.Reader for the parts, whose headers
// net/textproto reads strictly. Every error Go returns there makes Karpenter fail to render the
// launch template. The rules below restate Go's documented behaviour (standard library, Go 1.24);
// messages are the scanner's own. Pure: no I/O.

export interface MimePart {
  /** Header fields in order, keys canonicalised as Go does (`content-type` → `Content-Type`). */
  readonly headers: readonly (readonly [string, string])[];
  readonly body: string;
  /** 1-based line of the part's boundary delimiter in the userData. */
  readonly line: number;
}

export type MimeReadResult =
  | { readonly ok: true; readonly parts: readonly MimePart[] }
  | { readonly ok: false; readonly line: number; readonly message: string };

export type MediaTypeResult =
  | { readonly ok: true; readonly mediaType: string; readonly params: ReadonlyMap<string, string> }
  | { readonly ok: false; readonly message: string };

/** `userData` starts like a MIME document, which makes Karpenter parse it as one. */
export function looksLikeMime(userData: string): boolean {
  const trimmed = userData.trim();
  return trimmed.startsWith('MIME-Version:') || trimmed.startsWith('Content-Type:');
}

// RFC 2045 tspecials: a token is anything printable but these and spaces.
const TSPECIALS = '()<>@,;:\\"/[]?=';

function isTokenChar(char: string): boolean {
  const code = char.charCodeAt(0);
  return code > 0x20 && code < 0x7f && !TSPECIALS.includes(char);
}

function consumeToken(text: string): [string, string] {
  let end = 0;
  while (end < text.length && isTokenChar(text[end] ?? '')) end++;
  return [text.slice(0, end), text.slice(end)];
}

/** Go's `unicode.IsSpace` on the characters a header can hold. */
function trimLeadingSpace(text: string): string {
  return text.replace(/^[\t\n\v\f\r \u0085\u00a0]+/, '');
}

function consumeValue(text: string): [string, string] {
  if (text === '') return ['', text];
  if (text[0] !== '"') return consumeToken(text);
  let value = '';
  for (let i = 1; i < text.length; i++) {
    const char = text[i] ?? '';
    if (char === '"') return [value, text.slice(i + 1)];
    const next = text[i + 1];
    if (char === '\\' && next !== undefined && TSPECIALS.includes(next)) {
      value += next;
      i++;
      continue;
    }
    if (char === '\r' || char === '\n') return ['', text];
    value += char;
  }
  return ['', text]; // no closing quote
}

/** One `; name=value` parameter, or undefined when none can be read at the start of `text`. */
function consumeParam(text: string): { name: string; value: string; rest: string } | undefined {
  let rest = trimLeadingSpace(text);
  if (!rest.startsWith(';')) return undefined;
  rest = trimLeadingSpace(rest.slice(1));
  const [rawName, afterName] = consumeToken(rest);
  const name = rawName.toLowerCase();
  if (name === '') return undefined;
  rest = trimLeadingSpace(afterName);
  if (!rest.startsWith('=')) return undefined;
  rest = trimLeadingSpace(rest.slice(1));
  const [value, afterValue] = consumeValue(rest);
  if (value === '' && afterValue === rest) return undefined;
  return { name, value, rest: afterValue };
}

/** `type/subtype; name=value…` as Go's mime.ParseMediaType reads it (RFC 2231 continuations too). */
export function parseMediaType(header: string): MediaTypeResult {
  const semicolon = header.indexOf(';');
  const base = semicolon === -1 ? header : header.slice(0, semicolon);
  const mediaType = base.toLowerCase().trim();
  const [type, afterType] = consumeToken(mediaType);
  if (type === '') return { ok: false, message: 'no media type' };
  if (afterType !== '') {
    if (!afterType.startsWith('/'))
      return { ok: false, message: 'expected a slash after the type' };
    const [subtype, afterSubtype] = consumeToken(afterType.slice(1));
    if (subtype === '') return { ok: false, message: 'expected a subtype after the slash' };
    if (afterSubtype !== '')
      return { ok: false, message: 'unexpected text after the media subtype' };
  }
  const params = new Map<string, string>();
  const continued = new Map<string, Map<string, string>>();
  let rest = header.slice(base.length);
  while (rest.length > 0) {
    rest = trimLeadingSpace(rest);
    if (rest === '') break;
    const param = consumeParam(rest);
    if (param === undefined) {
      if (rest.trim() === ';') break; // a trailing semicolon is tolerated
      return { ok: false, message: `invalid media type parameter near "${rest.slice(0, 40)}"` };
    }
    const star = param.name.indexOf('*');
    let target = params;
    if (star !== -1) {
      const baseName = param.name.slice(0, star);
      target = continued.get(baseName) ?? new Map<string, string>();
      continued.set(baseName, target);
    }
    const previous = target.get(param.name);
    if (previous !== undefined && previous !== param.value) {
      return { ok: false, message: `duplicate parameter "${param.name}"` };
    }
    target.set(param.name, param.value);
    rest = param.rest;
  }
  for (const [name, pieces] of continued) {
    if (params.has(name)) continue;
    const simple = pieces.get(`${name}*`);
    if (simple !== undefined) {
      params.set(name, decodeExtended(simple) ?? simple);
      continue;
    }
    let value = '';
    for (let index = 0; ; index++) {
      const plain = pieces.get(`${name}*${index}`);
      const encoded = pieces.get(`${name}*${index}*`);
      if (plain !== undefined) value += plain;
      else if (encoded !== undefined)
        value += (index === 0 ? decodeExtended(encoded) : encoded) ?? '';
      else break;
    }
    if (value !== '') params.set(name, value);
  }
  return { ok: true, mediaType, params };
}

/** RFC 2231 `charset'lang'%XX…`; only the value's text is needed here. */
function decodeExtended(value: string): string | undefined {
  const parts = value.split("'");
  if (parts.length !== 3) return undefined;
  try {
    return decodeURIComponent(parts[2] ?? '');
  } catch {
    return undefined;
  }
}

/** RFC 7230 field-name characters, the ones Go accepts in a header key. */
const FIELD_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** `content-type` → `Content-Type`; undefined when the key holds a byte Go refuses. */
function canonicalKey(key: string): string | undefined {
  if (!FIELD_NAME.test(key)) return undefined;
  return key
    .toLowerCase()
    .replace(
      /(^|-)([a-z])/g,
      (_match, dash: string, letter: string) => dash + letter.toUpperCase()
    );
}

/** Lenient form (net/mail): keys with other bytes are kept as written. */
function lenientKey(key: string): string {
  return canonicalKey(key) ?? key;
}

class Lines {
  pos = 0;
  private readonly starts: number[] = [0];

  constructor(readonly text: string) {
    for (let i = 0; i < text.length; i++) if (text[i] === '\n') this.starts.push(i + 1);
  }

  lineOf(at: number): number {
    let low = 0;
    let high = this.starts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if ((this.starts[mid] ?? 0) <= at) low = mid;
      else high = mid - 1;
    }
    return low + 1;
  }

  /** The next line with its `\n` (none at the end of the text); empty at the end. */
  readSlice(): string {
    const end = this.text.indexOf('\n', this.pos);
    const line = end === -1 ? this.text.slice(this.pos) : this.text.slice(this.pos, end + 1);
    this.pos += line.length;
    return line;
  }

  /**
   * textproto's continued line: trailing spaces dropped, following lines that start with a space
   * or tab appended after one space. `undefined` at the end of the text.
   */
  readContinuedLine(): string | undefined {
    if (this.pos >= this.text.length) return undefined;
    let line = this.readSlice()
      .replace(/\r?\n$/, '')
      .replace(/[ \t\r]+$/, '');
    if (line === '') return '';
    while (this.text[this.pos] === ' ' || this.text[this.pos] === '\t') {
      const next = this.readSlice()
        .replace(/\r?\n$/, '')
        .trim();
      line = next === '' ? line : `${line} ${next}`;
    }
    return line;
  }
}

type HeaderRead =
  | {
      readonly ok: true;
      readonly headers: [string, string][];
      /** 1-based line of each header, in order. */
      readonly lines: number[];
      readonly atEnd: boolean;
    }
  | { readonly ok: false; readonly message: string; readonly line: number };

/** The outer headers, as net/mail reads them (no validation of keys or values). */
function readMessageHeaders(lines: Lines): HeaderRead {
  const headers: [string, string][] = [];
  const headerLines: number[] = [];
  const first = lines.text[0];
  if (first === ' ' || first === '\t') {
    return { ok: false, message: 'the first header line starts with a space', line: 1 };
  }
  for (;;) {
    const lineNumber = lines.lineOf(lines.pos);
    const line = lines.readContinuedLine();
    if (line === undefined || line === '') {
      return { ok: true, headers, lines: headerLines, atEnd: line === undefined };
    }
    const colon = line.indexOf(':');
    if (colon === -1) {
      return {
        ok: false,
        message: `header line without a colon: "${line.slice(0, 60)}"`,
        line: lineNumber,
      };
    }
    const key = lenientKey(line.slice(0, colon));
    if (key === '') continue;
    headers.push([key, line.slice(colon + 1).replace(/^[ \t]+/, '')]);
    headerLines.push(lineNumber);
  }
}

/** A part's headers, as textproto.ReadMIMEHeader reads them: keys and values validated. */
function readPartHeaders(lines: Lines): HeaderRead {
  const headers: [string, string][] = [];
  const headerLines: number[] = [];
  const first = lines.text[lines.pos];
  if (first === ' ' || first === '\t') {
    return {
      ok: false,
      message: 'the first header line of the part starts with a space',
      line: lines.lineOf(lines.pos),
    };
  }
  for (;;) {
    const lineNumber = lines.lineOf(lines.pos);
    const line = lines.readContinuedLine();
    if (line === undefined) return { ok: true, headers, lines: headerLines, atEnd: true };
    if (line === '') return { ok: true, headers, lines: headerLines, atEnd: false };
    const colon = line.indexOf(':');
    if (colon === -1) {
      return {
        ok: false,
        message: `"${line.slice(0, 60)}" is not a header line (no colon): a part needs its headers, then an empty line, then its content`,
        line: lineNumber,
      };
    }
    const key = canonicalKey(line.slice(0, colon));
    const value = line.slice(colon + 1);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: header values may not hold controls
    if (key === undefined || /[\x00-\x08\x0a-\x1f\x7f]/.test(value)) {
      return {
        ok: false,
        message: `malformed header line "${line.slice(0, 60)}"`,
        line: lineNumber,
      };
    }
    headers.push([key, value.replace(/^[ \t]+/, '')]);
    headerLines.push(lineNumber);
  }
}

function skipLinearWhitespace(text: string): string {
  return text.replace(/^[ \t]+/, '');
}

/**
 * Reads `userData` as a MIME multi-part document the way Karpenter does, or says why Go refuses
 * it (with the line). A part whose headers reach the end of the text ends the document, as in Go.
 */
export function readMultipart(userData: string): MimeReadResult {
  const lines = new Lines(userData);
  const headerRead = readMessageHeaders(lines);
  if (!headerRead.ok) return { ok: false, line: headerRead.line, message: headerRead.message };
  const index = headerRead.headers.findIndex(([key]) => key === 'Content-Type');
  const contentType = headerRead.headers[index]?.[1] ?? '';
  const line = headerRead.lines[index] ?? 1;
  const media = parseMediaType(contentType);
  if (!media.ok) {
    const unquoted = /boundary\s*=\s*[^"\s;]*[()<>@,;:\\/[\]?=]/i.test(contentType);
    return {
      ok: false,
      line,
      message:
        contentType === ''
          ? 'no Content-Type header before the first empty line'
          : `the Content-Type header is not a valid media type: ${media.message}${unquoted ? ' (quote the boundary, as in boundary="//": characters such as "/" are not allowed unquoted)' : ''}`,
    };
  }
  if (!media.mediaType.startsWith('multipart/')) {
    return { ok: false, line, message: `the Content-Type is ${media.mediaType}, not multipart/*` };
  }
  const boundary = media.params.get('boundary') ?? '';
  if (boundary === '') {
    return {
      ok: false,
      line,
      message:
        'the Content-Type has no boundary parameter (quote it when it holds characters such as "/": boundary="//")',
    };
  }
  return readParts(lines, boundary);
}

function readParts(lines: Lines, boundary: string): MimeReadResult {
  const dash = `--${boundary}`;
  let newline = '\r\n';
  let partsRead = 0;
  const parts: MimePart[] = [];
  const isDelimiter = (line: string): boolean => {
    if (!line.startsWith(dash)) return false;
    const rest = skipLinearWhitespace(line.slice(dash.length));
    if (partsRead === 0 && rest === '\n') newline = '\n';
    return rest === newline;
  };
  const isFinal = (line: string): boolean => {
    if (!line.startsWith(`${dash}--`)) return false;
    const rest = skipLinearWhitespace(line.slice(dash.length + 2));
    return rest === '' || rest === newline;
  };
  for (;;) {
    let expectNewPart = false;
    let delimiterAt = -1;
    while (delimiterAt === -1) {
      const at = lines.pos;
      const line = lines.readSlice();
      if (!line.endsWith('\n')) {
        if (isFinal(line)) return { ok: true, parts };
        return {
          ok: false,
          line: lines.lineOf(at),
          message:
            partsRead === 0
              ? `no "${dash}" boundary line: the document has no parts`
              : `the document ends without its closing "${dash}--" line`,
        };
      }
      if (isDelimiter(line)) delimiterAt = at;
      else if (isFinal(line)) return { ok: true, parts };
      else if (expectNewPart) {
        return {
          ok: false,
          line: lines.lineOf(at),
          message: `expected a new part after the boundary, found "${line.trim().slice(0, 60)}"`,
        };
      } else if (partsRead > 0 && line === newline) expectNewPart = true;
      else if (partsRead > 0) {
        return { ok: false, line: lines.lineOf(at), message: 'unexpected line between parts' };
      }
    }
    partsRead++;
    const headers = readPartHeaders(lines);
    if (!headers.ok) return { ok: false, line: headers.line, message: headers.message };
    // Headers that run to the end of the text: Go reports io.EOF, which Karpenter takes as the end.
    if (headers.atEnd) return { ok: true, parts };
    const body = readBody(lines, dash, `${newline}${dash}`);
    if (body === undefined) {
      return {
        ok: false,
        line: lines.lineOf(delimiterAt),
        message: `the part starting here never ends: no "${dash}" or "${dash}--" line follows it`,
      };
    }
    parts.push({ headers: headers.headers, body, line: lines.lineOf(delimiterAt) });
  }
}

/** Whether the text after a boundary prefix at `at` completes a boundary (Go's matchAfterPrefix). */
function completesBoundary(text: string, at: number): boolean {
  const char = text[at];
  if (char === undefined || char === ' ' || char === '\t' || char === '\r' || char === '\n') {
    return true;
  }
  return char === '-' && text[at + 1] === '-';
}

/** The part's content up to the next boundary (which is left to read), or undefined at EOF. */
function readBody(lines: Lines, dash: string, newlineDash: string): string | undefined {
  const { text } = lines;
  const start = lines.pos;
  if (text.startsWith(dash, start) && completesBoundary(text, start + dash.length)) return '';
  let from = start;
  for (;;) {
    const index = text.indexOf(newlineDash, from);
    if (index === -1) return undefined;
    if (completesBoundary(text, index + newlineDash.length)) {
      lines.pos = index;
      return text.slice(start, index);
    }
    from = index + 1;
  }
}
