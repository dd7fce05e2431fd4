import { describe, expect, it } from 'vitest';
import { escapeXmlAttribute, escapeXmlText, xmlElement } from '../../../lambda/cli/formats/xml.js';
import { parseXml } from '../support/strict-xml.js';

describe('XML escaping', () => {
  it('escapes markup in text and attributes', () => {
    expect(escapeXmlText('a < b && c > d')).toBe('a &lt; b &amp;&amp; c &gt; d');
    expect(escapeXmlAttribute('say "hi" <now>')).toBe('say &quot;hi&quot; &lt;now&gt;');
  });

  it('replaces characters XML 1.0 forbids with a visible escape', () => {
    expect(escapeXmlText('nul\u0000 bell\u0007 esc\u001b ffff\uffff')).toBe(
      'nul\\u0000 bell\\u0007 esc\\u001B ffff\\uFFFF'
    );
    expect(escapeXmlText('lone \ud800 surrogate')).toBe('lone \\uD800 surrogate');
  });

  it('keeps valid astral characters and allowed whitespace', () => {
    expect(escapeXmlText('emoji 😀 tab\tnewline\n')).toBe('emoji 😀 tab\tnewline\n');
  });

  it('keeps tabs and newlines in attributes as character references', () => {
    expect(escapeXmlAttribute('a\tb\nc\rd')).toBe('a&#9;b&#10;c&#13;d');
  });

  it('round-trips hostile text through a strict parser', () => {
    const hostile = 'x]]>y <!-- &amp; "\'\u0000\n\t😀';
    const parsed = parseXml(xmlElement('e', { a: hostile }, { text: hostile }));
    expect(parsed.attributes.a).toBe('x]]>y <!-- &amp; "\'\\u0000\n\t😀');
    expect(parsed.text).toBe('x]]>y <!-- &amp; "\'\\u0000\n\t😀');
  });
});

describe('strict XML parser (test support)', () => {
  it.each([
    ['unescaped <', '<a>x < y</a>'],
    ['bare &', '<a>x & y</a>'],
    ['unknown entity', '<a>&nbsp;</a>'],
    ['mismatched tag', '<a><b></a></b>'],
    ['unclosed element', '<a><b></b>'],
    ['two roots', '<a/><b/>'],
    ['duplicate attribute', '<a x="1" x="2"/>'],
    ['unquoted attribute', '<a x=1/>'],
    ['forbidden character', '<a>\u0001</a>'],
    ['forbidden character reference', '<a>&#1;</a>'],
    ['lone surrogate', '<a>\ud800</a>'],
    ['"]]>" in text', '<a>]]></a>'],
  ])('rejects %s', (_, xml) => {
    expect(() => parseXml(xml)).toThrow();
  });

  it('parses well-formed XML with declaration, attributes and entities', () => {
    const node = parseXml(
      '<?xml version="1.0" encoding="UTF-8"?>\n<a x="1 &amp; 2"><b>&lt;&#x41;&#66;</b><!-- c --><b/></a>\n'
    );
    expect(node.attributes).toEqual({ x: '1 & 2' });
    expect(node.children.map((child) => child.text)).toEqual(['<AB', '']);
  });
});
