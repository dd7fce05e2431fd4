import { describe, expect, it } from 'vitest';
import { amiOwnerExplicit } from '../../../lambda/core/checks/ami-owner-explicit.js';
import { aNodeClassObject, anInventory } from '../../support/builders.js';

const now = new Date('2026-11-01T00:00:00Z');

function evaluate(amiSelectorTerms: unknown[]) {
  const raw = aNodeClassObject({ spec: { amiFamily: 'AL2023', amiSelectorTerms } });
  return amiOwnerExplicit.evaluate(anInventory([raw]), { now });
}

describe('ami-owner-explicit', () => {
  it.each([
    ['tags with owner', [{ tags: { team: 'platform' }, owner: '123456789012' }]],
    ['a name term (owners default to self,amazon)', [{ name: 'my-ami-2025' }]],
    ['tags with name', [{ tags: { team: 'platform' }, name: 'my-ami-*' }]],
    ['an id term', [{ id: 'ami-0123456789abcdef0' }]],
    ['an ssmParameter term', [{ ssmParameter: '/my/ami' }]],
  ])('passes for %s', (_label, terms) => {
    const findings = evaluate(terms);
    expect(findings.map((finding) => finding.status)).toEqual(['pass']);
  });

  it('passes for an alias term', () => {
    const raw = aNodeClassObject();
    const [finding] = amiOwnerExplicit.evaluate(anInventory([raw]), { now });
    expect(finding?.status).toBe('pass');
  });

  it('fails once per tags-only term without owner', () => {
    // Act
    const findings = evaluate([
      { tags: { 'image-type': 'eks-node' } },
      { id: 'ami-0123456789abcdef0' },
      { tags: { team: 'platform', stage: 'prod' } },
    ]);

    // Assess
    expect(findings.map((finding) => [finding.status, finding.location?.path])).toEqual([
      ['fail', 'spec.amiSelectorTerms[0]'],
      ['fail', 'spec.amiSelectorTerms[2]'],
    ]);
    expect(findings[1]?.message).toContain('team, stage');
    expect(findings[1]?.discriminator).toBe('spec.amiSelectorTerms[2]');
    expect(findings[0]?.remediation).toContain('amiSelectorTerms[0]');
  });
});
