import { describe, expect, it } from 'vitest';
import { imdsV2Required } from '../../../lambda/core/checks/imds-v2-required.js';
import { aNodeClassObject, anInventory } from '../../support/builders.js';

const now = new Date('2026-11-01T00:00:00Z');

function evaluate(metadataOptions: Record<string, unknown> | undefined) {
  const raw = aNodeClassObject({ spec: { metadataOptions } });
  return imdsV2Required.evaluate(anInventory([raw]), { now });
}

describe('imds-v2-required', () => {
  it('passes when httpTokens is required', () => {
    const [finding] = evaluate({ httpTokens: 'required' });
    expect(finding?.status).toBe('pass');
  });

  it('passes on the CRD default when metadataOptions or httpTokens is omitted', () => {
    const [withoutOptions] = evaluate(undefined);
    const [withoutTokens] = evaluate({ httpEndpoint: 'enabled' });
    expect(withoutOptions?.status).toBe('pass');
    expect(withoutOptions?.message).toContain('default');
    expect(withoutTokens?.status).toBe('pass');
  });

  it('fails when httpTokens is optional (IMDSv1 allowed)', () => {
    // Act
    const [finding] = evaluate({ httpEndpoint: 'enabled', httpTokens: 'optional' });

    // Assess
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('IMDSv1');
    expect(finding?.evidence).toEqual({ httpTokens: 'optional' });
    expect(finding?.location).toEqual({ path: 'spec.metadataOptions.httpTokens' });
  });

  it('is not applicable when the metadata endpoint is disabled', () => {
    const [finding] = evaluate({ httpEndpoint: 'disabled', httpTokens: 'optional' });
    expect(finding?.status).toBe('not-applicable');
  });

  it('reports an error for an object that does not parse', () => {
    const [finding] = evaluate({ httpTokens: 1 });
    expect(finding?.status).toBe('error');
  });
});
