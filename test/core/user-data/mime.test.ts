// MIME userData read as Karpenter reads it (Go's net/mail, mime and mime/multipart): what it
// accepts, what it refuses, and where.
import { describe, expect, it } from 'vitest';
import {
  looksLikeMime,
  parseMediaType,
  readMultipart,
} from '../../../lambda/core/user-data/mime.js';

const HEAD = 'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="//"\n\n';

describe('parseMediaType (Go mime.ParseMediaType)', () => {
  it.each([
    ['multipart/mixed; boundary="//"', 'multipart/mixed', '//'],
    ['Multipart/Mixed; BOUNDARY=simple', 'multipart/mixed', 'simple'],
    ['multipart/mixed; boundary="a b";', 'multipart/mixed', 'a b'],
    ["multipart/mixed; boundary*=us-ascii'en'%2F%2F", 'multipart/mixed', '//'],
    ['multipart/mixed; boundary*0="a"; boundary*1="b"', 'multipart/mixed', 'ab'],
  ])('reads %s', (header, mediaType, boundary) => {
    const result = parseMediaType(header);
    expect(result.ok && [result.mediaType, result.params.get('boundary')]).toEqual([
      mediaType,
      boundary,
    ]);
  });

  it.each([
    ['', 'no media type'],
    ['multipart', undefined],
    ['multipart mixed', 'expected a slash after the type'],
    ['multipart/', 'expected a subtype after the slash'],
    ['multipart/mixed; boundary=//', 'invalid media type parameter'],
    ['multipart/mixed; boundary="unterminated', 'invalid media type parameter'],
    ['multipart/mixed; boundary=a; boundary=b', 'duplicate parameter "boundary"'],
  ])('refuses %j', (header, message) => {
    const result = parseMediaType(header);
    if (message === undefined) {
      expect(result.ok).toBe(true);
      return;
    }
    expect(result).toEqual({ ok: false, message: expect.stringContaining(message) });
  });
});

describe('readMultipart (what Karpenter can merge)', () => {
  it('reads the parts of Karpenter’s documented MIME example, headers canonicalised', () => {
    // Prepare
    const text = `${HEAD}--//\ncontent-type: text/x-shellscript; charset="us-ascii"\n\n#!/bin/bash\necho hi\n\n--//\nContent-Type: application/node.eks.aws\n\nkind: NodeConfig\n--//\n`;

    // Act
    const result = readMultipart(text);

    // Assess
    expect(result).toEqual({
      ok: true,
      parts: [
        {
          headers: [['Content-Type', 'text/x-shellscript; charset="us-ascii"']],
          body: '#!/bin/bash\necho hi\n',
          line: 4,
        },
        {
          headers: [['Content-Type', 'application/node.eks.aws']],
          body: 'kind: NodeConfig',
          line: 10,
        },
      ],
    });
  });

  it('accepts CRLF line ends, a preamble, continued headers and an empty part', () => {
    const text =
      'MIME-Version: 1.0\r\nContent-Type: multipart/mixed;\r\n boundary="==B=="\r\n\r\npreamble\r\n--==B==\r\nContent-Type: text/x-shellscript\r\n\r\necho\r\n--==B==\r\n\r\n--==B==--\r\n';
    const result = readMultipart(text);
    expect(result.ok && result.parts.map((part) => part.body)).toEqual(['echo', '']);
  });

  it('ends at a final boundary without a line break, and at part headers that reach the end', () => {
    expect(readMultipart(`${HEAD}--//\n\necho\n--//--`).ok).toBe(true);
    const trailing = readMultipart(`${HEAD}--//\n\necho\n--//\nContent-Type: text/plain`);
    expect(trailing.ok && trailing.parts.length).toBe(1);
  });

  it.each([
    ['a first line that starts with a space', ` ${HEAD}`, 1, 'starts with a space'],
    ['a header without a colon', 'MIME-Version 1.0\n', 1, 'without a colon'],
    ['a leading empty line (no headers at all)', `\n${HEAD}`, 1, 'no Content-Type header'],
    ['an unquoted "/" boundary', HEAD.replace('"//"', '//'), 2, 'quote the boundary'],
    ['no boundary parameter', HEAD.replace('; boundary="//"', ''), 2, 'no boundary parameter'],
    ['no boundary line at all', `${HEAD}echo hi\n`, 5, 'has no parts'],
    [
      'a part without its empty line',
      `${HEAD}--//\nContent-Type: x\necho hi\n--//--\n`,
      6,
      '"echo hi" is not a header line',
    ],
    [
      'a part header with a space before the colon',
      `${HEAD}--//\nContent-Type : x\n\necho\n--//--\n`,
      5,
      'malformed header line',
    ],
    ['a part that never ends', `${HEAD}--//\n\necho hi\n`, 4, 'never ends'],
    [
      'a document that stops after a boundary',
      `${HEAD}--//\n\necho\n--//`,
      7,
      'ends without its closing "--//--" line',
    ],
    ['text after a boundary', `${HEAD}--//\n\necho\n--// x\n`, 7, 'expected a new part'],
  ])('refuses %s, at its line', (_label, text, line, message) => {
    const result = readMultipart(text);
    expect(result).toEqual({ ok: false, line, message: expect.stringContaining(message) });
  });

  it('detects MIME the way Karpenter does (trimmed prefix)', () => {
    expect(looksLikeMime('  \nMIME-Version: 1.0\n')).toBe(true);
    expect(looksLikeMime('Content-Type: multipart/mixed\n')).toBe(true);
    expect(looksLikeMime('#!/bin/bash\n')).toBe(false);
  });
});
