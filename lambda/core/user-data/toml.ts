// A TOML 1.0.0 reader that keeps the line of every key, for reporting on Bottlerocket userData.
// Karpenter parses that userData with github.com/pelletier/go-toml/v2 (v2.4.3 at Karpenter
// v1.14.1: https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/go.mod), which implements
// TOML v1.0.0 (https://toml.io/en/v1.0.0), not 1.1: newlines and trailing commas in inline
// tables, `\e` and `\xHH` escapes and times without seconds are errors here as they are there.
// Which keys may be defined twice, or extended by a later header or dotted key, follows go-toml's
// own rules (its `internal/tracker/seen.go`), which differ from the spec's prose in corner cases.
// The first error ends the parse, as in go-toml. Pure: no I/O.

/** A parsed value; `line` is where its key (or, in an array, the value itself) starts. */
export type TomlNode = TomlScalar | TomlArray | TomlTable | TomlTableArray;

export type TomlScalarKind =
  | 'string'
  | 'integer'
  | 'float'
  | 'boolean'
  | 'offset-datetime'
  | 'local-datetime'
  | 'local-date'
  | 'local-time';

export interface TomlScalar {
  readonly kind: TomlScalarKind;
  readonly line: number;
  /** The decoded value of strings and booleans; the source text of the others. */
  readonly value: string | boolean;
  /** Integers only: the value, for range checks. */
  readonly integer?: bigint;
}

export interface TomlArray {
  readonly kind: 'array';
  readonly line: number;
  readonly items: TomlNode[];
}

export interface TomlTable {
  readonly kind: 'table';
  readonly line: number;
  readonly entries: Map<string, TomlNode>;
  /** Defined as `{ … }` on one line (immutable in TOML). */
  readonly inline: boolean;
}

/** `[[name]]`: one table per header. */
export interface TomlTableArray {
  readonly kind: 'table-array';
  readonly line: number;
  readonly tables: TomlTable[];
}

export interface TomlSyntaxError {
  /** 1-based, in the TOML text. */
  readonly line: number;
  readonly column: number;
  readonly message: string;
}

export type TomlParseResult =
  | { readonly ok: true; readonly root: TomlTable }
  | { readonly ok: false; readonly error: TomlSyntaxError };

/** Deeper than any real userData; bounds the recursion on hostile input. */
const MAX_NESTING = 128;

class TomlFailure extends Error {
  constructor(
    readonly at: number,
    message: string
  ) {
    super(message);
  }
}

// --- Definition tracking (go-toml's rules) ------------------------------------------------------

type SeenKind = 'value' | 'table' | 'array-table';

interface Seen {
  kind: SeenKind;
  /** Defined by a header, or by dotted keys of a section that has since ended. */
  explicit: boolean;
  /** Created by a dotted key of the current section. */
  viaKey: boolean;
  children: Map<string, Seen>;
}

function seenNode(kind: SeenKind, explicit: boolean, viaKey: boolean): Seen {
  return { kind, explicit, viaKey, children: new Map() };
}

/** Tables created by dotted keys become fixed once their section ends. */
function closeSection(node: Seen): void {
  for (const child of node.children.values()) {
    if (child.viaKey) {
      child.explicit = true;
      child.viaKey = false;
    }
    closeSection(child);
  }
}

// --- Character classes -------------------------------------------------------------------------

const BARE_KEY = /[A-Za-z0-9_-]/;
const HEX = /^[0-9A-Fa-f]+$/;

function isControl(code: number, allowTab: boolean): boolean {
  if (code === 0x09) return !allowTab;
  return code < 0x20 || code === 0x7f;
}

function describeChar(char: string | undefined): string {
  if (char === undefined) return 'the end of the text';
  if (char === '\n' || char === '\r') return 'a line break';
  const code = char.codePointAt(0) ?? 0;
  if (code < 0x20 || code === 0x7f)
    return `control character U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
  return `'${char}'`;
}

// --- Scalars -----------------------------------------------------------------------------------

const DEC_INT = /^[+-]?(0|[1-9](_?[0-9])*)$/;
const HEX_INT = /^0x[0-9A-Fa-f](_?[0-9A-Fa-f])*$/;
const OCT_INT = /^0o[0-7](_?[0-7])*$/;
const BIN_INT = /^0b[01](_?[01])*$/;
const FLOAT =
  /^[+-]?(0|[1-9](_?[0-9])*)((\.[0-9](_?[0-9])*)([eE][+-]?[0-9](_?[0-9])*)?|[eE][+-]?[0-9](_?[0-9])*)$/;
const SPECIAL_FLOAT = /^[+-]?(inf|nan)$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIME = /^(\d{2}):(\d{2}):(\d{2})(\.\d+)?$/;
const DATE_TIME = /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}:\d{2}(?:\.\d+)?)([Zz]|[+-]\d{2}:\d{2})?$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

function validDate(text: string): boolean {
  const match = DATE.exec(text);
  if (!match) return false;
  const year = Number(match[1]);
  const month = Number(match[2]);
  const day = Number(match[3]);
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 0;
  return day <= days;
}

function validTime(text: string): boolean {
  const match = TIME.exec(text);
  if (!match) return false;
  return Number(match[1]) <= 23 && Number(match[2]) <= 59 && Number(match[3]) <= 60;
}

function validOffset(offset: string): boolean {
  if (offset === 'Z' || offset === 'z') return true;
  return Number(offset.slice(1, 3)) <= 23 && Number(offset.slice(4, 6)) <= 59;
}

function integerValue(text: string): bigint {
  const digits = text.replaceAll('_', '');
  if (digits.startsWith('0x') || digits.startsWith('0o') || digits.startsWith('0b')) {
    return BigInt(digits);
  }
  const negative = digits.startsWith('-');
  const magnitude = BigInt(digits.replace(/^[+-]/, ''));
  return negative ? -magnitude : magnitude;
}

// --- The reader --------------------------------------------------------------------------------

class Reader {
  private pos = 0;
  private readonly lineStarts: number[] = [0];
  private readonly root: TomlTable = { kind: 'table', line: 1, entries: new Map(), inline: false };
  private readonly seenRoot: Seen = seenNode('table', true, false);
  private current: TomlTable = this.root;
  private currentSeen: Seen = this.seenRoot;

  constructor(private readonly text: string) {
    for (let i = 0; i < text.length; i++) if (text[i] === '\n') this.lineStarts.push(i + 1);
  }

  position(at: number): { line: number; column: number } {
    let low = 0;
    let high = this.lineStarts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if ((this.lineStarts[mid] ?? 0) <= at) low = mid;
      else high = mid - 1;
    }
    return { line: low + 1, column: at - (this.lineStarts[low] ?? 0) + 1 };
  }

  private lineAt(at: number): number {
    return this.position(at).line;
  }

  private peek(offset = 0): string | undefined {
    return this.text[this.pos + offset];
  }

  private fail(message: string, at = this.pos): never {
    throw new TomlFailure(at, message);
  }

  parse(): TomlTable {
    if (this.peek() === '\uFEFF') this.pos++;
    while (this.pos < this.text.length) {
      this.skipSpaces();
      const char = this.peek();
      if (char === undefined) break;
      if (this.atNewline()) {
        this.consumeNewline();
        continue;
      }
      if (char === '#') {
        this.skipComment();
        continue;
      }
      if (char === '[') this.header();
      else this.keyValueLine();
      this.endOfLine();
    }
    return this.root;
  }

  private skipSpaces(): void {
    while (this.peek() === ' ' || this.peek() === '\t') this.pos++;
  }

  private atNewline(): boolean {
    return this.peek() === '\n' || (this.peek() === '\r' && this.peek(1) === '\n');
  }

  private consumeNewline(): void {
    this.pos += this.peek() === '\r' ? 2 : 1;
  }

  private skipComment(): void {
    this.pos++; // '#'
    while (this.pos < this.text.length && !this.atNewline()) {
      const code = this.text.charCodeAt(this.pos);
      if (isControl(code, true)) {
        this.fail(`${describeChar(this.peek())} is not allowed in a comment`);
      }
      this.pos++;
    }
  }

  /** After an expression: spaces, an optional comment, then a line break or the end. */
  private endOfLine(): void {
    this.skipSpaces();
    if (this.peek() === '#') this.skipComment();
    if (this.pos >= this.text.length) return;
    if (!this.atNewline()) {
      this.fail(`expected a line break after the value, found ${describeChar(this.peek())}`);
    }
    this.consumeNewline();
  }

  // --- Keys ---

  private simpleKey(): string {
    const char = this.peek();
    if (char === '"') {
      if (this.text.startsWith('"""', this.pos)) this.fail('a key cannot be a multi-line string');
      return this.basicString();
    }
    if (char === "'") {
      if (this.text.startsWith("'''", this.pos)) this.fail('a key cannot be a multi-line string');
      return this.literalString();
    }
    const start = this.pos;
    while (this.pos < this.text.length && BARE_KEY.test(this.text[this.pos] ?? '')) this.pos++;
    if (this.pos === start) this.fail(`expected a key, found ${describeChar(char)}`);
    return this.text.slice(start, this.pos);
  }

  private key(): string[] {
    const parts = [this.simpleKey()];
    for (;;) {
      const save = this.pos;
      this.skipSpaces();
      if (this.peek() !== '.') {
        this.pos = save;
        return parts;
      }
      this.pos++;
      this.skipSpaces();
      parts.push(this.simpleKey());
    }
  }

  // --- Tables ---

  private header(): void {
    const start = this.pos;
    const isArray = this.peek(1) === '[';
    this.pos += isArray ? 2 : 1;
    this.skipSpaces();
    const keyParts = this.key();
    this.skipSpaces();
    if (isArray) {
      if (!this.text.startsWith(']]', this.pos)) {
        this.fail(`expected ']]' to close the array-of-tables header`);
      }
      this.pos += 2;
    } else {
      if (this.peek() !== ']') this.fail(`expected ']' to close the table header`);
      this.pos++;
    }
    const line = this.lineAt(start);
    closeSection(this.currentSeen);
    const seen = this.trackHeader(keyParts, isArray, start);
    this.currentSeen = seen;
    this.current = this.placeHeader(keyParts, isArray, line);
  }

  private trackHeader(keyParts: readonly string[], isArray: boolean, at: number): Seen {
    let parent = this.seenRoot;
    for (const part of keyParts.slice(0, -1)) {
      let child = parent.children.get(part);
      if (child === undefined) {
        child = seenNode('table', false, false);
        parent.children.set(part, child);
      } else if (child.kind === 'value') {
        this.fail(`"${part}" is a value, not a table`, at);
      }
      parent = child;
    }
    const last = keyParts[keyParts.length - 1] ?? '';
    const existing = parent.children.get(last);
    const name = keyParts.join('.');
    if (isArray) {
      if (existing === undefined) {
        const created = seenNode('array-table', true, false);
        parent.children.set(last, created);
        return created;
      }
      if (existing.kind !== 'array-table') {
        this.fail(`[[${name}]]: "${name}" is already defined as a ${existing.kind}`, at);
      }
      existing.children.clear();
      return existing;
    }
    if (existing === undefined) {
      const created = seenNode('table', true, false);
      parent.children.set(last, created);
      return created;
    }
    if (existing.kind !== 'table') {
      this.fail(`[${name}]: "${name}" is already defined as a ${existing.kind}`, at);
    }
    if (existing.explicit) this.fail(`table [${name}] is defined twice`, at);
    existing.explicit = true;
    return existing;
  }

  private placeHeader(keyParts: readonly string[], isArray: boolean, line: number): TomlTable {
    let table = this.root;
    for (const part of keyParts.slice(0, -1)) table = this.descend(table, part, line);
    const last = keyParts[keyParts.length - 1] ?? '';
    const existing = table.entries.get(last);
    if (isArray) {
      const element: TomlTable = { kind: 'table', line, entries: new Map(), inline: false };
      if (existing?.kind === 'table-array') existing.tables.push(element);
      else table.entries.set(last, { kind: 'table-array', line, tables: [element] });
      return element;
    }
    if (existing?.kind === 'table') return existing;
    const created: TomlTable = { kind: 'table', line, entries: new Map(), inline: false };
    table.entries.set(last, created);
    return created;
  }

  /** The table under `part` (the last element of an array of tables), created when absent. */
  private descend(table: TomlTable, part: string, line: number): TomlTable {
    const existing = table.entries.get(part);
    if (existing?.kind === 'table') return existing;
    if (existing?.kind === 'table-array') {
      const last = existing.tables[existing.tables.length - 1];
      if (last) return last;
    }
    if (existing !== undefined) this.fail(`"${part}" is not a table`);
    const created: TomlTable = { kind: 'table', line, entries: new Map(), inline: false };
    table.entries.set(part, created);
    return created;
  }

  // --- Key/value pairs ---

  private keyValueLine(): void {
    this.keyValue(this.current, this.currentSeen, 0);
  }

  private keyValue(table: TomlTable, seen: Seen, depth: number): void {
    const start = this.pos;
    const keyParts = this.key();
    this.skipSpaces();
    if (this.peek() !== '=') {
      this.fail(
        `expected '=' after the key "${keyParts.join('.')}", found ${describeChar(this.peek())}`
      );
    }
    this.pos++;
    this.skipSpaces();
    const line = this.lineAt(start);
    this.trackKey(keyParts, seen, start);
    let target = table;
    for (const part of keyParts.slice(0, -1)) target = this.descend(target, part, line);
    const value = this.value(line, depth);
    target.entries.set(keyParts[keyParts.length - 1] ?? '', value);
  }

  private trackKey(keyParts: readonly string[], start: Seen, at: number): void {
    let parent = start;
    keyParts.forEach((part, index) => {
      const isLast = index === keyParts.length - 1;
      const existing = parent.children.get(part);
      const name = keyParts.slice(0, index + 1).join('.');
      if (existing === undefined) {
        const created = seenNode(isLast ? 'value' : 'table', false, true);
        parent.children.set(part, created);
        parent = created;
        return;
      }
      if (isLast) this.fail(`the key "${name}" is defined twice`, at);
      if (existing.kind !== 'table') this.fail(`"${name}" is a ${existing.kind}, not a table`, at);
      if (existing.explicit) {
        this.fail(
          `dotted key "${keyParts.join('.')}" extends table "${name}", which is already defined`,
          at
        );
      }
      parent = existing;
    });
  }

  // --- Values ---

  private value(line: number, depth: number): TomlNode {
    if (depth > MAX_NESTING) this.fail('values are nested too deeply');
    const char = this.peek();
    if (char === undefined || this.atNewline() || char === '#') {
      this.fail('expected a value');
    }
    if (char === '"') {
      const text = this.text.startsWith('"""', this.pos)
        ? this.multilineBasicString()
        : this.basicString();
      return { kind: 'string', line, value: text };
    }
    if (char === "'") {
      const text = this.text.startsWith("'''", this.pos)
        ? this.multilineLiteralString()
        : this.literalString();
      return { kind: 'string', line, value: text };
    }
    if (char === '[') return this.array(line, depth);
    if (char === '{') return this.inlineTable(line, depth);
    return this.bareValue(line);
  }

  private bareValue(line: number): TomlScalar {
    const start = this.pos;
    while (this.pos < this.text.length && !/[\s,\]}#]/.test(this.text[this.pos] ?? '')) this.pos++;
    let token = this.text.slice(start, this.pos);
    // A date, a space, then a time: one offset or local date-time.
    if (DATE.test(token) && this.peek() === ' ' && /^\d{2}:/.test(this.text.slice(this.pos + 1))) {
      this.pos++;
      while (this.pos < this.text.length && !/[\s,\]}#]/.test(this.text[this.pos] ?? '')) {
        this.pos++;
      }
      token = this.text.slice(start, this.pos);
    }
    if (token === '') this.fail(`expected a value, found ${describeChar(this.peek())}`, start);
    if (token === 'true' || token === 'false') {
      return { kind: 'boolean', line, value: token === 'true' };
    }
    if (DEC_INT.test(token) || HEX_INT.test(token) || OCT_INT.test(token) || BIN_INT.test(token)) {
      const integer = integerValue(token);
      if (integer < INT64_MIN || integer > INT64_MAX) {
        this.fail(`the integer ${token} does not fit in 64 bits`, start);
      }
      return { kind: 'integer', line, value: token, integer };
    }
    if (FLOAT.test(token) || SPECIAL_FLOAT.test(token))
      return { kind: 'float', line, value: token };
    return this.dateTime(token, line, start);
  }

  private dateTime(token: string, line: number, start: number): TomlScalar {
    if (DATE.test(token)) {
      if (!validDate(token)) this.fail(`${token} is not a valid date`, start);
      return { kind: 'local-date', line, value: token };
    }
    if (TIME.test(token)) {
      if (!validTime(token)) this.fail(`${token} is not a valid time`, start);
      return { kind: 'local-time', line, value: token };
    }
    const match = DATE_TIME.exec(token);
    if (match) {
      const [, date = '', time = '', offset] = match;
      if (!validDate(date) || !validTime(time) || (offset !== undefined && !validOffset(offset))) {
        this.fail(`${token} is not a valid date-time`, start);
      }
      return {
        kind: offset === undefined ? 'local-datetime' : 'offset-datetime',
        line,
        value: token,
      };
    }
    if (/^\d{2}:\d{2}$/.test(token) || /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(?!:)/.test(token)) {
      this.fail(`${token}: times need seconds in TOML 1.0 (the version Karpenter parses)`, start);
    }
    this.fail(`"${token}" is not a valid value (strings must be quoted)`, start);
  }

  private array(line: number, depth: number): TomlArray {
    this.pos++; // '['
    const items: TomlNode[] = [];
    for (;;) {
      this.skipBlank();
      if (this.peek() === ']') {
        this.pos++;
        return { kind: 'array', line, items };
      }
      items.push(this.value(this.lineAt(this.pos), depth + 1));
      this.skipBlank();
      if (this.peek() === ',') {
        this.pos++;
        continue;
      }
      if (this.peek() === ']') {
        this.pos++;
        return { kind: 'array', line, items };
      }
      this.fail(`expected ',' or ']' in the array, found ${describeChar(this.peek())}`);
    }
  }

  /** Spaces, line breaks and comments (inside arrays). */
  private skipBlank(): void {
    for (;;) {
      this.skipSpaces();
      if (this.atNewline()) this.consumeNewline();
      else if (this.peek() === '#') this.skipComment();
      else return;
    }
  }

  private inlineTable(line: number, depth: number): TomlTable {
    this.pos++; // '{'
    const table: TomlTable = { kind: 'table', line, entries: new Map(), inline: true };
    const seen = seenNode('table', true, false);
    this.skipSpaces();
    if (this.peek() === '}') {
      this.pos++;
      return table;
    }
    for (;;) {
      this.inlineSpaces();
      this.keyValue(table, seen, depth + 1);
      this.inlineSpaces();
      const char = this.peek();
      if (char === '}') {
        this.pos++;
        return table;
      }
      if (char !== ',') {
        this.fail(`expected ',' or '}' in the inline table, found ${describeChar(char)}`);
      }
      this.pos++;
      this.inlineSpaces();
      if (this.peek() === '}') {
        this.fail('a trailing comma is not allowed in an inline table (TOML 1.0)');
      }
    }
  }

  private inlineSpaces(): void {
    this.skipSpaces();
    if (this.atNewline() || this.peek() === '\r') {
      this.fail('an inline table must be on one line (TOML 1.0)');
    }
  }

  // --- Strings ---

  private basicString(): string {
    this.pos++; // '"'
    let out = '';
    for (;;) {
      const char = this.peek();
      if (char === undefined || char === '\n' || char === '\r') {
        this.fail('unterminated string: a "..." string must end on the same line');
      }
      if (char === '"') {
        this.pos++;
        return out;
      }
      if (char === '\\') {
        out += this.escape();
        continue;
      }
      if (isControl(this.text.charCodeAt(this.pos), true)) {
        this.fail(`${describeChar(char)} must be escaped in a string`);
      }
      out += char;
      this.pos++;
    }
  }

  private escape(): string {
    const at = this.pos;
    const code = this.peek(1);
    this.pos += 2;
    switch (code) {
      case 'b':
        return '\b';
      case 't':
        return '\t';
      case 'n':
        return '\n';
      case 'f':
        return '\f';
      case 'r':
        return '\r';
      case '"':
        return '"';
      case '\\':
        return '\\';
      case 'u':
      case 'U': {
        const length = code === 'u' ? 4 : 8;
        const hex = this.text.slice(this.pos, this.pos + length);
        if (hex.length !== length || !HEX.test(hex)) {
          this.fail(`\\${code} needs ${length} hexadecimal digits`, at);
        }
        const scalar = Number.parseInt(hex, 16);
        if (scalar > 0x10ffff || (scalar >= 0xd800 && scalar <= 0xdfff)) {
          this.fail(`\\${code}${hex} is not a Unicode scalar value`, at);
        }
        this.pos += length;
        return String.fromCodePoint(scalar);
      }
      default:
        return this.fail(
          `invalid escape \\${code ?? ''} (TOML 1.0 allows \\b \\t \\n \\f \\r \\" \\\\ \\uXXXX \\UXXXXXXXX)`,
          at
        );
    }
  }

  private literalString(): string {
    this.pos++; // "'"
    const start = this.pos;
    for (;;) {
      const char = this.peek();
      if (char === undefined || char === '\n' || char === '\r') {
        this.fail("unterminated string: a '...' string must end on the same line");
      }
      if (char === "'") {
        this.pos++;
        return this.text.slice(start, this.pos - 1);
      }
      if (isControl(this.text.charCodeAt(this.pos), true)) {
        this.fail(`${describeChar(char)} is not allowed in a literal string`);
      }
      this.pos++;
    }
  }

  /** After the opening delimiter, a line break right away is not part of the string. */
  private skipFirstNewline(): void {
    if (this.atNewline()) this.consumeNewline();
  }

  /** At a run of quotes: the content quotes (at most 2) when the run closes the string. */
  private closingRun(quote: string): string | undefined {
    let run = 0;
    while (this.peek(run) === quote) run++;
    if (run < 3) return undefined;
    if (run > 5) this.fail(`too many ${quote} characters at the end of a multi-line string`);
    this.pos += run;
    return quote.repeat(run - 3);
  }

  private multilineBasicString(): string {
    const open = this.pos;
    this.pos += 3;
    this.skipFirstNewline();
    let out = '';
    for (;;) {
      const char = this.peek();
      if (char === undefined) this.fail('unterminated multi-line string', open);
      if (char === '"') {
        const tail = this.closingRun('"');
        if (tail !== undefined) return out + tail;
        out += char;
        this.pos++;
        continue;
      }
      if (char === '\\') {
        if (this.lineEndingBackslash()) continue;
        out += this.escape();
        continue;
      }
      if (this.atNewline()) {
        out += '\n';
        this.consumeNewline();
        continue;
      }
      if (isControl(this.text.charCodeAt(this.pos), true)) {
        this.fail(`${describeChar(char)} must be escaped in a string`);
      }
      out += char;
      this.pos++;
    }
  }

  /** `\` then optional spaces and a line break: trims everything up to the next text. */
  private lineEndingBackslash(): boolean {
    let probe = this.pos + 1;
    while (this.text[probe] === ' ' || this.text[probe] === '\t') probe++;
    const atBreak =
      this.text[probe] === '\n' || (this.text[probe] === '\r' && this.text[probe + 1] === '\n');
    if (!atBreak) return false;
    this.pos = probe;
    for (;;) {
      if (this.atNewline()) this.consumeNewline();
      else if (this.peek() === ' ' || this.peek() === '\t') this.pos++;
      else return true;
    }
  }

  private multilineLiteralString(): string {
    const open = this.pos;
    this.pos += 3;
    this.skipFirstNewline();
    let out = '';
    for (;;) {
      const char = this.peek();
      if (char === undefined) this.fail('unterminated multi-line string', open);
      if (char === "'") {
        const tail = this.closingRun("'");
        if (tail !== undefined) return out + tail;
        out += char;
        this.pos++;
        continue;
      }
      if (this.atNewline()) {
        out += '\n';
        this.consumeNewline();
        continue;
      }
      if (isControl(this.text.charCodeAt(this.pos), true)) {
        this.fail(`${describeChar(char)} is not allowed in a literal string`);
      }
      out += char;
      this.pos++;
    }
  }
}

/** Parses `text` as TOML 1.0; the first error (with its 1-based line and column) on failure. */
export function parseToml(text: string): TomlParseResult {
  const reader = new Reader(text);
  try {
    return { ok: true, root: reader.parse() };
  } catch (error) {
    if (!(error instanceof TomlFailure)) throw error;
    const { line, column } = reader.position(error.at);
    return { ok: false, error: { line, column, message: error.message } };
  }
}
