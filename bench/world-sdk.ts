// SDK clients answered from a world file: the live adapters (`createLiveAwsFacts`,
// `createIamSimulator`) run unchanged on top, so benchmarks count the real API operations
// (GetRole + ListAttachedRolePolicies, pagination, 20-ARN simulation chunks) and reliability tests
// inject faults where AWS would raise them. Filtering reuses the world adapter (core's matchers).
import {
  DescribeCapacityReservationsCommand,
  DescribeImagesCommand,
  DescribeInstanceTypeOfferingsCommand,
  DescribeSecurityGroupsCommand,
  DescribeSubnetsCommand,
  type EC2Client,
  type Filter,
} from '@aws-sdk/client-ec2';
import {
  type EvaluationResult,
  GetInstanceProfileCommand,
  GetPolicyCommand,
  GetPolicyVersionCommand,
  GetRoleCommand,
  GetRolePolicyCommand,
  type IAMClient,
  ListAttachedRolePoliciesCommand,
  ListEntitiesForPolicyCommand,
  ListInstanceProfilesForRoleCommand,
  ListRolePoliciesCommand,
  type PolicySourceType,
  SimulatePrincipalPolicyCommand,
} from '@aws-sdk/client-iam';
import { GetParameterCommand, GetParametersCommand, type SSMClient } from '@aws-sdk/client-ssm';
import type { AwsFactsClients } from '../lambda/adapters/aws/aws-facts-adapter.js';
import { createWorldPolicySimulator } from '../lambda/adapters/world/permissions.js';
import type { World } from '../lambda/adapters/world/schema.js';
import { createWorldAwsFacts, parameterNamesOf } from '../lambda/adapters/world/world-facts.js';
import type { ContextEntry, SimulationRequest } from '../lambda/core/facts/permissions.js';

export type AwsService = 'ec2' | 'ssm' | 'iam';

/**
 * Sits between the adapter and the world's answer: adds latency, rate limits, retries or faults.
 * `answer` computes the response (it throws NoSuchEntity-style errors like AWS).
 */
export type Interceptor = <T>(
  service: AwsService,
  operation: string,
  input: unknown,
  answer: () => Promise<T>
) => Promise<T>;

export const passThrough: Interceptor = (_service, _operation, _input, answer) => answer();

/** An error shaped like the SDK's (classified by `name` and HTTP status, as aws-errors.ts does). */
export function sdkError(name: string, httpStatusCode: number, message = name): Error {
  return Object.assign(new Error(message), { name, $metadata: { httpStatusCode } });
}

type Json = Record<string, unknown>;

const CONDITION_FREE_POLICY = JSON.stringify({
  Version: '2012-10-17',
  Statement: [{ Effect: 'Allow', Action: '*', Resource: '*' }],
});

function page<T>(items: readonly T[], maxResults: number | undefined, token: string | undefined) {
  const start = token === undefined ? 0 : Number(token);
  const size = maxResults ?? items.length;
  const end = start + size;
  return {
    items: items.slice(start, end),
    ...(end < items.length ? { nextToken: String(end) } : {}),
  };
}

function filtersOf(filters: readonly Filter[] | undefined) {
  return (filters ?? []).map((filter) => ({
    name: filter.Name ?? '',
    values: [...(filter.Values ?? [])],
  }));
}

function byId<T extends Json>(items: readonly T[], key: keyof T): Map<string, T> {
  return new Map(items.map((item) => [String(item[key]), item]));
}

export interface WorldSdk extends AwsFactsClients {
  /** The same IAM client, also answering SimulatePrincipalPolicy from the world's decision table. */
  readonly iam: Pick<IAMClient, 'send'>;
}

export function createWorldSdk(
  world: World,
  options: { readonly now: Date; readonly intercept?: Interceptor }
): WorldSdk {
  const facts = createWorldAwsFacts({ world, now: options.now });
  const simulator = createWorldPolicySimulator(world);
  const intercept = options.intercept ?? passThrough;
  const images = byId(world.ec2.images, 'ImageId');
  const subnets = byId(world.ec2.subnets, 'SubnetId');
  const groups = byId(world.ec2.securityGroups, 'GroupId');
  const reservations = byId(world.ec2.capacityReservations, 'CapacityReservationId');
  const profiles = byId(world.iam.instanceProfiles, 'InstanceProfileName');
  const roles = byId(world.iam.roles, 'RoleName');
  for (const profile of world.iam.instanceProfiles) {
    for (const role of profile.Roles ?? [])
      if (!roles.has(role.RoleName)) roles.set(role.RoleName, role);
  }
  const notFound = (name: string) => sdkError(name, 404, `${name}: not in the world file`);

  async function ec2(command: unknown): Promise<unknown> {
    if (command instanceof DescribeImagesCommand) {
      const input = command.input;
      return intercept('ec2', 'DescribeImages', input, async () => {
        const found = await facts.describeImages({
          filters: filtersOf(input.Filters),
          ...(input.Owners === undefined ? {} : { owners: input.Owners }),
          includeDeprecated: input.IncludeDeprecated ?? false,
        });
        const result = page(found, input.MaxResults, input.NextToken);
        return {
          Images: result.items.map((image) => images.get(image.id)),
          NextToken: result.nextToken,
          $metadata: {},
        };
      });
    }
    if (command instanceof DescribeSubnetsCommand) {
      const input = command.input;
      return intercept('ec2', 'DescribeSubnets', input, async () => {
        const found = await facts.describeSubnets({ filters: filtersOf(input.Filters) });
        const result = page(found, input.MaxResults, input.NextToken);
        return {
          Subnets: result.items.map((subnet) => subnets.get(subnet.id)),
          NextToken: result.nextToken,
          $metadata: {},
        };
      });
    }
    if (command instanceof DescribeSecurityGroupsCommand) {
      const input = command.input;
      return intercept('ec2', 'DescribeSecurityGroups', input, async () => {
        const found = await facts.describeSecurityGroups({ filters: filtersOf(input.Filters) });
        const result = page(found, input.MaxResults, input.NextToken);
        return {
          SecurityGroups: result.items.map((group) => groups.get(group.id)),
          NextToken: result.nextToken,
          $metadata: {},
        };
      });
    }
    if (command instanceof DescribeCapacityReservationsCommand) {
      const input = command.input;
      return intercept('ec2', 'DescribeCapacityReservations', input, async () => {
        const found = await facts.describeCapacityReservations({
          filters: filtersOf(input.Filters),
          ...(input.CapacityReservationIds === undefined
            ? {}
            : { ids: input.CapacityReservationIds }),
        });
        const result = page(found, input.MaxResults, input.NextToken);
        return {
          CapacityReservations: result.items.map((item) => reservations.get(item.id)),
          NextToken: result.nextToken,
          $metadata: {},
        };
      });
    }
    if (command instanceof DescribeInstanceTypeOfferingsCommand) {
      const input = command.input;
      return intercept('ec2', 'DescribeInstanceTypeOfferings', input, async () => {
        // AWS always has offerings; a world without them for its region answers none.
        const found =
          input.LocationType === 'availability-zone'
            ? ((await facts.describeInstanceTypeOfferings()) ?? [])
            : [];
        const result = page(found, input.MaxResults, input.NextToken);
        return {
          InstanceTypeOfferings: result.items.map((offering) => ({
            InstanceType: offering.instanceType,
            LocationType: 'availability-zone',
            Location: offering.zone,
          })),
          NextToken: result.nextToken,
          $metadata: {},
        };
      });
    }
    throw new Error(`world SDK: unsupported EC2 command ${String(command)}`);
  }

  async function ssm(command: unknown): Promise<unknown> {
    if (command instanceof GetParametersCommand) {
      const input = command.input;
      return intercept('ssm', 'GetParameters', input, async () => {
        const names = input.Names ?? [];
        if (names.length > 10) throw sdkError('ValidationException', 400);
        const found: { Name: string; Type: string; Value: string }[] = [];
        const invalid: string[] = [];
        for (const requested of names) {
          const name = parameterNamesOf(requested).find(
            (candidate) => world.ssm.parameters[candidate] !== undefined
          );
          const value = name === undefined ? undefined : world.ssm.parameters[name];
          if (name === undefined || value === undefined) invalid.push(requested);
          else found.push({ Name: name, Type: 'String', Value: value });
        }
        return { Parameters: found, InvalidParameters: invalid, $metadata: {} };
      });
    }
    if (!(command instanceof GetParameterCommand)) {
      throw new Error(`world SDK: unsupported SSM command ${String(command)}`);
    }
    const input = command.input;
    return intercept('ssm', 'GetParameter', input, async () => {
      for (const name of parameterNamesOf(input.Name ?? '')) {
        const value = world.ssm.parameters[name];
        if (value !== undefined) {
          return { Parameter: { Name: name, Type: 'String', Value: value }, $metadata: {} };
        }
      }
      throw notFound('ParameterNotFound');
    });
  }

  const knownPolicy = (policyArn: string) =>
    [...roles.values()].some(
      (role) =>
        role.PermissionsBoundary?.PermissionsBoundaryArn === policyArn ||
        (role.AttachedPolicies ?? []).some((policy) => policy.PolicyArn === policyArn)
    );

  async function iam(command: unknown): Promise<unknown> {
    if (command instanceof GetRoleCommand) {
      const input = command.input;
      return intercept('iam', 'GetRole', input, async () => {
        const role = roles.get(input.RoleName ?? '');
        if (!role) throw notFound('NoSuchEntity');
        const { AttachedPolicies: _attached, ...rest } = role;
        return { Role: rest, $metadata: {} };
      });
    }
    if (command instanceof ListAttachedRolePoliciesCommand) {
      const input = command.input;
      return intercept('iam', 'ListAttachedRolePolicies', input, async () => {
        const role = roles.get(input.RoleName ?? '');
        if (!role) throw notFound('NoSuchEntity');
        return { AttachedPolicies: role.AttachedPolicies ?? [], IsTruncated: false, $metadata: {} };
      });
    }
    // The world's decision table reads no request context, so the policies behind it are answered
    // as condition-free documents; roles have no inline policies.
    if (command instanceof ListRolePoliciesCommand) {
      const input = command.input;
      return intercept('iam', 'ListRolePolicies', input, async () => {
        if (!roles.has(input.RoleName ?? '')) throw notFound('NoSuchEntity');
        return { PolicyNames: [], IsTruncated: false, $metadata: {} };
      });
    }
    if (command instanceof GetRolePolicyCommand) {
      const input = command.input;
      return intercept('iam', 'GetRolePolicy', input, async () => {
        throw notFound('NoSuchEntity');
      });
    }
    if (command instanceof GetPolicyCommand) {
      const input = command.input;
      return intercept('iam', 'GetPolicy', input, async () => {
        if (!knownPolicy(input.PolicyArn ?? '')) throw notFound('NoSuchEntity');
        return { Policy: { Arn: input.PolicyArn, DefaultVersionId: 'v1' }, $metadata: {} };
      });
    }
    if (command instanceof GetPolicyVersionCommand) {
      const input = command.input;
      return intercept('iam', 'GetPolicyVersion', input, async () => {
        if (!knownPolicy(input.PolicyArn ?? '')) throw notFound('NoSuchEntity');
        return {
          PolicyVersion: {
            VersionId: input.VersionId,
            IsDefaultVersion: true,
            Document: encodeURIComponent(CONDITION_FREE_POLICY),
          },
          $metadata: {},
        };
      });
    }
    if (command instanceof GetInstanceProfileCommand) {
      const input = command.input;
      return intercept('iam', 'GetInstanceProfile', input, async () => {
        const profile = profiles.get(input.InstanceProfileName ?? '');
        if (!profile) throw notFound('NoSuchEntity');
        return { InstanceProfile: profile, $metadata: {} };
      });
    }
    if (command instanceof ListEntitiesForPolicyCommand) {
      const input = command.input;
      return intercept('iam', 'ListEntitiesForPolicy', input, async () => {
        const attached = [...roles.values()].filter((role) =>
          (role.AttachedPolicies ?? []).some((policy) => policy.PolicyArn === input.PolicyArn)
        );
        return {
          PolicyRoles: attached.map((role) => ({ RoleName: role.RoleName, RoleId: role.RoleId })),
          IsTruncated: false,
          $metadata: {},
        };
      });
    }
    if (command instanceof ListInstanceProfilesForRoleCommand) {
      const input = command.input;
      return intercept('iam', 'ListInstanceProfilesForRole', input, async () => {
        if (!roles.has(input.RoleName ?? '')) throw notFound('NoSuchEntity');
        const holding = world.iam.instanceProfiles.filter((profile) =>
          (profile.Roles ?? []).some((role) => role.RoleName === input.RoleName)
        );
        return { InstanceProfiles: holding, IsTruncated: false, $metadata: {} };
      });
    }
    if (command instanceof SimulatePrincipalPolicyCommand) {
      const input = command.input;
      return intercept('iam', 'SimulatePrincipalPolicy', input, async () => {
        // The world simulator reads principal, actions and resources; kind and group do not apply.
        const request = {
          key: '',
          principalArn: input.PolicySourceArn ?? '',
          actions: input.ActionNames ?? [],
          resourceArns: input.ResourceArns ?? ['*'],
          context: (input.ContextEntries ?? []).map(
            (entry) =>
              ({
                key: entry.ContextKeyName ?? '',
                type: entry.ContextKeyType ?? 'string',
                values: entry.ContextKeyValues ?? [],
              }) as ContextEntry
          ),
        } as unknown as SimulationRequest;
        const results = await simulator.simulate(request);
        const byAction = new Map<string, EvaluationResult>();
        for (const result of results) {
          const evaluation = byAction.get(result.action) ?? {
            EvalActionName: result.action,
            EvalResourceName: '*',
            EvalDecision: 'allowed',
            ResourceSpecificResults: [],
          };
          if (result.decision !== 'allowed') evaluation.EvalDecision = result.decision;
          evaluation.ResourceSpecificResults?.push({
            EvalResourceName: result.resource,
            EvalResourceDecision: result.decision,
            MatchedStatements: result.matchedStatements.map((statement) => ({
              SourcePolicyId: statement.sourcePolicyId,
              SourcePolicyType: statement.sourcePolicyType as PolicySourceType | undefined,
            })),
            MissingContextValues: [...result.missingContextValues],
          });
          byAction.set(result.action, evaluation);
        }
        return { EvaluationResults: [...byAction.values()], IsTruncated: false, $metadata: {} };
      });
    }
    throw new Error(`world SDK: unsupported IAM command ${String(command)}`);
  }

  // The SDK's `send` is overloaded; adapters only use the promise form.
  return {
    ec2: { send: ec2 } as unknown as Pick<EC2Client, 'send'>,
    ssm: { send: ssm } as unknown as Pick<SSMClient, 'send'>,
    iam: { send: iam } as unknown as Pick<IAMClient, 'send'>,
  };
}
