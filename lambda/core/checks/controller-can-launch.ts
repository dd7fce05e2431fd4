import { defineCheck, type FindingDraft } from '../check.js';
import type { DryRunOutcome } from '../facts/permissions.js';
import { PERMISSION_MATERIAL, permissionCheckDrafts } from '../iam/permission-check.js';

function dryRunDraft(outcome: DryRunOutcome): Omit<FindingDraft, 'resource'> {
  const discriminator = `dry-run:${outcome.operation}`;
  const evidence = {
    mode: 'dry-run',
    operation: outcome.operation,
    ...(outcome.code === undefined ? {} : { code: outcome.code }),
    ...(outcome.decodedMessage === undefined ? {} : { decodedMessage: outcome.decodedMessage }),
  };
  switch (outcome.outcome) {
    case 'allowed':
      return {
        status: 'pass',
        discriminator,
        evidence,
        message: `EC2 DryRun ${outcome.operation}: ${outcome.message}`,
      };
    case 'unauthorized':
      return {
        status: 'fail',
        discriminator,
        evidence,
        message: `EC2 DryRun ${outcome.operation} returned UnauthorizedOperation: ${outcome.decodedMessage ?? outcome.message}`,
      };
    case 'rejected':
      // Karpenter leaves ValidationSucceeded=Unknown for these (#8148); EC2's code is the finding.
      return {
        status: 'fail',
        severity: 'high',
        discriminator,
        evidence,
        message: `EC2 DryRun ${outcome.operation} was rejected with ${outcome.code ?? 'an error'}: ${outcome.message}`,
        remediation: `Fix what EC2 reports (${outcome.code ?? 'see message'}); Karpenter hides this as ValidationSucceeded=Unknown.`,
      };
    case 'skipped':
      return {
        status: 'not-applicable',
        discriminator,
        evidence,
        message: `EC2 DryRun ${outcome.operation} not run: ${outcome.message}`,
      };
    default:
      return {
        status: 'error',
        discriminator,
        evidence,
        message: `EC2 DryRun ${outcome.operation} could not be run: ${outcome.message}`,
        readFault: { reason: 'unknown', input: `EC2 DryRun ${outcome.operation}` },
      };
  }
}

/**
 * The controller may launch with this class: ec2:CreateLaunchTemplate, CreateFleet, RunInstances and
 * CreateTags, simulated with Karpenter's request tags and the class' resolved resources.
 */
export const controllerCanLaunch = defineCheck({
  id: 'controller-can-launch',
  title: 'Controller can create launch templates and launch instances for the class',
  group: 'aws',
  severity: 'critical',
  inputs: ['permissions'],
  rationale:
    "Karpenter launches every node through CreateLaunchTemplate and CreateFleet (RunInstances and CreateTags with its request tags). If its policy denies any of them for this class's images, subnets, security groups or tags, every launch fails with UnauthorizedOperation and pods stay Pending.",
  remediation:
    "Grant the EC2 launch statements of Karpenter's reference controller policy (AllowScopedEC2InstanceAccessActions, AllowScopedEC2LaunchTemplateAccessActions, AllowScopedEC2InstanceActionsWithTags, AllowScopedResourceCreationTagging).",
  references: [
    '#7953',
    '#7872',
    '#7927',
    'https://karpenter.sh/docs/reference/cloudformation/',
    'https://docs.aws.amazon.com/IAM/latest/APIReference/API_SimulatePrincipalPolicy.html',
  ],
  material: [...PERMISSION_MATERIAL, 'code'],
  evaluate: (inventory) =>
    permissionCheckDrafts(inventory, {
      group: 'launch',
      subject: 'Launching nodes (CreateLaunchTemplate, CreateFleet, RunInstances, CreateTags)',
      extra: (facts) => (facts.dryRun ?? []).map(dryRunDraft),
    }),
});
