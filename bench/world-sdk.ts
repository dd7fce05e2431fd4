// SDK clients answered from a world file: the live adapters (`createLiveAwsFacts`,
// `createIamSimulator`) run unchanged on top, so benchmarks count the real API operations
// (GetRole + ListAttachedRolePolicies, pagination, 20-ARN simulation chunks) and reliability tests
// inject faults where AWS would raise them. The fact commands (EC2 lists, region-wide lists such as
// the instance types and their zone offerings, the EBS encryption settings, SSM parameters,
// instance profiles, roles, KMS keys) are answered from their descriptors (lambda/adapters/aws/*-descriptors.ts)
// over the world adapter's replay; only the IAM commands that are no facts (policy and entity reads,
// simulations) are emulated here. A role whose policy documents the world gives is simulated by the
// IAM policy engine over them (as the offline scan does); any other by the decision table.
import type { EC2Client } from '@aws-sdk/client-ec2';
import {
  type EvaluationResult,
  GetAccountAuthorizationDetailsCommand,
  GetPolicyCommand,
  GetPolicyVersionCommand,
  GetRolePolicyCommand,
  type IAMClient,
  ListEntitiesForPolicyCommand,
  ListInstanceProfilesForRoleCommand,
  ListRolePoliciesCommand,
  type PolicySourceType,
  SimulatePrincipalPolicyCommand,
} from '@aws-sdk/client-iam';
import type { KMSClient } from '@aws-sdk/client-kms';
import type { SSMClient } from '@aws-sdk/client-ssm';
import type { AwsFactsClients } from '../lambda/adapters/aws/aws-facts-adapter.js';
import { EBS_ENCRYPTION_DEFAULTS } from '../lambda/adapters/aws/ebs-encryption-defaults.js';
import {
  type AnyEc2ListFact,
  type AnyRegionFact,
  EC2_LIST_FACTS,
  EC2_LIST_KEYS,
  REGION_FACTS,
  REGION_KEYS,
  selectRegionRecords,
} from '../lambda/adapters/aws/fact-descriptors.js';
import {
  type AnyKeyedFact,
  type Fail,
  KEYED_FACTS,
  KEYED_KEYS,
  type KeyedWorldView,
} from '../lambda/adapters/aws/keyed-fact-descriptors.js';
import { lazyIamEngine } from '../lambda/adapters/iam-engine/load.js';
import {
  createWorldPolicySimulator,
  principalPolicyDocuments,
} from '../lambda/adapters/world/permissions.js';
import type { World } from '../lambda/adapters/world/schema.js';
import { createWorldAwsFacts } from '../lambda/adapters/world/world-facts.js';
import type { ContextEntry, SimulationRequest } from '../lambda/core/facts/permissions.js';

export type AwsService = 'ec2' | 'ssm' | 'iam' | 'kms';

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

/** `Operation` of an IAM action `service:Operation` (what interceptors are told). */
function operationOf(action: string): string {
  return action.slice(action.indexOf(':') + 1);
}

/** The paging fields every EC2 Describe* input shares. */
interface PagedInput {
  readonly MaxResults?: number | undefined;
  readonly NextToken?: string | undefined;
}

function inputOf<T>(command: unknown): T {
  return (command as { readonly input: T }).input;
}

export interface WorldSdk extends AwsFactsClients {
  /**
   * The same IAM client, also answering SimulatePrincipalPolicy: by the policy engine for roles
   * with documents, from the world's decision table otherwise.
   */
  readonly iam: Pick<IAMClient, 'send'>;
  readonly kms: Pick<KMSClient, 'send'>;
}

export function createWorldSdk(
  world: World,
  options: { readonly now: Date; readonly intercept?: Interceptor }
): WorldSdk {
  const facts = createWorldAwsFacts({ world, now: options.now });
  const simulator = createWorldPolicySimulator(world);
  // Loaded on the first simulation of a role with documents: fleets without them never load it.
  const engine = lazyIamEngine();
  const intercept = options.intercept ?? passThrough;
  const roles = new Map(world.iam.roles.map((role) => [role.RoleName, role]));
  for (const profile of world.iam.instanceProfiles) {
    for (const role of profile.Roles ?? [])
      if (!roles.has(role.RoleName)) roles.set(role.RoleName, role);
  }
  const notFound = (name: string) => sdkError(name, 404, `${name}: not in the world file`);
  const fail: Fail = (code, httpStatusCode) => {
    throw httpStatusCode === 404 ? notFound(code) : sdkError(code, httpStatusCode);
  };

  // The fact commands are answered from their descriptors: command → query → world replay → page.
  const lists = EC2_LIST_KEYS.map((key) => {
    const fact: AnyEc2ListFact = EC2_LIST_FACTS[key];
    const section: readonly object[] = world.ec2[key];
    const recorded = new Map(section.map((item) => [fact.recordId(item), item]));
    const read = facts[fact.method as keyof typeof facts] as (
      query: object
    ) => Promise<readonly { readonly id: string }[]>;
    return { fact, recorded, read };
  });
  const view: KeyedWorldView = world;
  const keyed = KEYED_KEYS.map((key) => {
    const fact: AnyKeyedFact = KEYED_FACTS[key];
    return { fact, find: fact.index(view as never) };
  });

  /** The answer of a keyed fact's command, or undefined when no fact of `service` sends it. */
  function keyedAnswer(service: AwsService, command: unknown): Promise<unknown> | undefined {
    for (const { fact, find } of keyed) {
      if (fact.service !== service) continue;
      const sdk = fact.commands.find((candidate) => candidate.isCommand(command));
      if (sdk === undefined) continue;
      const input = inputOf<never>(command);
      return intercept(service, operationOf(sdk.action), input, async () => ({
        ...sdk.answer(input, find, fail),
        $metadata: {},
      }));
    }
    return undefined;
  }

  async function ec2(command: unknown): Promise<unknown> {
    if (EBS_ENCRYPTION_DEFAULTS.isCommand(command)) {
      const action = EBS_ENCRYPTION_DEFAULTS.actionOf(command);
      return intercept('ec2', operationOf(action), inputOf<object>(command), async () => {
        const byRegion = world.kms.ebsEncryptionDefaults;
        const recorded =
          byRegion !== undefined && Object.hasOwn(byRegion, world.region)
            ? byRegion[world.region]
            : undefined;
        return { ...EBS_ENCRYPTION_DEFAULTS.answer(command, recorded), $metadata: {} };
      });
    }
    for (const { fact, recorded, read } of lists) {
      if (!fact.isCommand(command)) continue;
      const input = inputOf<PagedInput>(command);
      return intercept('ec2', operationOf(fact.action), input, async () => {
        const found = await read(fact.queryOf(command));
        const result = page(found, input.MaxResults, input.NextToken);
        // Replay answers items of this very section: each has its recorded SDK shape.
        const items = result.items.flatMap((item) => recorded.get(item.id) ?? []);
        return { ...fact.output(items, result.nextToken), $metadata: {} };
      });
    }
    for (const key of REGION_KEYS) {
      const fact = REGION_FACTS[key] as unknown as AnyRegionFact;
      if (!fact.isCommand(command)) continue;
      const input = inputOf<PagedInput>(command);
      return intercept('ec2', operationOf(fact.action), input, async () => {
        // AWS always has offerings and instance types; a world without them for its region
        // answers none. The command's own query selects among the recorded records.
        const byRegion: Readonly<Record<string, readonly object[]>> | undefined = world[key];
        const records =
          byRegion !== undefined && Object.hasOwn(byRegion, world.region)
            ? (byRegion[world.region] ?? [])
            : [];
        const found = selectRegionRecords(fact, records, fact.queryOf(command));
        const result = page(found, input.MaxResults, input.NextToken);
        return {
          ...fact.output(
            result.items.map(({ record }) => record),
            result.nextToken
          ),
          $metadata: {},
        };
      });
    }
    throw new Error(`world SDK: unsupported EC2 command ${String(command)}`);
  }

  async function ssm(command: unknown): Promise<unknown> {
    const answer = keyedAnswer('ssm', command);
    if (answer === undefined)
      throw new Error(`world SDK: unsupported SSM command ${String(command)}`);
    return answer;
  }

  async function kms(command: unknown): Promise<unknown> {
    const answer = keyedAnswer('kms', command);
    if (answer === undefined)
      throw new Error(`world SDK: unsupported KMS command ${String(command)}`);
    return answer;
  }

  const managed = new Map((world.iam.policies ?? []).map((policy) => [policy.Arn, policy]));
  const knownPolicy = (policyArn: string) =>
    managed.has(policyArn) ||
    [...roles.values()].some(
      (role) =>
        role.PermissionsBoundary?.PermissionsBoundaryArn === policyArn ||
        (role.AttachedPolicies ?? []).some((policy) => policy.PolicyArn === policyArn)
    );

  async function iam(command: unknown): Promise<unknown> {
    const answer = keyedAnswer('iam', command);
    if (answer !== undefined) return answer;
    // IAM policy reads and simulations are no facts: answered here, documents URL-encoded as IAM
    // returns them. The world's own documents when it gives them; otherwise the decision table
    // reads no request context, so the policies behind it are condition-free documents.
    if (command instanceof GetAccountAuthorizationDetailsCommand) {
      const input = command.input;
      return intercept('iam', 'GetAccountAuthorizationDetails', input, async () => {
        const filter = input.Filter ?? [];
        const wants = (kind: string) => filter.length === 0 || filter.includes(kind as never);
        const roleDetails = wants('Role')
          ? [...roles.values()].map((role) => {
              const { AttachedPolicies, RolePolicyList, ...rest } = role;
              return {
                ...rest,
                AttachedManagedPolicies: AttachedPolicies ?? [],
                RolePolicyList: (RolePolicyList ?? []).map((policy) => ({
                  PolicyName: policy.PolicyName,
                  PolicyDocument: encodeURIComponent(policy.PolicyDocument),
                })),
                InstanceProfileList: world.iam.instanceProfiles.filter((profile) =>
                  (profile.Roles ?? []).some((held) => held.RoleName === role.RoleName)
                ),
              };
            })
          : [];
        // Customer managed policies: those of an account, not AWS's (`arn:aws:iam::aws:…`).
        const localPolicies = wants('LocalManagedPolicy')
          ? [...managed.values()]
              .filter((policy) => policy.Arn.split(':')[4] !== 'aws')
              .map((policy) => ({
                Arn: policy.Arn,
                PolicyName: policy.PolicyName,
                DefaultVersionId: policy.DefaultVersionId ?? 'v1',
                PolicyVersionList: [
                  {
                    VersionId: policy.DefaultVersionId ?? 'v1',
                    IsDefaultVersion: true,
                    Document: encodeURIComponent(policy.Document),
                  },
                ],
              }))
          : [];
        // One list paged across both kinds, MaxItems (default 100) at a time, as IAM counts them.
        const items = [
          ...roleDetails.map((detail) => ({ role: detail })),
          ...localPolicies.map((detail) => ({ policy: detail })),
        ];
        const result = page(items, input.MaxItems ?? 100, input.Marker);
        return {
          RoleDetailList: result.items.flatMap((item) => ('role' in item ? [item.role] : [])),
          Policies: result.items.flatMap((item) => ('policy' in item ? [item.policy] : [])),
          UserDetailList: [],
          GroupDetailList: [],
          IsTruncated: result.nextToken !== undefined,
          ...(result.nextToken === undefined ? {} : { Marker: result.nextToken }),
          $metadata: {},
        };
      });
    }
    if (command instanceof ListRolePoliciesCommand) {
      const input = command.input;
      return intercept('iam', 'ListRolePolicies', input, async () => {
        const role = roles.get(input.RoleName ?? '');
        if (!role) throw notFound('NoSuchEntity');
        const names = (role.RolePolicyList ?? []).map((policy) => policy.PolicyName);
        return { PolicyNames: names, IsTruncated: false, $metadata: {} };
      });
    }
    if (command instanceof GetRolePolicyCommand) {
      const input = command.input;
      return intercept('iam', 'GetRolePolicy', input, async () => {
        const inline = roles
          .get(input.RoleName ?? '')
          ?.RolePolicyList?.find((policy) => policy.PolicyName === input.PolicyName);
        if (!inline) throw notFound('NoSuchEntity');
        return {
          RoleName: input.RoleName,
          PolicyName: inline.PolicyName,
          PolicyDocument: encodeURIComponent(inline.PolicyDocument),
          $metadata: {},
        };
      });
    }
    if (command instanceof GetPolicyCommand) {
      const input = command.input;
      return intercept('iam', 'GetPolicy', input, async () => {
        if (!knownPolicy(input.PolicyArn ?? '')) throw notFound('NoSuchEntity');
        const policy = managed.get(input.PolicyArn ?? '');
        return {
          Policy: {
            Arn: input.PolicyArn,
            ...(policy ? { PolicyName: policy.PolicyName } : {}),
            DefaultVersionId: policy?.DefaultVersionId ?? 'v1',
          },
          $metadata: {},
        };
      });
    }
    if (command instanceof GetPolicyVersionCommand) {
      const input = command.input;
      return intercept('iam', 'GetPolicyVersion', input, async () => {
        if (!knownPolicy(input.PolicyArn ?? '')) throw notFound('NoSuchEntity');
        const policy = managed.get(input.PolicyArn ?? '');
        // Only the default version is recorded.
        if (policy && input.VersionId !== (policy.DefaultVersionId ?? 'v1'))
          throw notFound('NoSuchEntity');
        return {
          PolicyVersion: {
            VersionId: input.VersionId,
            IsDefaultVersion: true,
            Document: encodeURIComponent(policy?.Document ?? CONDITION_FREE_POLICY),
          },
          $metadata: {},
        };
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
        const documents = principalPolicyDocuments(world, input.PolicySourceArn ?? '');
        if (documents !== undefined) return engine(documents, input);
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
        // One result per action and resource, MaxItems (default 100) to a page, as IAM counts them.
        const all = await simulator.simulate(request);
        const { items: results, nextToken } = page(all, input.MaxItems ?? 100, input.Marker);
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
        return {
          EvaluationResults: [...byAction.values()],
          IsTruncated: nextToken !== undefined,
          ...(nextToken === undefined ? {} : { Marker: nextToken }),
          $metadata: {},
        };
      });
    }
    throw new Error(`world SDK: unsupported IAM command ${String(command)}`);
  }

  // The SDK's `send` is overloaded; adapters only use the promise form.
  return {
    ec2: { send: ec2 } as unknown as Pick<EC2Client, 'send'>,
    ssm: { send: ssm } as unknown as Pick<SSMClient, 'send'>,
    iam: { send: iam } as unknown as Pick<IAMClient, 'send'>,
    kms: { send: kms } as unknown as Pick<KMSClient, 'send'>,
  };
}
