import { describe, expect, it } from 'vitest';
import {
  emailSubject,
  markdownBlocks,
  sanitizeDeep,
  sanitizeText,
  shortenAtWord,
  truncateText,
  utf8Length,
} from '../../../lambda/core/notify/sanitize.js';

describe('sanitizeText', () => {
  it('neutralises Slack broadcast and user mentions', () => {
    // Prepare
    const hostile =
      '<!channel> <!here> <!everyone> @here @Channel @everyone <@U024BE7LH> <#C123|general>';
    // Act
    const clean = sanitizeText(hostile, { maxLength: 500 });
    // Assess
    expect(clean).not.toMatch(/<|>/);
    expect(clean).not.toMatch(/@(here|channel|everyone)/i);
    expect(clean).toContain('＠here');
    expect(clean).toContain('‹!channel›');
  });

  it('removes control, zero-width and bidi characters, and flattens lines unless multiline', () => {
    const text = 'a\u0000b\u0007c\u200bd\u202ee\u001bf\ng\r\nh\ti';
    expect(sanitizeText(text, { maxLength: 100 })).toBe('abcdef g h i');
    expect(sanitizeText(text, { maxLength: 100, multiline: true })).toBe('abcdef\ng\nh i');
  });

  it('neutralises links and markdown formatting in markdown mode only', () => {
    const text = '<https://evil.example|click> [here](https://evil) *bold* `code` ~x~ a|b';
    const plain = sanitizeText(text, { maxLength: 200 });
    const markdown = sanitizeText(text, { maxLength: 200, markdown: true });
    expect(plain).toContain('*bold*');
    expect(markdown).not.toMatch(/[<>[\]*`~|]/);
  });

  it('caps the length with an ellipsis', () => {
    expect(sanitizeText('x'.repeat(50), { maxLength: 10 })).toBe(`${'x'.repeat(9)}…`);
    expect(truncateText('abc', 3)).toBe('abc');
    expect(truncateText('abc', 0)).toBe('');
  });

  it('is idempotent', () => {
    const once = sanitizeText('<!channel> @here *x* [y]', { maxLength: 100, markdown: true });
    expect(sanitizeText(once, { maxLength: 100, markdown: true })).toBe(once);
  });
});

describe('sanitizeDeep', () => {
  it('sanitises keys and string values at any depth and bounds arrays and depth', () => {
    const value = {
      tags: { '<!here>': '<!channel> @here \u0000 x' },
      list: Array.from({ length: 60 }, (_, i) => i),
      deep: { a: { b: { c: { d: { e: { f: 'too deep' } } } } } },
      ok: true,
      n: null,
    };
    const clean = sanitizeDeep(value) as Record<string, unknown>;
    expect(JSON.stringify(clean)).not.toMatch(/<!|@here|\\u0000/);
    expect((clean.list as unknown[]).length).toBe(51);
    expect((clean.list as unknown[])[50]).toBe('[10 more]');
    expect(JSON.stringify(clean.deep)).toContain('[nested too deep]');
    expect(clean.ok).toBe(true);
    expect(clean.n).toBeNull();
  });
});

describe('sanitizeDeep with IAM policies', () => {
  it('keeps a policy document whole below the evidence depth limit (no nested too deep in a condition)', () => {
    // Prepare: evidence → policy → Statement → statement → Condition → operator → key → values
    const policy = {
      Version: '2012-10-17',
      Statement: [
        {
          Effect: 'Allow',
          Action: Array.from({ length: 60 }, (_, i) => `ec2:Action${i}`),
          Resource: ['*'],
          Condition: { StringEquals: { 'ec2:CreateAction': ['RunInstances', 'CreateFleet'] } },
        },
      ],
    };
    // Act
    const clean = sanitizeDeep({ wrapper: { remediationPolicy: policy } });
    // Assess
    expect(clean).toEqual({ wrapper: { remediationPolicy: policy } });
  });
});

describe('shortenAtWord', () => {
  it('cuts after the last space or path separator that fits, never inside a word', () => {
    expect(shortenAtWord('alpha beta gamma', 12, '...')).toBe('alpha...');
    expect(shortenAtWord('on prod/EC2NodeClass/default', 24, '...')).toBe(
      'on prod/EC2NodeClass/...'
    );
    expect(shortenAtWord('short', 12, '...')).toBe('short');
    expect(shortenAtWord('x'.repeat(20), 10, '...')).toBe('xxxxxxx...');
  });
});

describe('markdownBlocks', () => {
  it('fences code verbatim (brackets, asterisks) and neutralises mentions, text and fence breaks', () => {
    // Act
    const text = markdownBlocks(
      ['*Fix* [here]', { code: '{"Action":["s3:*"],"Note":"``` <!channel> @here"}' }],
      500
    );
    // Assess
    const [prose, ...rest] = text.split('\n');
    expect(prose).toBe('∗Fix∗ ［here］');
    const code = rest.slice(1, -1).join('\n');
    expect(rest[0]).toBe('```');
    expect(rest.at(-1)).toBe('```');
    expect(JSON.parse(code)).toEqual({ Action: ['s3:*'], Note: 'ˋˋˋ ‹!channel› ＠here' });
  });

  it('leaves out a code block that does not fit whole, and says so', () => {
    const text = markdownBlocks(['Policy:', { code: 'x'.repeat(200) }], 100);
    expect(text).not.toContain('```');
    expect(text).toContain('too long for chat');
  });
});

describe('emailSubject', () => {
  it('shortens at a word boundary with an ASCII marker', () => {
    const words = Array.from({ length: 30 }, (_, i) => `word${i}`).join(' ');
    const subject = emailSubject(words);
    expect(subject.length).toBeLessThan(100);
    expect(subject.endsWith('...')).toBe(true);
    const kept = subject.slice(0, -3);
    expect(words.startsWith(kept)).toBe(true);
    expect(words[kept.length]).toBe(' ');
  });

  it('is printable ASCII under 100 characters', () => {
    const subject = emailSubject(
      `NEW <!channel> @here ${'é'.repeat(20)} \u0000 ${'x'.repeat(200)}`
    );
    expect(subject.length).toBeLessThan(100);
    expect(subject).toMatch(/^[\x20-\x7e]+$/);
    expect(subject).not.toMatch(/<|@here/);
  });
});

describe('utf8Length', () => {
  it('counts UTF-8 bytes', () => {
    expect(utf8Length('aé€😀')).toBe(1 + 2 + 3 + 4);
  });
});
