import { describe, expect, it } from 'vitest';
import {
  ec2ServicePrincipals,
  nodeRoleValid,
} from '../../../lambda/core/checks/node-role-valid.js';
import type { NodeRoleFacts } from '../../../lambda/core/facts/aws.js';
import { ok } from '../../../lambda/core/facts/slice.js';
import {
  anAwsInventory,
  aRole,
  SCAN_TIME,
  someAwsFacts,
  throttled,
  trustPolicy,
} from '../../support/aws-builders.js';
import { aNodeClassObject } from '../../support/builders.js';

const now = SCAN_TIME;

function evaluateWith(facts: NodeRoleFacts, partition: 'aws' | 'aws-cn' = 'aws') {
  return nodeRoleValid.evaluate(
    anAwsInventory([aNodeClassObject()], someAwsFacts({ nodeRole: ok(facts) }), { partition }),
    { now }
  );
}

describe('node-role-valid', () => {
  it('passes for an existing role trusting ec2.amazonaws.com', () => {
    expect(evaluateWith({ source: 'spec.role', name: 'r', role: aRole() })[0]?.status).toBe('pass');
  });

  it('accepts a URL-encoded trust policy as IAM returns it', () => {
    const role = aRole({ assumeRolePolicyDocument: encodeURIComponent(trustPolicy()) });
    expect(evaluateWith({ source: 'spec.role', name: 'r', role })[0]?.status).toBe('pass');
  });

  it('accepts the China service principal in aws-cn', () => {
    const role = aRole({ assumeRolePolicyDocument: trustPolicy(['ec2.amazonaws.com.cn']) });
    expect(evaluateWith({ source: 'spec.role', name: 'r', role }, 'aws-cn')[0]?.status).toBe(
      'pass'
    );
    expect(ec2ServicePrincipals('aws-cn')).toEqual(['ec2.amazonaws.com', 'ec2.amazonaws.com.cn']);
  });

  it('fails when the role does not exist', () => {
    const [finding] = evaluateWith({ source: 'spec.role', name: 'Missing' });
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('"Missing" (from spec.role) does not exist');
  });

  it('fails when the role trusts another service', () => {
    const role = aRole({ assumeRolePolicyDocument: trustPolicy(['lambda.amazonaws.com']) });
    const [finding] = evaluateWith({ source: 'spec.role', name: 'r', role });
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('does not trust ec2.amazonaws.com');
  });

  it('is not applicable when the instance profile gives no role (instance-profile-exists reports it)', () => {
    const [finding] = evaluateWith({ source: 'instance-profile' });
    expect(finding?.status).toBe('not-applicable');
    expect(finding?.message).toContain('instance-profile-exists');
  });

  it('reports an error when the role could not be read', () => {
    const inventory = anAwsInventory(
      [aNodeClassObject()],
      someAwsFacts({ nodeRole: throttled('iam:GetRole') })
    );
    const [finding] = nodeRoleValid.evaluate(inventory, { now });
    expect(finding?.status).toBe('error');
    expect(finding?.message).toContain('throttled');
  });
});
