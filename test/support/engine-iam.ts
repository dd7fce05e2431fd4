// The controller role's IAM as the scanner meets it, answered by an independent policy engine: the
// live IAM adapters run unchanged over an IAM client whose SimulatePrincipalPolicy evaluates the
// role's documents (@cloud-copilot/iam-simulate), and whose policy reads return those documents.
import {
  GetPolicyCommand,
  GetPolicyVersionCommand,
  GetRoleCommand,
  GetRolePolicyCommand,
  ListAttachedRolePoliciesCommand,
  ListRolePoliciesCommand,
  SimulatePrincipalPolicyCommand,
} from '@aws-sdk/client-iam';
import {
  createIamRolePolicyReader,
  createIamSimulator,
  type IamSimulatorSender,
} from '../../lambda/adapters/aws/iam-simulator.js';
import {
  type PrincipalPolicyDocuments,
  simulatePrincipalPolicy,
} from '../../lambda/adapters/iam-engine/simulate-principal-policy.js';
import type { PolicySimulatorPort, RolePolicyPort } from '../../lambda/core/ports/permissions.js';

export interface EngineRole {
  readonly arn: string;
  /** Attached customer-managed policies, by name (the ARN is derived from the role's account). */
  readonly managed: readonly { readonly name: string; readonly document: string }[];
  readonly boundary?: { readonly name: string; readonly document: string };
  readonly scps?: readonly { readonly id: string; readonly document: string }[];
}

const accountOf = (arn: string) => arn.split(':')[4] ?? '';
const policyArn = (role: EngineRole, name: string) =>
  `arn:aws:iam::${accountOf(role.arn)}:policy/${name}`;

export function engineDocuments(role: EngineRole): PrincipalPolicyDocuments {
  return {
    identity: role.managed.map((policy) => ({
      name: policy.name,
      arn: policyArn(role, policy.name),
      type: 'managed' as const,
      document: policy.document,
    })),
    ...(role.boundary === undefined
      ? {}
      : {
          boundary: {
            arn: policyArn(role, role.boundary.name),
            document: role.boundary.document,
          },
        }),
    ...(role.scps === undefined ? {} : { scps: role.scps }),
  };
}

/** An IAM client for one role, counting the simulations sent. */
function engineIamClient(role: EngineRole): {
  readonly sender: IamSimulatorSender;
  readonly simulations: () => number;
} {
  let simulations = 0;
  const documents = engineDocuments(role);
  const byArn = new Map(
    [...role.managed, ...(role.boundary ? [role.boundary] : [])].map((policy) => [
      policyArn(role, policy.name),
      policy.document,
    ])
  );
  const send = async (command: unknown): Promise<unknown> => {
    if (command instanceof SimulatePrincipalPolicyCommand) {
      if (command.input.PolicySourceArn !== role.arn)
        throw Object.assign(new Error('no such role'), { name: 'NoSuchEntity' });
      simulations++;
      return simulatePrincipalPolicy(documents, command.input);
    }
    if (command instanceof GetRoleCommand)
      return {
        Role: {
          Arn: role.arn,
          RoleName: command.input.RoleName,
          ...(role.boundary === undefined
            ? {}
            : {
                PermissionsBoundary: {
                  PermissionsBoundaryArn: policyArn(role, role.boundary.name),
                  PermissionsBoundaryType: 'Policy',
                },
              }),
        },
      };
    if (command instanceof ListRolePoliciesCommand) return { PolicyNames: [], IsTruncated: false };
    if (command instanceof GetRolePolicyCommand) throw new Error('no inline policies');
    if (command instanceof ListAttachedRolePoliciesCommand)
      return {
        AttachedPolicies: role.managed.map((policy) => ({
          PolicyName: policy.name,
          PolicyArn: policyArn(role, policy.name),
        })),
        IsTruncated: false,
      };
    if (command instanceof GetPolicyCommand)
      return { Policy: { Arn: command.input.PolicyArn, DefaultVersionId: 'v1' } };
    if (command instanceof GetPolicyVersionCommand) {
      const document = byArn.get(command.input.PolicyArn ?? '');
      if (document === undefined) throw new Error(`unknown policy ${command.input.PolicyArn}`);
      return { PolicyVersion: { Document: encodeURIComponent(document), VersionId: 'v1' } };
    }
    throw new Error(`engine IAM client: unsupported command ${String(command)}`);
  };
  return { sender: { send } as unknown as IamSimulatorSender, simulations: () => simulations };
}

/** The live simulator and policy reader over the engine-backed client. */
export function engineIam(role: EngineRole): {
  readonly simulator: PolicySimulatorPort;
  readonly policies: RolePolicyPort;
  readonly simulations: () => number;
} {
  const client = engineIamClient(role);
  return {
    simulator: createIamSimulator(client.sender),
    policies: createIamRolePolicyReader(client.sender),
    simulations: client.simulations,
  };
}
