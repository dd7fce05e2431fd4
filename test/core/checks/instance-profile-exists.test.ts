import { describe, expect, it } from 'vitest';
import { instanceProfileExists } from '../../../lambda/core/checks/instance-profile-exists.js';
import type { InstanceProfileFacts } from '../../../lambda/core/facts/aws.js';
import { ok, unavailable } from '../../../lambda/core/facts/slice.js';
import {
  anAwsInventory,
  anInstanceProfile,
  SCAN_TIME,
  someAwsFacts,
} from '../../support/aws-builders.js';
import { aNodeClassObject } from '../../support/builders.js';

const now = SCAN_TIME;
const profileMode = aNodeClassObject({
  spec: { role: undefined, instanceProfile: 'KarpenterNodeInstanceProfile' },
});

function evaluateWith(facts: InstanceProfileFacts) {
  return instanceProfileExists.evaluate(
    anAwsInventory([profileMode], someAwsFacts({ instanceProfile: ok(facts) })),
    { now }
  );
}

describe('instance-profile-exists', () => {
  it('passes when the profile exists with a role', () => {
    const [finding] = evaluateWith({
      name: 'KarpenterNodeInstanceProfile',
      profile: anInstanceProfile(),
    });
    expect(finding?.status).toBe('pass');
  });

  it('fails when the profile does not exist', () => {
    const [finding] = evaluateWith({ name: 'KarpenterNodeInstanceProfile' });
    expect(finding?.status).toBe('fail');
    expect(finding?.location).toEqual({ path: 'spec.instanceProfile' });
  });

  it('fails when the profile holds no role', () => {
    const [finding] = evaluateWith({
      name: 'KarpenterNodeInstanceProfile',
      profile: anInstanceProfile({ roleNames: [] }),
    });
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('holds no role');
  });

  it('reports an error when the profile could not be read', () => {
    const facts = someAwsFacts({
      instanceProfile: unavailable('access-denied', 'iam:GetInstanceProfile denied'),
    });
    const [finding] = instanceProfileExists.evaluate(anAwsInventory([profileMode], facts), { now });
    expect(finding?.status).toBe('error');
    expect(finding?.message).toContain('access-denied');
  });

  it('is not applicable in role mode', () => {
    const [finding] = instanceProfileExists.evaluate(
      anAwsInventory([aNodeClassObject()], someAwsFacts()),
      { now }
    );
    expect(finding?.status).toBe('not-applicable');
  });
});
