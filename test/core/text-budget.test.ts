import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { redactSecrets } from '../../lambda/core/redact.js';
import {
  boundEvidence,
  boundFindingText,
  elideText,
  elisionMarker,
  FINDING_TEXT_BUDGET,
  utf8Length,
} from '../../lambda/core/text-budget.js';

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');
const jsonBytes = (value: unknown) => bytes(JSON.stringify(value));

/** The count a marker at the end of `text` states. */
function elidedCount(text: string): number {
  const match = /…\(([\d,]+) bytes elided\)$/.exec(text);
  if (!match) throw new Error(`no marker at the end of ${text.slice(-40)}`);
  return Number((match[1] ?? '').replaceAll(',', ''));
}

describe('utf8Length', () => {
  it('counts UTF-8 bytes as Node encodes them, lone surrogates as U+FFFD', () => {
    for (const text of ['', 'ascii', 'é', '€uro', '😀 pair', 'a\ud800b', '\udc00']) {
      expect(utf8Length(text), JSON.stringify(text)).toBe(bytes(text));
    }
  });
});

describe('elideText', () => {
  it('leaves a text within the budget as it is', () => {
    const text = 'x'.repeat(100);
    expect(elideText(text, 100)).toBe(text);
    expect(elideText('€'.repeat(33), 100)).toBe('€'.repeat(33));
  });

  it('keeps the head within the budget and says how many bytes it elided, with thousands separators', () => {
    // Prepare: the 420,000-character AMI name of the issue
    const name = `${'a'.repeat(419_999)}*`;

    // Act
    const elided = elideText(name, 2048);

    // Assess
    expect(bytes(elided)).toBeLessThanOrEqual(2048);
    expect(elided.startsWith('a'.repeat(1000))).toBe(true);
    const kept = elided.slice(0, elided.indexOf('…'));
    expect(elided).toBe(`${kept}${elisionMarker(420_000 - kept.length)}`);
    expect(elided).toMatch(/…\(41\d,\d{3} bytes elided\)$/);
    expect(elidedCount(elided) + bytes(kept)).toBe(420_000);
  });

  it('cuts on code point boundaries: never inside a UTF-8 sequence or a surrogate pair', () => {
    for (const unit of ['é', '€', '😀', 'a😀', 'ab€']) {
      for (let budget = 64; budget < 80; budget++) {
        // Act
        const elided = elideText(unit.repeat(500), budget);

        // Assess: well formed, within budget, and the count is exact
        // A split surrogate pair would not survive the UTF-8 round trip (it becomes U+FFFD).
        expect(Buffer.from(elided, 'utf8').toString('utf8'), `${unit} ${budget}`).toBe(elided);
        expect(bytes(elided)).toBeLessThanOrEqual(budget);
        const kept = elided.slice(0, elided.lastIndexOf('…('));
        expect(unit.repeat(500).startsWith(kept)).toBe(true);
        expect(bytes(kept) + elidedCount(elided)).toBe(bytes(unit.repeat(500)));
      }
    }
  });

  it('is idempotent, and cutting twice is cutting once (the counts add up, one marker)', () => {
    const text = `${'word '.repeat(2000)}end`;
    const once = elideText(text, 2048);
    expect(elideText(once, 2048)).toBe(once);
    expect(elideText(once, 512)).toBe(elideText(text, 512));
    expect(elideText(once, 512).match(/bytes elided/g)).toHaveLength(1);
  });

  it('is deterministic', () => {
    const text = '€'.repeat(10_000);
    expect(elideText(text, 1024)).toBe(elideText(text, 1024));
  });

  it('never leaves a fragment of a credential too short for redaction to recognise', () => {
    const secret = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
    for (let pad = 0; pad < 60; pad++) {
      // Prepare: the cut falls anywhere in, before or after the key
      const text = `${'x '.repeat(pad)}aws_secret_access_key=${secret} and more text ${'y'.repeat(3000)}`;

      // Act: the scanner cuts first, then redacts
      const shown = redactSecrets(elideText(text, 100));

      // Assess
      expect(shown, `pad ${pad}`).not.toContain(secret.slice(0, 8));
    }
  });
});

describe('boundEvidence', () => {
  it('returns the same evidence when every string and the whole fit', () => {
    const evidence = { name: 'eks-node-*', ids: ['ami-1', 'ami-2'], nested: { a: 1, b: true } };
    expect(boundEvidence(evidence)).toBe(evidence);
  });

  it('keeps the evidence exactly while its JSON fits, however it is written', () => {
    // The size is first bounded without writing the JSON: the bound must never let through
    // evidence one byte over the budget (escapes, non-ASCII, numbers, nesting, omitted values).
    const leaf = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 12 }),
      fc.double(),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.constant(undefined)
    );
    const value = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        leaf,
        fc.array(tie('node'), { maxLength: 4 }),
        fc.dictionary(fc.string({ unit: 'binary', maxLength: 6 }), tie('node'), { maxKeys: 4 })
      ),
    })).node;
    fc.assert(
      fc.property(fc.dictionary(fc.string({ maxLength: 6 }), value, { maxKeys: 5 }), (evidence) => {
        const size = jsonBytes(evidence);
        expect(boundEvidence(evidence, size)).toBe(evidence);
        if (size > 2) expect(boundEvidence(evidence, size - 1)).not.toBe(evidence);
      }),
      { numRuns: 300 }
    );
    // Evidence as large as its JSON gets per character: escapes, 3- and 4-byte characters, the
    // longest numbers, omitted values.
    for (const evidence of [
      { a: '\u0001'.repeat(100) },
      { ['\u0001'.repeat(20)]: '"\\'.repeat(20) },
      { a: 'ノ'.repeat(100), b: '🚀'.repeat(50) },
      { a: [-1.7976931348623157e308, -0.0000012345678901234567, Number.NaN] },
      { a: [undefined, () => 1], b: undefined },
    ]) {
      const size = jsonBytes(evidence);
      expect(boundEvidence(evidence, size)).toBe(evidence);
      expect(boundEvidence(evidence, size - 1)).not.toBe(evidence);
    }
  });

  it('cuts each string to its budget, keys included, at any depth', () => {
    const long = 'n'.repeat(5000);
    const bounded = boundEvidence({
      name: long,
      terms: [{ name: long, owner: 'self' }],
      tags: { [long]: 'v' },
    }) as { name: string; terms: { name: string; owner: string }[]; tags: Record<string, string> };
    expect(bytes(bounded.name)).toBeLessThanOrEqual(FINDING_TEXT_BUDGET.evidenceString);
    expect(elidedCount(bounded.name)).toBeGreaterThan(3000);
    expect(bounded.terms[0]?.owner).toBe('self');
    expect(bytes(bounded.terms[0]?.name ?? '')).toBeLessThanOrEqual(
      FINDING_TEXT_BUDGET.evidenceString
    );
    const [key] = Object.keys(bounded.tags);
    expect(bytes(key ?? '')).toBeLessThanOrEqual(FINDING_TEXT_BUDGET.evidenceKey);
  });

  it('bounds the whole evidence however many fields and items, deterministically', () => {
    // Prepare: 2,000 strings of 1 KiB, and 5,000 top-level fields of 500 bytes
    const items = Array.from({ length: 2_000 }, (_, index) => `${index}:${'d'.repeat(1020)}`);
    const wide = Object.fromEntries(
      Array.from({ length: 5_000 }, (_, index) => [`field${index}`, 'w'.repeat(500)])
    );

    for (const evidence of [{ denials: items, subject: 'keep me' }, wide]) {
      // Act
      const bounded = boundEvidence(evidence);

      // Assess
      expect(jsonBytes(bounded)).toBeLessThanOrEqual(FINDING_TEXT_BUDGET.evidence);
      expect(boundEvidence(evidence)).toEqual(bounded);
    }
    const bounded = boundEvidence({ denials: items, subject: 'keep me' }) as {
      denials: string[];
      subject: string;
    };
    expect(bounded.subject).toBe('keep me');
    expect(bounded.denials.at(-1)).toMatch(/^…\([\d,]+ more items elided\)$/);
    expect(bounded.denials[0]).toMatch(/^0:d+…\([\d,]+ bytes elided\)$/);
  });
});

describe('boundFindingText', () => {
  it('bounds message, remediation, evidence and location each to its budget', () => {
    const long = 'm'.repeat(500_000);
    const bounded = boundFindingText({
      message: long,
      remediation: long,
      evidence: { name: long },
      location: { path: `spec.tags.${long}` },
    });
    expect(bytes(bounded.message)).toBeLessThanOrEqual(FINDING_TEXT_BUDGET.message);
    expect(bytes(bounded.remediation)).toBeLessThanOrEqual(FINDING_TEXT_BUDGET.remediation);
    expect(jsonBytes(bounded.evidence)).toBeLessThanOrEqual(FINDING_TEXT_BUDGET.evidence);
    expect(bytes(bounded.location?.path ?? '')).toBeLessThanOrEqual(FINDING_TEXT_BUDGET.location);
  });

  it('returns the same object when everything fits', () => {
    const text = { message: 'm', remediation: 'r', evidence: { a: 'b' } };
    expect(boundFindingText(text)).toBe(text);
  });
});
