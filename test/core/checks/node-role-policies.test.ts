import { describe, expect, it } from 'vitest';
import {
  managedPolicyName,
  nodeRolePolicies,
} from '../../../lambda/core/checks/node-role-policies.js';
import { ok, unavailable } from '../../../lambda/core/facts/slice.js';
import {
  anAwsInventory,
  aRole,
  NODE_POLICIES,
  SCAN_TIME,
  someAwsFacts,
} from '../../support/aws-builders.js';
import { aNodeClassObject } from '../../support/builders.js';

const now = SCAN_TIME;

function evaluateWith(attachedPolicyArns: readonly string[]) {
  const role = aRole({ attachedPolicyArns });
  const facts = someAwsFacts({ nodeRole: ok({ source: 'spec.role', name: role.name, role }) });
  return nodeRolePolicies.evaluate(anAwsInventory([aNodeClassObject()], facts), { now });
}

const without = (name: string) => NODE_POLICIES.filter((arn) => !arn.endsWith(`/${name}`));

describe('node-role-policies', () => {
  it('passes with the four node policies', () => {
    expect(evaluateWith(NODE_POLICIES)[0]?.status).toBe('pass');
  });

  it('accepts ReadOnly instead of PullOnly, in any partition', () => {
    const arns = [
      'arn:aws-us-gov:iam::aws:policy/AmazonEKSWorkerNodePolicy',
      'arn:aws-us-gov:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly',
      'arn:aws-us-gov:iam::aws:policy/AmazonEKS_CNI_Policy',
      'arn:aws-us-gov:iam::aws:policy/AmazonSSMManagedInstanceCore',
    ];
    expect(evaluateWith(arns)[0]?.status).toBe('pass');
  });

  it('fails at high without the worker node policy', () => {
    const [finding] = evaluateWith(without('AmazonEKSWorkerNodePolicy'));
    expect(finding?.status).toBe('fail');
    expect(finding?.severity).toBe('high');
  });

  it('says a missing CNI policy may be fine with IRSA or Pod Identity', () => {
    const [finding] = evaluateWith(without('AmazonEKS_CNI_Policy'));
    expect(finding?.message).toContain('IRSA or EKS Pod Identity');
  });

  it('is low when only SSM is missing', () => {
    const [finding] = evaluateWith(without('AmazonSSMManagedInstanceCore'));
    expect(finding?.status).toBe('fail');
    expect(finding?.severity).toBe('low');
  });

  it('does not take a customer policy with the same name for the AWS managed one', () => {
    expect(
      managedPolicyName('arn:aws:iam::111122223333:policy/AmazonEKSWorkerNodePolicy')
    ).toBeUndefined();
    expect(managedPolicyName('arn:aws:iam::aws:policy/service-role/AmazonEKS_CNI_Policy')).toBe(
      'AmazonEKS_CNI_Policy'
    );
  });

  it('reports an error when the role could not be read', () => {
    const facts = someAwsFacts({ nodeRole: unavailable('access-denied', 'iam:GetRole denied') });
    const [finding] = nodeRolePolicies.evaluate(anAwsInventory([aNodeClassObject()], facts), {
      now,
    });
    expect(finding?.status).toBe('error');
    expect(finding?.message).toContain('access-denied');
  });
});
