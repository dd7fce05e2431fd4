import { describe, expect, it } from 'vitest';
import {
  annotationSuppressionAllows,
  annotationSuppressionIssues,
  annotationSuppressionProblems,
  annotationSuppressionText,
  parseAnnotationSuppression,
} from '../../lambda/core/annotation-policy.js';
import { CHECKS } from '../../lambda/core/checks/index.js';
import { annotationSuppressionSchema } from '../../lambda/core/ignore-rules.js';

const CHECK_IDS = CHECKS.map((check) => check.id);

describe('annotationSuppressionAllows', () => {
  it.each([
    ['allow', 'imds-v2-required', true],
    ['deny', 'imds-v2-required', false],
    [['imds-v2-required'], 'imds-v2-required', true],
    [['imds-*'], 'imds-hop-limit', true],
    [['imds-*'], 'node-role-policies', false],
    [['ami-*', 'node-role-policies'], 'node-role-policies', true],
  ] as const)('%j allows %s: %s', (policy, checkId, allowed) => {
    expect(annotationSuppressionAllows(policy, checkId)).toBe(allowed);
  });
});

describe('parseAnnotationSuppression (the environment / -c text form)', () => {
  it.each([
    ['', 'allow'],
    ['allow', 'allow'],
    [' deny ', 'deny'],
    ['imds-v2-required', ['imds-v2-required']],
    ['imds-*, node-role-policies', ['imds-*', 'node-role-policies']],
  ])('%j → %j', (text, value) => {
    expect(parseAnnotationSuppression(text)).toEqual({ value });
  });

  it.each([
    ['Allow', 'got "Allow"'],
    ['imds v2', 'got "imds v2"'],
    [',', 'expected allow, deny or check ids'],
  ])('refuses %j', (text, problem) => {
    expect(parseAnnotationSuppression(text)).toEqual({ problem: expect.stringContaining(problem) });
  });

  it('round-trips through its text form', () => {
    for (const policy of ['allow', 'deny', ['imds-*', 'node-role-policies']] as const) {
      expect(parseAnnotationSuppression(annotationSuppressionText(policy))).toEqual({
        value: policy,
      });
    }
  });
});

describe('annotationSuppressionProblems', () => {
  it('names list entries that match no check, and an empty list', () => {
    expect(annotationSuppressionProblems(['imds-*', 'node-role-policy'], CHECK_IDS)).toEqual([
      {
        index: 1,
        message:
          'unknown check id "node-role-policy" (did you mean "node-role-policies"?) (see `nodeclass-scan checks`)',
      },
    ]);
    expect(annotationSuppressionIssues('ANNOTATION_SUPPRESSION', [{ message: 'x' }])).toEqual([
      'ANNOTATION_SUPPRESSION: x',
    ]);
    expect(annotationSuppressionProblems([], CHECK_IDS)).toEqual([
      { message: 'an empty list allows no annotation: write deny' },
    ]);
    expect(annotationSuppressionProblems('deny', CHECK_IDS)).toEqual([]);
  });
});

describe('annotationSuppressionSchema (config file and CDK context)', () => {
  const schema = annotationSuppressionSchema(CHECK_IDS);

  it('takes allow, deny, a list, or comma-separated text', () => {
    expect(schema.parse('deny')).toBe('deny');
    expect(schema.parse(['imds-*'])).toEqual(['imds-*']);
    expect(schema.parse('imds-*,node-role-policies')).toEqual(['imds-*', 'node-role-policies']);
  });

  it('refuses anything else, naming the entry', () => {
    const result = schema.safeParse(['imds-*', 'nope']);
    expect(result.success).toBe(false);
    expect(result.error?.issues).toEqual([
      expect.objectContaining({ path: [1], message: expect.stringContaining('"nope"') }),
    ]);
    expect(schema.safeParse(true).success).toBe(false);
    expect(schema.safeParse([]).success).toBe(false);
  });
});
