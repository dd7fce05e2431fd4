/**
 * A small, strict XML 1.0 well-formedness parser for the subset JUnit output uses (declaration,
 * elements, attributes, text, character and predefined entity references, comments). It throws on
 * anything not well-formed, so tests can parse output back instead of trusting string building.
 */
export interface XmlNode {
  readonly name: string;
  readonly attributes: Readonly<Record<string, string>>;
  readonly children: readonly XmlNode[];
  /** Concatenated, decoded character data directly inside this element. */
  readonly text: string;
}

const NAME = /[A-Za-z_:][-A-Za-z0-9._:]*/y;
const PREDEFINED: Readonly<Record<string, string>> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
};

/** XML 1.0 `Char` production. */
function isXmlChar(codePoint: number): boolean {
  return (
    codePoint === 0x9 ||
    codePoint === 0xa ||
    codePoint === 0xd ||
    (codePoint >= 0x20 && codePoint <= 0xd7ff) ||
    (codePoint >= 0xe000 && codePoint <= 0xfffd) ||
    (codePoint >= 0x10000 && codePoint <= 0x10ffff)
  );
}

class XmlSyntaxError extends Error {
  public constructor(message: string, offset: number) {
    super(`${message} at offset ${offset}`);
    this.name = 'XmlSyntaxError';
  }
}

export function parseXml(input: string): XmlNode {
  for (const char of input) {
    const codePoint = char.codePointAt(0) ?? 0;
    // A lone surrogate shows up here as a code point in the surrogate range.
    if (!isXmlChar(codePoint)) {
      throw new XmlSyntaxError(
        `character U+${codePoint.toString(16)} is not allowed in XML 1.0`,
        0
      );
    }
  }
  let position = 0;

  const fail = (message: string): never => {
    throw new XmlSyntaxError(message, position);
  };
  const startsWith = (text: string) => input.startsWith(text, position);
  const skipSpace = () => {
    while (position < input.length && /[ \t\r\n]/.test(input[position] ?? '')) position += 1;
  };
  const readName = (): string => {
    NAME.lastIndex = position;
    const match = NAME.exec(input);
    if (!match) return fail('expected a name');
    position += match[0].length;
    return match[0];
  };
  const decode = (raw: string, inAttribute: boolean): string => {
    if (raw.includes('<')) fail('"<" must be escaped');
    if (!inAttribute && raw.includes(']]>')) fail('"]]>" must be escaped');
    return raw.replace(/&([^;]*);|&/g, (whole, body: string | undefined) => {
      if (body === undefined) return fail('"&" must start a reference ending in ";"');
      const named = PREDEFINED[body];
      if (named !== undefined) return named;
      const numeric = /^#(?:x([0-9a-fA-F]+)|([0-9]+))$/.exec(body);
      if (!numeric) return fail(`unknown entity ${whole}`);
      const codePoint = numeric[1] ? Number.parseInt(numeric[1], 16) : Number(numeric[2]);
      if (!isXmlChar(codePoint)) return fail(`reference ${whole} names a forbidden character`);
      return String.fromCodePoint(codePoint);
    });
  };
  const skipMisc = () => {
    for (;;) {
      skipSpace();
      if (startsWith('<!--')) {
        const end = input.indexOf('-->', position + 4);
        if (end < 0) fail('unterminated comment');
        if (input.slice(position + 4, end).includes('--')) fail('"--" inside a comment');
        position = end + 3;
      } else return;
    }
  };

  const parseElement = (): XmlNode => {
    if (!startsWith('<')) fail('expected "<"');
    position += 1;
    const name = readName();
    const attributes: Record<string, string> = {};
    for (;;) {
      const hadSpace = /[ \t\r\n]/.test(input[position] ?? '');
      skipSpace();
      if (startsWith('/>')) {
        position += 2;
        return { name, attributes, children: [], text: '' };
      }
      if (startsWith('>')) {
        position += 1;
        break;
      }
      if (!hadSpace) fail('attributes must be separated by whitespace');
      const attribute = readName();
      if (Object.hasOwn(attributes, attribute)) fail(`duplicate attribute ${attribute}`);
      skipSpace();
      if (!startsWith('=')) fail('expected "="');
      position += 1;
      skipSpace();
      const quote = input[position];
      if (quote !== '"' && quote !== "'") return fail('attribute value must be quoted');
      const end = input.indexOf(quote, position + 1);
      if (end < 0) fail('unterminated attribute value');
      attributes[attribute] = decode(input.slice(position + 1, end), true);
      position = end + 1;
    }
    const children: XmlNode[] = [];
    let text = '';
    for (;;) {
      if (position >= input.length) fail(`unclosed element <${name}>`);
      if (startsWith('</')) {
        position += 2;
        const closing = readName();
        if (closing !== name) fail(`</${closing}> closes <${name}>`);
        skipSpace();
        if (!startsWith('>')) fail('expected ">"');
        position += 1;
        return { name, attributes, children, text };
      }
      if (startsWith('<!--')) {
        skipMisc();
        continue;
      }
      if (startsWith('<')) {
        children.push(parseElement());
        continue;
      }
      const next = input.indexOf('<', position);
      const end = next < 0 ? input.length : next;
      text += decode(input.slice(position, end), false);
      position = end;
    }
  };

  if (startsWith('<?xml')) {
    const end = input.indexOf('?>');
    if (end < 0) fail('unterminated XML declaration');
    if (!/^<\?xml version="1\.0"( encoding="UTF-8")?\?>$/.test(input.slice(0, end + 2))) {
      fail('unexpected XML declaration');
    }
    position = end + 2;
  }
  skipMisc();
  const root = parseElement();
  skipMisc();
  if (position !== input.length) fail('content after the root element');
  return root;
}

/** All descendants (and the node itself) with this element name, in document order. */
export function findAll(node: XmlNode, name: string): XmlNode[] {
  return [
    ...(node.name === name ? [node] : []),
    ...node.children.flatMap((child) => findAll(child, name)),
  ];
}
