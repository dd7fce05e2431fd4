import { describe, expect, it } from 'vitest';
import { instanceProfileIsName } from '../../../lambda/core/checks/instance-profile-is-name.js';
import { aNodeClassObject, anInventory } from '../../support/builders.js';

const now = new Date('2026-11-01T00:00:00Z');

function evaluate(spec: Record<string, unknown>) {
  const raw = aNodeClassObject({ spec: { role: undefined, ...spec } });
  return instanceProfileIsName.evaluate(anInventory([raw]), { now });
}

describe('instance-profile-is-name', () => {
  it('passes for a bare profile name', () => {
    const [finding] = evaluate({ instanceProfile: 'KarpenterNodeInstanceProfile' });
    expect(finding?.status).toBe('pass');
  });

  it.each([
    ['arn:aws:iam::123456789012:instance-profile/KarpenterNode', 'KarpenterNode', 'ARN'],
    ['arn:aws-cn:iam::123456789012:instance-profile/team/KarpenterNode', 'KarpenterNode', 'ARN'],
    ['/team/KarpenterNode', 'KarpenterNode', 'IAM path'],
    ['team/KarpenterNode', 'KarpenterNode', 'IAM path'],
  ])('fails for %s and suggests %s', (profile, name, kind) => {
    const [finding] = evaluate({ instanceProfile: profile });
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain(kind);
    expect(finding?.remediation).toBe(`Set spec.instanceProfile: ${name}`);
    expect(finding?.location).toEqual({ path: 'spec.instanceProfile' });
  });

  it('is not applicable in role mode', () => {
    const raw = aNodeClassObject();
    const [finding] = instanceProfileIsName.evaluate(anInventory([raw]), { now });
    expect(finding?.status).toBe('not-applicable');
  });

  it('reports an error, not silence, for an object that does not parse', () => {
    const raw = aNodeClassObject({ spec: { subnetSelectorTerms: 'oops' } });
    const [finding] = instanceProfileIsName.evaluate(anInventory([raw]), { now });
    expect(finding?.status).toBe('error');
  });
});
