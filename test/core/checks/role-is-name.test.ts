import { describe, expect, it } from 'vitest';
import { roleIsName } from '../../../lambda/core/checks/role-is-name.js';
import { aNodeClassObject, anInventory } from '../../support/builders.js';

const now = new Date('2026-11-01T00:00:00Z');

function evaluate(spec: Record<string, unknown>) {
  return roleIsName.evaluate(anInventory([aNodeClassObject({ spec })]), { now });
}

describe('role-is-name', () => {
  it('passes for a bare role name', () => {
    // Act
    const findings = evaluate({ role: 'KarpenterNodeRole-demo' });

    // Assess
    expect(findings).toHaveLength(1);
    expect(findings[0]?.status).toBe('pass');
  });

  it.each([
    ['arn:aws:iam::123456789012:role/KarpenterNodeRole-demo', 'KarpenterNodeRole-demo', 'ARN'],
    ['arn:aws-us-gov:iam::123456789012:role/eks/nodes/NodeRole', 'NodeRole', 'ARN'],
    ['/eks/nodes/NodeRole', 'NodeRole', 'IAM path'],
    ['eks/NodeRole', 'NodeRole', 'IAM path'],
  ])('fails for %s and suggests %s', (role, name, kind) => {
    // Act
    const [finding] = evaluate({ role });

    // Assess
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain(kind);
    expect(finding?.remediation).toBe(`Set spec.role: ${name}`);
    expect(finding?.evidence).toMatchObject({ role, suggestedName: name });
    expect(finding?.location).toEqual({ path: 'spec.role' });
  });

  it('names the mix-up when spec.role holds an instance-profile ARN', () => {
    // Act
    const [finding] = evaluate({
      role: 'arn:aws:iam::123456789012:instance-profile/KarpenterNodeInstanceProfile',
    });

    // Assess
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('names an IAM instance-profile, not a role');
    expect(finding?.evidence).toMatchObject({ arnResourceType: 'instance-profile' });
  });

  it('does not claim a mix-up for a role ARN', () => {
    const [finding] = evaluate({ role: 'arn:aws:iam::123456789012:role/NodeRole' });
    expect(finding?.message).not.toContain('not a role');
  });

  it('is not applicable in instance profile mode', () => {
    const [finding] = evaluate({ role: undefined, instanceProfile: 'NodeProfile' });
    expect(finding?.status).toBe('not-applicable');
  });

  it('leaves an empty role to nodeclass-schema-valid', () => {
    const [finding] = evaluate({ role: '' });
    expect(finding?.status).toBe('not-applicable');
    expect(finding?.message).toContain('nodeclass-schema-valid');
  });

  it('reports an error, not silence, for an object that does not parse', () => {
    const raw = aNodeClassObject({ spec: { role: 42 } });
    const [finding] = roleIsName.evaluate(anInventory([raw]), { now });
    expect(finding?.status).toBe('error');
  });
});
