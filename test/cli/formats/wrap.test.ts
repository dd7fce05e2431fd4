import { describe, expect, it } from 'vitest';
import {
  hangingLines,
  jsonBlock,
  splitPolicies,
  visibleWidth,
} from '../../../lambda/cli/formats/wrap.js';

describe('hangingLines', () => {
  it('breaks at spaces and continues at the indent', () => {
    expect(hangingLines('  fix: ', 'one two three four five six', 7, 20)).toEqual([
      '  fix: one two three',
      '       four five six',
    ]);
  });

  it('never cuts a word longer than a line: it stands alone', () => {
    const arn = 'arn:aws:iam::111122223333:role/KarpenterNodeRole-analytics';
    expect(hangingLines('  ', `role ${arn} is denied`, 4, 30)).toEqual([
      '  role',
      `    ${arn}`,
      '    is denied',
    ]);
  });

  it('moves the first word under a wide prefix to the next line rather than past the width', () => {
    expect(
      hangingLines('  HIGH  a-very-long-check-id  ', 'spec.some.long.field.path: bad', 8, 40)
    ).toEqual(['  HIGH  a-very-long-check-id', '        spec.some.long.field.path: bad']);
  });

  it('ends a line with a · separator instead of starting one', () => {
    expect(hangingLines('', 'aaaa bbbb · cccc dddd', 0, 11)).toEqual(['aaaa bbbb ·', 'cccc dddd']);
  });

  it('counts colour sequences as no width', () => {
    expect(visibleWidth('\u001b[31mHIGH\u001b[0m')).toBe(4);
    expect(hangingLines('\u001b[31mHIGH\u001b[0m ', 'a b', 2, 8)).toEqual([
      '\u001b[31mHIGH\u001b[0m a b',
    ]);
  });
});

describe('jsonBlock', () => {
  const policy = {
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Allow',
        Action: ['iam:PassRole'],
        Resource: ['arn:aws:iam::111122223333:role/KarpenterNodeRole-analytics'],
        Condition: { StringEquals: { 'iam:PassedToService': ['ec2.amazonaws.com'] } },
      },
    ],
  };

  it('is valid JSON of the same value at any width, lists on one line when they fit', () => {
    for (const width of [20, 40, 80, 200, undefined]) {
      const lines = jsonBlock(policy, 4, width);
      expect(JSON.parse(lines.join('\n'))).toEqual(policy);
      expect(lines.every((line) => line.startsWith('    '))).toBe(true);
    }
    expect(jsonBlock(policy, 0, 80)).toContain('      "Action": ["iam:PassRole"],');
  });

  it('puts a value that does not fit after its key on the next line', () => {
    expect(jsonBlock({ key: 'x'.repeat(30) }, 0, 30)).toEqual([
      '{',
      '  "key":',
      `    "${'x'.repeat(30)}"`,
      '}',
    ]);
  });
});

describe('splitPolicies', () => {
  it('splits out inline IAM policy documents, leaving other braces as text', () => {
    const text = `Add to the policy: {"Version":"2012-10-17","Statement":[]} Then {retry}.`;
    expect(splitPolicies(text)).toEqual([
      { kind: 'text', text: 'Add to the policy:' },
      { kind: 'json', value: { Version: '2012-10-17', Statement: [] } },
      { kind: 'text', text: 'Then {retry}.' },
    ]);
    expect(splitPolicies('Set {"a": 1} here.')).toEqual([
      { kind: 'text', text: 'Set {"a": 1} here.' },
    ]);
  });
});
