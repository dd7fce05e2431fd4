import { describe, expect, it } from 'vitest';
import { amiSelectorPinned } from '../../../lambda/core/checks/ami-selector-pinned.js';
import type { Inventory } from '../../../lambda/core/inventory.js';
import { aNodeClassObject, anInventory } from '../../support/builders.js';

const now = new Date('2026-11-01T00:00:00Z');

function evaluate(
  spec: Record<string, unknown>,
  environment: Inventory['environment'] = 'production'
) {
  const raw = aNodeClassObject({ spec });
  return amiSelectorPinned.evaluate(anInventory([raw], { overrides: { environment } }), { now });
}

describe('ami-selector-pinned', () => {
  it.each([
    ['a versioned alias', { amiSelectorTerms: [{ alias: 'al2023@v20251001' }] }],
    ['an exact name', { amiFamily: 'AL2023', amiSelectorTerms: [{ name: 'my-ami-2025-10-01' }] }],
    ['an id', { amiFamily: 'AL2023', amiSelectorTerms: [{ id: 'ami-0123456789abcdef0' }] }],
  ])('passes for %s', (_label, spec) => {
    const findings = evaluate(spec);
    expect(findings.map((finding) => finding.status)).toEqual(['pass']);
  });

  it('fails for an @latest alias with the default low severity', () => {
    // Act
    const [finding] = evaluate({ amiSelectorTerms: [{ alias: 'al2023@latest' }] });

    // Assess
    expect(finding?.status).toBe('fail');
    expect(finding?.severity).toBeUndefined();
    expect(finding?.message).toContain('al2023@latest');
    expect(finding?.location).toEqual({ path: 'spec.amiSelectorTerms[0].alias' });
  });

  it('suggests an id term for Windows, whose aliases only support @latest', () => {
    const [finding] = evaluate({ amiSelectorTerms: [{ alias: 'windows2022@latest' }] });
    expect(finding?.status).toBe('fail');
    expect(finding?.remediation).toContain('id term');
  });

  it.each(['my-ami-*', 'eks-node-2025-??-01'])('fails for a name with wildcards: %s', (name) => {
    // Act
    const findings = evaluate({
      amiFamily: 'AL2023',
      amiSelectorTerms: [{ id: 'ami-0123456789abcdef0' }, { name, owner: 'self' }],
    });

    // Assess
    expect(findings).toHaveLength(1);
    expect(findings[0]?.status).toBe('fail');
    expect(findings[0]?.location).toEqual({ path: 'spec.amiSelectorTerms[1].name' });
    expect(findings[0]?.discriminator).toBe('spec.amiSelectorTerms[1].name');
  });

  it('lowers the severity to info in non-production', () => {
    const findings = evaluate(
      {
        amiFamily: 'AL2023',
        amiSelectorTerms: [{ name: 'a-*' }, { name: 'b-*' }],
      },
      'non-production'
    );
    expect(findings.map((finding) => [finding.status, finding.severity])).toEqual([
      ['fail', 'info'],
      ['fail', 'info'],
    ]);
  });
});
