import { describe, expect, it } from 'vitest';
import { imdsHopLimit } from '../../../lambda/core/checks/imds-hop-limit.js';
import { aNodeClassObject, anInventory } from '../../support/builders.js';

const now = new Date('2026-11-01T00:00:00Z');

function evaluate(spec: Record<string, unknown>) {
  return imdsHopLimit.evaluate(anInventory([aNodeClassObject({ spec })]), { now });
}

describe('imds-hop-limit', () => {
  it('passes with hop limit 1', () => {
    const [finding] = evaluate({ metadataOptions: { httpPutResponseHopLimit: 1 } });
    expect(finding?.status).toBe('pass');
  });

  it('passes on the default when the hop limit is omitted', () => {
    const [finding] = evaluate({ metadataOptions: undefined });
    expect(finding?.status).toBe('pass');
    expect(finding?.message).toContain('1');
  });

  it.each([
    [2, { amiSelectorTerms: [{ alias: 'al2023@v20251001' }] }, 'AL2023'],
    [64, { amiSelectorTerms: [{ alias: 'bottlerocket@v1.30.0' }] }, 'Bottlerocket'],
    [3, { amiFamily: 'Custom', amiSelectorTerms: [{ id: 'ami-0123456789abcdef0' }] }, 'Custom'],
  ])('fails with hop limit %i on %s', (hopLimit, spec, family) => {
    // Act
    const [finding] = evaluate({
      ...spec,
      metadataOptions: { httpPutResponseHopLimit: hopLimit },
    });

    // Assess
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain(`${family} nodes`);
    expect(finding?.evidence).toEqual({ httpPutResponseHopLimit: hopLimit, amiFamily: family });
    expect(finding?.location).toEqual({ path: 'spec.metadataOptions.httpPutResponseHopLimit' });
  });

  it('says unknown when no family can be determined', () => {
    const [finding] = evaluate({
      amiSelectorTerms: [{ alias: 'ubuntu@latest' }],
      metadataOptions: { httpPutResponseHopLimit: 2 },
    });
    expect(finding?.evidence).toMatchObject({ amiFamily: 'unknown' });
  });

  it('is not applicable when the metadata endpoint is disabled', () => {
    const [finding] = evaluate({
      metadataOptions: { httpEndpoint: 'disabled', httpPutResponseHopLimit: 2 },
    });
    expect(finding?.status).toBe('not-applicable');
  });
});
