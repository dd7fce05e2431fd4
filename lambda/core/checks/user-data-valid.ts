import { defineCheck, type FindingDraft, forEachNodeClass } from '../check.js';
import { userDataProblems } from '../user-data/analyze.js';
import type { UserDataProblem } from '../user-data/problems.js';
import { userDataFamily } from './support/user-data.js';

const USER_DATA_PATH = 'spec.userData';

function problemDraft(
  problem: UserDataProblem,
  family: string,
  resource: FindingDraft['resource']
): FindingDraft {
  const onUserData = problem.rule !== 'custom-without-bootstrap';
  return {
    status: 'fail',
    resource,
    severity: problem.severity,
    message: problem.message,
    remediation: problem.remediation,
    evidence: {
      rule: problem.rule,
      amiFamily: family,
      ...(problem.subject === undefined ? {} : { setting: problem.subject }),
      ...(problem.line === undefined ? {} : { line: problem.line }),
      ...(problem.column === undefined ? {} : { column: problem.column }),
    },
    discriminator: `${problem.rule}#${problem.subject ?? ''}`,
    location: { path: onUserData ? USER_DATA_PATH : 'spec.amiFamily' },
  };
}

/**
 * spec.userData is what the class's AMI family expects, read the way Karpenter v1.14.1 merges it
 * with its own bootstrap (user-data/analyze.ts): Bottlerocket TOML that go-toml decodes into
 * Karpenter's settings types, MIME that Go's parsers accept (AL2, AL2023), NodeConfig parts
 * nodeadm can decode (AL2023), PowerShell without its own tags (Windows), and a bootstrap for
 * Custom. Values redacted by `snapshot` are not evaluated.
 */
export const userDataValid = defineCheck({
  id: 'user-data-valid',
  title: 'userData is valid for the AMI family, as Karpenter merges it',
  group: 'spec',
  severity: 'critical',
  inputs: ['spec'],
  rationale:
    "Karpenter parses spec.userData to merge it with its own bootstrap: invalid Bottlerocket TOML or a broken MIME document means no launch template is rendered, the class never validates and nothing launches. A NodeConfig nodeadm cannot decode, PowerShell tags inside Karpenter's block, or Custom without a bootstrap launch nodes that never join.",
  remediation:
    'Give spec.userData in the format of the AMI family (TOML settings for Bottlerocket, a shell script, NodeConfig or MIME for AL2023, a shell script or MIME for AL2, bare PowerShell for Windows, a full bootstrap for Custom), fixing the line the finding names.',
  references: [
    'https://karpenter.sh/docs/concepts/nodeclasses/#specuserdata',
    'https://github.com/aws/karpenter-provider-aws/tree/v1.14.1/pkg/providers/amifamily/bootstrap',
    '#3536',
    '#1404',
    '#5380',
    '#5915',
    'https://awslabs.github.io/amazon-eks-ami/nodeadm/',
  ],
  material: ['rule', 'amiFamily'],
  evaluate: (inventory) =>
    forEachNodeClass(inventory, ({ spec }, { resource }): FindingDraft[] => {
      const family = userDataFamily(spec, resource, {
        noFamily: 'read spec.userData for',
        redacted: 'it is not evaluated',
      });
      if (typeof family !== 'string') return [family];
      const problems = userDataProblems(spec, family);
      if (problems.length > 0) return problems.map((p) => problemDraft(p, family, resource));
      return [
        {
          status: 'pass',
          resource,
          message:
            spec.userData === undefined
              ? `No spec.userData: Karpenter renders its own ${family} bootstrap.`
              : `spec.userData is valid ${family} userData as Karpenter merges it.`,
        },
      ];
    }),
});
