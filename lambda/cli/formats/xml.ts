// Characters XML 1.0 cannot carry at all, not even as character references: C0 controls other than
// tab/LF/CR, lone surrogates (the `u` flag makes a valid pair one code point), U+FFFE and U+FFFF.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const FORBIDDEN = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDFFF]/gu;

/** Makes text safe for XML 1.0: forbidden characters become a visible `\uXXXX`, markup is escaped. */
export function escapeXmlText(text: string): string {
  return text
    .replace(
      FORBIDDEN,
      (char) => `\\u${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`
    )
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;');
}

/** As `escapeXmlText`, for a double-quoted attribute; whitespace is kept as references so it survives. */
export function escapeXmlAttribute(text: string): string {
  return escapeXmlText(text)
    .replace(/"/g, '&quot;')
    .replace(/\t/g, '&#9;')
    .replace(/\n/g, '&#10;')
    .replace(/\r/g, '&#13;');
}

export type XmlAttributes = Readonly<Record<string, string | number | undefined>>;

function attributes(attrs: XmlAttributes): string {
  return Object.entries(attrs)
    .filter((entry): entry is [string, string | number] => entry[1] !== undefined)
    .map(([name, value]) => ` ${name}="${escapeXmlAttribute(String(value))}"`)
    .join('');
}

/** One element; `children` is already-serialised XML, `text` is escaped here. */
export function xmlElement(
  name: string,
  attrs: XmlAttributes,
  content: { readonly text?: string; readonly children?: readonly string[] } = {}
): string {
  const body = content.text !== undefined ? escapeXmlText(content.text) : '';
  const children = content.children ?? [];
  if (body === '' && children.length === 0) return `<${name}${attributes(attrs)}/>`;
  if (children.length === 0) return `<${name}${attributes(attrs)}>${body}</${name}>`;
  // Not indented: re-indenting children would change the text inside multi-line elements.
  return `<${name}${attributes(attrs)}>${body}\n${children.join('\n')}\n</${name}>`;
}
