import { visibleEscape } from '../terminal.js';

// Characters XML 1.0 cannot carry at all, not even as character references: C0 controls other than
// tab/LF/CR, lone surrogates (the `u` flag makes a valid pair one code point), U+FFFE and U+FFFF.
// Also DEL, C1 and bidi controls: legal XML, but a report is read in terminals and CI pages too.
const FORBIDDEN =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u061C\u200E\u200F\u2028-\u202E\u2066-\u2069\uFFFE\uFFFF]|[\uD800-\uDFFF]/gu;

/**
 * Makes text safe for XML 1.0: forbidden characters become a visible `\uXXXX`, markup is escaped,
 * and a carriage return is kept as a reference (parsers would fold it into a line feed).
 */
export function escapeXmlText(text: string): string {
  return text
    .replace(FORBIDDEN, visibleEscape)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/\r/g, '&#13;');
}

/** As `escapeXmlText`, for a double-quoted attribute; whitespace is kept as references so it survives. */
export function escapeXmlAttribute(text: string): string {
  return escapeXmlText(text).replace(/"/g, '&quot;').replace(/\t/g, '&#9;').replace(/\n/g, '&#10;');
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
