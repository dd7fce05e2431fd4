// userData is whatever a cluster or a repository holds: the readers must never throw, and must stay
// linear on large or adversarial input.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AMI_FAMILIES } from '../../../lambda/core/ami-family.js';
import type { EC2NodeClassSpec } from '../../../lambda/core/schema.js';
import { renderedSize, userDataProblems } from '../../../lambda/core/user-data/analyze.js';
import { readMultipart } from '../../../lambda/core/user-data/mime.js';
import { parseToml } from '../../../lambda/core/user-data/toml.js';
import { propertyRuns } from '../../support/property-runs.js';
import {
  BAD_NODECONFIG_MIME,
  BROKEN_TOML,
  GOOD_USER_DATA,
} from '../../support/user-data-builders.js';

const SEEDS = [...Object.values(GOOD_USER_DATA), BROKEN_TOML, BAD_NODECONFIG_MIME];

/** A seed with random characters inserted or deleted (the mistakes of hand-edited userData). */
const mutated = fc
  .record({
    seed: fc.constantFrom(...SEEDS),
    edits: fc.array(
      fc.record({
        at: fc.nat(),
        remove: fc.nat({ max: 3 }),
        insert: fc.string({
          unit: fc.constantFrom(...'[]{}="\'#:-\n\r\t \\.,/<>'.split('')),
          maxLength: 4,
        }),
      }),
      { maxLength: 6 }
    ),
  })
  .map(({ seed, edits }) =>
    edits.reduce((text, { at, remove, insert }) => {
      const index = at % (text.length + 1);
      return text.slice(0, index) + insert + text.slice(index + remove);
    }, seed)
  );

const userData = fc.oneof(
  mutated,
  fc.string({ maxLength: 200 }),
  fc.string({ unit: 'binary', maxLength: 200 })
);

function spec(text: string, amiFamily: string): EC2NodeClassSpec {
  return {
    amiFamily,
    userData: text,
    amiSelectorTerms: [{ id: 'ami-0123456789abcdef0' }],
    subnetSelectorTerms: [],
    securityGroupSelectorTerms: [],
  };
}

describe('userData readers on hostile input', () => {
  it('never throw, for any family, and always measure a size', () => {
    fc.assert(
      fc.property(userData, fc.constantFrom(...AMI_FAMILIES), (text, family) => {
        const problems = userDataProblems(spec(text, family), family);
        for (const problem of problems) {
          expect(problem.message).not.toBe('');
          if (problem.line !== undefined) expect(problem.line).toBeGreaterThan(0);
        }
        const size = renderedSize(spec(text, family), family, { nodePools: [] });
        expect(size.totalBytes).toBeGreaterThanOrEqual(size.userBytes);
      }),
      { numRuns: propertyRuns(2000) }
    );
  });

  it('stay fast on large inputs (linear, bounded nesting)', () => {
    const started = performance.now();
    expect(parseToml(`a = ${'['.repeat(100_000)}`).ok).toBe(false);
    expect(parseToml(`${'x = 1\n'.repeat(1)}${'# comment\n'.repeat(100_000)}`).ok).toBe(true);
    expect(parseToml(`[${'a.'.repeat(50_000)}b]\n`).ok).toBe(true);
    expect(parseToml(`s = "${'x'.repeat(1_000_000)}"`).ok).toBe(true);
    const head = 'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="//"\n\n';
    expect(readMultipart(`${head}${'--//\n\nx\n'.repeat(20_000)}--//--\n`).ok).toBe(true);
    expect(readMultipart(`${head}--//\n\n${'\n--/x'.repeat(200_000)}`).ok).toBe(false);
    const deep = userDataProblems(
      spec(`[settings.kubernetes]\nx = [${'['.repeat(200)}`, 'Bottlerocket'),
      'Bottlerocket'
    );
    expect(deep.map((problem) => problem.rule)).toEqual(['toml-syntax']);
    expect(performance.now() - started).toBeLessThan(10_000);
  });
});
