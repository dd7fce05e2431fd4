// Karpenter's own reference controller policy, per release, evaluated by an independent IAM engine
// behind the live IAM adapters: every controller-* check of every healthy NodeClass passes, and
// each variant fails exactly the NodeClasses it should, naming the right source.
import { describe, expect, it } from 'vitest';
import {
  policyVariants,
  type ReferencePolicyRelease,
  referenceControllerPolicies,
  referencePolicyReleases,
} from '../support/karpenter-controller-policy.js';
import { NODE_ROLE } from '../support/permission-builders.js';
import {
  ACCOUNT,
  failing,
  fleet,
  OTHER_NODE_ROLE,
  SCOPE,
  scanWith,
  type Verdicts,
} from '../support/permission-fleet.js';

describe("Karpenter's reference controller policy, evaluated by an independent IAM engine", () => {
  it.each(referencePolicyReleases.map((release) => [release]))(
    '%s: every controller-* check of every healthy NodeClass passes at that release',
    async (release) => {
      const verdicts = await scanWith(fleet(release.replace(/^v/, '')), {
        managed: referenceControllerPolicies(release as ReferencePolicyRelease, SCOPE),
      });

      expect(failing(verdicts)).toEqual([]);
      // Role mode simulates instance-profile management; instanceProfile mode does not.
      expect(verdicts.status['controller-can-manage-instance-profile default']).toBe('pass');
      expect(verdicts.status['controller-can-manage-instance-profile pinned']).toBe(
        'not-applicable'
      );
    }
  );
});

describe('variants fail exactly the NodeClasses they should, naming the source', () => {
  const reference = () => referenceControllerPolicies('v1.14.1', SCOPE);
  const denialOf = (verdicts: Verdicts, check: string, nodeClass: string) =>
    verdicts.findings.find(
      (finding) => finding.checkId === check && finding.resource?.name === nodeClass
    );

  it('PassRole on one node role only: the class with another role fails pass-node-role (no Allow)', async () => {
    const verdicts = await scanWith(fleet('1.14.1', { batchRole: OTHER_NODE_ROLE }), {
      managed: policyVariants.passRoleOnlyTo(reference(), NODE_ROLE),
    });

    expect(failing(verdicts)).toEqual(['controller-can-pass-node-role batch: fail']);
    const finding = denialOf(verdicts, 'controller-can-pass-node-role', 'batch');
    expect(finding?.evidence?.denials).toEqual([
      expect.objectContaining({ action: 'iam:PassRole', deniedBy: 'no-allow' }),
    ]);
    // The statement to paste names that role.
    expect(JSON.stringify(finding?.evidence?.remediationPolicy)).toContain(OTHER_NODE_ROLE);
  });

  it('a Deny on one ec2nodeclass tag value fails that class only, naming the identity policy', async () => {
    const verdicts = await scanWith(fleet('1.14.1'), {
      managed: policyVariants.denyNodeClassByTag(reference(), 'batch'),
    });

    expect(failing(verdicts)).toEqual(['controller-can-launch batch: fail']);
    const finding = denialOf(verdicts, 'controller-can-launch', 'batch');
    expect(finding?.message).toContain('explicitly denied by an identity policy');
    expect(finding?.remediation).toMatch(/Remove or narrow the Deny statement/);
  });

  it('a boundary without iam:PassRole fails pass-node-role for every class, naming the boundary', async () => {
    const verdicts = await scanWith(fleet('1.14.1'), {
      managed: reference(),
      boundary: policyVariants.boundaryWithoutPassRole(),
    });

    expect(failing(verdicts)).toEqual([
      'controller-can-pass-node-role batch: fail',
      'controller-can-pass-node-role default: fail',
      'controller-can-pass-node-role pinned: fail',
    ]);
    expect(
      denialOf(verdicts, 'controller-can-pass-node-role', 'default')?.evidence?.denials
    ).toEqual([expect.objectContaining({ deniedBy: 'permissions-boundary' })]);
  });

  it('a NotAction/NotResource Deny fails only the class launching into the excluded subnet', async () => {
    const subnet = (id: string) => `arn:aws:ec2:us-east-1:${ACCOUNT}:subnet/${id}`;
    const verdicts = await scanWith(fleet('1.14.1'), {
      managed: policyVariants.denyEc2OutsideSubnets(reference(), {
        partition: 'aws',
        region: 'us-east-1',
        allowedSubnetArns: [subnet('subnet-a'), subnet('subnet-b')],
      }),
    });

    expect(failing(verdicts)).toEqual(['controller-can-launch batch: fail']);
    expect(denialOf(verdicts, 'controller-can-launch', 'batch')?.evidence?.denials).toContainEqual(
      expect.objectContaining({ resource: subnet('subnet-c'), deniedBy: 'identity-policy' })
    );
  });

  it('StringEquals on a request tag fails the classes without that exact value; StringLike * passes them', async () => {
    const equals = await scanWith(fleet('1.14.1'), {
      managed: policyVariants.requireRequestTag(reference(), { key: 'team', value: 'platform' }),
    });
    // `batch` tags team=data; `pinned` has no team tag (its profile is its own, so only launch).
    expect(failing(equals)).toEqual([
      'controller-can-launch batch: fail',
      'controller-can-launch pinned: fail',
      'controller-can-manage-instance-profile batch: fail',
    ]);

    const like = await scanWith(fleet('1.14.1'), {
      managed: policyVariants.requireRequestTag(reference(), {
        key: 'team',
        value: '*',
        operator: 'StringLike',
      }),
    });
    expect(failing(like)).toEqual(['controller-can-launch pinned: fail']);
  });

  it('a ForAnyValue:StringLike Deny on aws:TagKeys fails the class whose tags match', async () => {
    const verdicts = await scanWith(fleet('1.14.1'), {
      managed: policyVariants.denyTagKeys(reference(), 'cost-*'),
    });

    expect(failing(verdicts)).toEqual(['controller-can-launch batch: fail']);
  });

  it('an Allow of the create calls that requires ec2:CreateAction fails every launch (AWS sets it only on CreateTags)', async () => {
    const managed = reference().map((policy) => {
      const document = JSON.parse(policy.document) as {
        Statement: { Sid?: string; Condition?: Record<string, Record<string, unknown>> }[];
      };
      for (const statement of document.Statement) {
        if (statement.Sid !== 'AllowScopedEC2InstanceActionsWithTags') continue;
        statement.Condition = {
          ...statement.Condition,
          StringEquals: {
            ...statement.Condition?.StringEquals,
            'ec2:CreateAction': ['RunInstances', 'CreateFleet', 'CreateLaunchTemplate'],
          },
        };
      }
      return { name: policy.name, document: JSON.stringify(document) };
    });

    const verdicts = await scanWith(fleet('1.14.1'), { managed });

    expect(failing(verdicts)).toEqual([
      'controller-can-launch batch: fail',
      'controller-can-launch default: fail',
      'controller-can-launch pinned: fail',
    ]);
  });

  it('a region condition on the launch Allow fails every launch', async () => {
    const verdicts = await scanWith(fleet('1.14.1'), {
      managed: policyVariants.runInstancesOnlyIn(reference(), 'eu-west-1'),
    });

    expect(failing(verdicts)).toEqual([
      'controller-can-launch batch: fail',
      'controller-can-launch default: fail',
      'controller-can-launch pinned: fail',
    ]);
  });

  it('an SCP Deny on a tag value fails that class, attributed to the SCP', async () => {
    const verdicts = await scanWith(fleet('1.14.1'), {
      managed: reference(),
      scps: [policyVariants.scpDenyRunInstancesForTag('data', 'team')],
    });

    expect(failing(verdicts)).toEqual(['controller-can-launch batch: fail']);
    expect(denialOf(verdicts, 'controller-can-launch', 'batch')?.evidence?.denials).toEqual(
      expect.arrayContaining([expect.objectContaining({ deniedBy: 'scp' })])
    );
  });
});
