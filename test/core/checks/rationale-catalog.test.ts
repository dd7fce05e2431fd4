// Every check says why a violation matters (SARIF "Why it matters", `checks --format json`).
import { describe, expect, it } from 'vitest';
import { CHECKS } from '../../../lambda/core/checks/index.js';

const MAX_RATIONALE_LENGTH = 400;

describe('check rationales', () => {
  it.each(CHECKS.map((check) => [check.id, check] as const))(
    '%s: a non-empty sentence of at most 400 characters, neither its title nor its remediation',
    (_id, check) => {
      const rationale = check.rationale;
      expect(rationale.trim()).not.toBe('');
      expect(rationale).toBe(rationale.trim());
      expect(rationale).toMatch(/\.$/);
      expect(rationale.length).toBeLessThanOrEqual(MAX_RATIONALE_LENGTH);
      expect(rationale).not.toMatch(/[\r\n]/);
      expect(rationale).not.toBe(check.remediation);
      expect(rationale).not.toBe(check.title);
      expect(rationale).not.toBe(`${check.title}.`);
    }
  );

  it('is user-facing: no internal document references', () => {
    for (const check of CHECKS) {
      expect(check.rationale, check.id).not.toMatch(/§|karpenter-validations|aws-facts/);
    }
  });

  it('is written for each check, not copied between them', () => {
    const rationales = CHECKS.map((check) => check.rationale);
    expect(new Set(rationales).size).toBe(rationales.length);
  });
});
