// One descriptor per keyed AWS fact (looked up by name): its SDK commands, the SDK→core
// translation (not-found is the shared classification of aws-errors.ts), its place and item schema in the world file, what a
// snapshot records, the replay lookup, its answers as an emulated SDK (bench), and its IAM actions.
// The live readers (ssm-reader.ts, iam-reader.ts), the recorder, the world schema, the world replay
// and the bench's world SDK are built from this table.
import {
  type AttachedPolicy,
  GetInstanceProfileCommand,
  type GetInstanceProfileCommandInput,
  type GetInstanceProfileCommandOutput,
  GetRoleCommand,
  type GetRoleCommandInput,
  type GetRoleCommandOutput,
  ListAttachedRolePoliciesCommand,
  type ListAttachedRolePoliciesCommandInput,
  type ListAttachedRolePoliciesCommandOutput,
} from '@aws-sdk/client-iam';
import {
  DescribeKeyCommand,
  type DescribeKeyCommandInput,
  type DescribeKeyCommandOutput,
  GetKeyPolicyCommand,
  type GetKeyPolicyCommandInput,
  type GetKeyPolicyCommandOutput,
  ListGrantsCommand,
  type ListGrantsCommandInput,
  type ListGrantsCommandOutput,
} from '@aws-sdk/client-kms';
import {
  GetParameterCommand,
  type GetParameterCommandInput,
  type GetParameterCommandOutput,
  GetParametersCommand,
  type GetParametersCommandInput,
  type GetParametersCommandOutput,
} from '@aws-sdk/client-ssm';
import * as z from 'zod';
import type { InstanceProfile, KmsGrant, KmsKeyLookup, Role } from '../../core/facts/aws.js';
import { ok, type Slice, unavailable } from '../../core/facts/slice.js';
import { PARAMETERS_PER_REQUEST } from '../../core/ports/aws-facts.js';
import { StringMapSchema, tagMapOf } from '../../core/selectors/tag-map.js';
import { isAccessDenied, isNotFound, toSourceUnavailable } from './aws-errors.js';
import { collectPages } from './paginate.js';
import { PolicyDocumentSchema } from './policy-document.js';
import {
  instanceProfileFromSdk,
  kmsGrantFromSdk,
  kmsKeyFromSdk,
  roleFromSdk,
} from './sdk-shapes.js';

/** An SDK client's `send`, promise form (the SDK overloads it per command class). */
export type Send = (command: object) => Promise<unknown>;

/** World-file sections that hold keyed facts (`world.<section>.<table key>`). */
export type KeyedSection = 'ssm' | 'iam' | 'kms';

/** The SDK clients keyed facts are read with. */
export type KeyedService = 'ssm' | 'iam' | 'kms';

/** Throws an error shaped like the SDK's (the bench's emulated AWS answers with it). */
export type Fail = (code: string, httpStatusCode: number) => never;

/** One SDK command of a fact, answered from the recorded items for the bench's emulated AWS. */
export interface FactCommand<Item> {
  /** `service:Operation`, also the source a failure of the call is reported under. */
  readonly action: string;
  isCommand(command: unknown): boolean;
  /** The SDK output for `input`; `fail` raises what AWS would (NoSuchEntity, a limit). */
  answer(input: never, find: (name: string) => Item | undefined, fail: Fail): object;
}

/** Names read in one request, each answered as the single lookup would answer it. */
export interface Batch<Value, Method extends string = string> {
  /** The AwsFactsPort method that answers several names. */
  readonly method: Method;
  readonly action: string;
  /** Names per request (the API's limit). */
  readonly size: number;
  /** Names the batch answers under the name asked for; the others are read one by one. */
  batchable(name: string): boolean;
  command(names: readonly string[]): object;
  /** The names the output answers (undefined: does not exist); the rest are read one by one. */
  answers(output: unknown, names: readonly string[]): ReadonlyMap<string, Value | undefined>;
  /** A whole request failing so is read one by one (one denied name fails it all). */
  fallsBack(error: unknown): boolean;
}

/** What a snapshot keeps of one fact: every answered command, then the world file's value. */
export interface FactRecording<Recorded> {
  record(command: unknown, output: unknown): void;
  recorded(): Recorded;
}

/** Method syntax on purpose: any entry is then an `AnyKeyedFact` the builders can walk. */
export interface KeyedFact<
  Method extends string,
  Value,
  Item,
  Section extends KeyedSection,
  WorldValue extends z.ZodType,
  WorldView,
  BatchMethod extends string = never,
> {
  /** The AwsFactsPort method answering one name (undefined: it does not exist). */
  readonly method: Method;
  readonly service: KeyedService;
  /** The IAM actions one lookup calls (a batch adds its own `action`). */
  readonly actions: readonly string[];
  /** Kept under `world.<section>.<table key>`, parsed by `worldValue` (with its default). */
  readonly section: Section;
  readonly worldValue: WorldValue;
  readonly commands: readonly FactCommand<Item>[];
  readonly batch?: Batch<Value, BatchMethod>;
  /** The live lookup: not-found is undefined, any other failure a `SourceUnavailableError`. */
  read(send: Send, name: string): Promise<Value | undefined>;
  recording(): FactRecording<z.input<WorldValue>>;
  /** The recorded item a name stands for, over the parsed world file. */
  index(world: WorldView): (name: string) => Item | undefined;
  /** A recorded item → core fact (what the live lookup returns for it). */
  fromWorld(item: Item): Value;
}

/** Any entry of the table, as the generic builders see it. */
export type AnyKeyedFact = KeyedFact<
  string,
  unknown,
  unknown,
  KeyedSection,
  z.ZodType,
  never,
  string
>;

type Json = Record<string, unknown>;

/** Dates become ISO strings, `undefined` disappears: what JSON.stringify would write. */
export function plain<T>(value: T): Json {
  return JSON.parse(JSON.stringify(value)) as Json;
}

/** Recorded items, by their key's order (a snapshot is stable across runs). */
export function byKey(items: ReadonlyMap<string, Json>): Json[] {
  return [...items.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, item]) => item);
}

/** One call of `action`: not-found is undefined, any other failure names the action. */
async function lookup<T>(action: string, call: () => Promise<T>): Promise<T | undefined> {
  try {
    return await call();
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw toSourceUnavailable(action, error);
  }
}

function command<Input, Item>(spec: {
  readonly action: string;
  readonly Command: abstract new (input: Input) => object;
  readonly answer: (input: Input, find: (name: string) => Item | undefined, fail: Fail) => object;
}): FactCommand<Item> {
  const { Command } = spec;
  return {
    action: spec.action,
    isCommand: (candidate) => candidate instanceof Command,
    answer: (input, find, fail) => spec.answer(input as Input, find, fail),
  };
}

/** Types one entry; the descriptor keeps only what its builders need. */
function keyedFact<
  const Method extends string,
  Value,
  Item,
  const Section extends KeyedSection,
  WorldValue extends z.ZodType,
  WorldView,
  const BatchMethod extends string = never,
>(
  spec: KeyedFact<Method, Value, Item, Section, WorldValue, WorldView, BatchMethod>
): KeyedFact<Method, Value, Item, Section, WorldValue, WorldView, BatchMethod> {
  return spec;
}

// --- SSM parameters ---------------------------------------------------------------------------

/**
 * Names an SSM name-or-ARN can stand for. `…:parameter/a/b` is `/a/b`; `…:parameter/a` is `/a` or
 * `a` (the ARN of a name without a leading slash gains one).
 */
export function parameterNamesOf(nameOrArn: string): string[] {
  if (!nameOrArn.startsWith('arn:')) return [nameOrArn];
  const resource = nameOrArn.split(':').slice(5).join(':');
  const rest = resource.startsWith('parameter') ? resource.slice('parameter'.length) : resource;
  const name = rest.startsWith('//') ? rest.slice(1) : rest;
  return name.lastIndexOf('/') === 0 ? [name, name.slice(1)] : [name];
}

/** Stands in for any parameter value that is not an AMI id (it could be a secret). */
export const REDACTED_PARAMETER_VALUE = '<redacted by nodeclass-scan snapshot: not an AMI id>';

const AMI_ID = /^ami-[0-9a-f]{8,17}$/;

/**
 * Only AMI ids are recorded verbatim. Anything else (SecureString ciphertext, free text) is
 * replaced by a marker that, like the original, is not an `ami-` value, so replay finds the same.
 */
function recordedParameterValue(type: string | undefined, value: string | undefined): string {
  if (type !== 'SecureString' && value !== undefined && AMI_ID.test(value)) return value;
  return REDACTED_PARAMETER_VALUE;
}

/** A recorded parameter: the name it is kept under and its value. */
interface WorldParameter {
  readonly name: string;
  readonly value: string;
}

const parameters = keyedFact({
  method: 'getParameter',
  service: 'ssm',
  actions: ['ssm:GetParameter'],
  section: 'ssm',
  worldValue: StringMapSchema.default(() => tagMapOf([])),
  // Never decrypted: a SecureString's plaintext is no image id, and must not be read.
  read: (send, name): Promise<string | undefined> =>
    lookup('ssm:GetParameter', async () => {
      const input: GetParameterCommandInput = { Name: name, WithDecryption: false };
      const output = (await send(new GetParameterCommand(input))) as GetParameterCommandOutput;
      return output.Parameter?.Value;
    }),
  // Names GetParameters leaves unanswered, or all of a denied batch, are read one by one.
  batch: {
    method: 'getParameters',
    action: 'ssm:GetParameters',
    size: PARAMETERS_PER_REQUEST,
    // ARNs and `name:label` / `name:version` selectors come back under another name.
    batchable: (name) => !name.includes(':'),
    command: (names) => {
      const input: GetParametersCommandInput = { Names: [...names], WithDecryption: false };
      return new GetParametersCommand(input);
    },
    answers(output, names) {
      const typed = output as GetParametersCommandOutput;
      const values = new Map<string, string | undefined>();
      for (const parameter of typed.Parameters ?? []) {
        if (parameter.Name !== undefined && names.includes(parameter.Name)) {
          values.set(parameter.Name, parameter.Value);
        }
      }
      // InvalidParameters are the names that do not exist (GetParameter's ParameterNotFound).
      for (const name of typed.InvalidParameters ?? []) {
        if (names.includes(name) && !values.has(name)) values.set(name, undefined);
      }
      return values;
    },
    fallsBack: isAccessDenied,
  },
  commands: [
    command({
      action: 'ssm:GetParameter',
      Command: GetParameterCommand,
      answer: (
        input: GetParameterCommandInput,
        find: (name: string) => WorldParameter | undefined,
        fail
      ) => {
        const found = find(input.Name ?? '');
        if (found === undefined) return fail('ParameterNotFound', 404);
        return { Parameter: { Name: found.name, Type: 'String', Value: found.value } };
      },
    }),
    command({
      action: 'ssm:GetParameters',
      Command: GetParametersCommand,
      answer: (
        input: GetParametersCommandInput,
        find: (name: string) => WorldParameter | undefined,
        fail
      ) => {
        const names = input.Names ?? [];
        if (names.length > PARAMETERS_PER_REQUEST) return fail('ValidationException', 400);
        const found = names.map((name) => ({ name, parameter: find(name) }));
        return {
          Parameters: found.flatMap(({ parameter }) =>
            parameter === undefined
              ? []
              : [{ Name: parameter.name, Type: 'String', Value: parameter.value }]
          ),
          InvalidParameters: found.flatMap(({ name, parameter }) =>
            parameter === undefined ? [name] : []
          ),
        };
      },
    }),
  ],
  recording() {
    const values = new Map<string, string>();
    return {
      record(sent, output) {
        if (sent instanceof GetParametersCommand) {
          // Only plain names are batched, so each answer's Name is the name asked for.
          for (const parameter of (output as GetParametersCommandOutput).Parameters ?? []) {
            if (parameter.Name === undefined) continue;
            values.set(parameter.Name, recordedParameterValue(parameter.Type, parameter.Value));
          }
        } else if (sent instanceof GetParameterCommand) {
          const parameter = (output as GetParameterCommandOutput).Parameter;
          const name = parameter?.Name ?? parameterNamesOf(sent.input.Name ?? '')[0] ?? '';
          if (name !== '') {
            values.set(name, recordedParameterValue(parameter?.Type, parameter?.Value));
          }
        }
      },
      recorded: () => Object.fromEntries([...values].sort(([a], [b]) => a.localeCompare(b))),
    };
  },
  index: (world: { readonly ssm: { readonly parameters: Readonly<Record<string, string>> } }) => {
    const recorded = world.ssm.parameters;
    return (name): WorldParameter | undefined => {
      // Own keys only: a parameter named `toString` is not Object.prototype's.
      const found = parameterNamesOf(name).find((candidate) => Object.hasOwn(recorded, candidate));
      const value = found === undefined ? undefined : recorded[found];
      return found === undefined || value === undefined ? undefined : { name: found, value };
    };
  },
  fromWorld: (parameter): string | undefined => parameter.value,
});

// --- IAM instance profiles and roles ----------------------------------------------------------

const tag = z.looseObject({ Key: z.string().optional(), Value: z.string().optional() });
const tags = z.array(tag).optional();

const WorldRoleSchema = z.looseObject({
  RoleName: z.string(),
  Arn: z.string().optional(),
  Path: z.string().optional(),
  RoleId: z.string().optional(),
  /** URL-encoded or plain JSON, as IAM returns it. */
  AssumeRolePolicyDocument: z.string().optional(),
  PermissionsBoundary: z
    .looseObject({
      PermissionsBoundaryArn: z.string().optional(),
      PermissionsBoundaryType: z.string().optional(),
    })
    .optional(),
  /** `ListAttachedRolePolicies` output, recorded with the role. */
  AttachedPolicies: z
    .array(z.looseObject({ PolicyName: z.string().optional(), PolicyArn: z.string().optional() }))
    .optional(),
  /**
   * Inline policies, as GetAccountAuthorizationDetails' `RoleDetail` holds them. With them (or an
   * attached policy's document in `iam.policies`) the role's simulations evaluate its documents.
   */
  RolePolicyList: z
    .array(z.looseObject({ PolicyName: z.string(), PolicyDocument: PolicyDocumentSchema }))
    .optional(),
  Tags: tags,
});

const WorldInstanceProfileSchema = z.looseObject({
  InstanceProfileName: z.string(),
  Arn: z.string().optional(),
  Path: z.string().optional(),
  Roles: z.array(WorldRoleSchema).optional(),
  Tags: tags,
});

type WorldRole = z.output<typeof WorldRoleSchema>;
type WorldInstanceProfile = z.output<typeof WorldInstanceProfileSchema>;

const instanceProfiles = keyedFact({
  method: 'getInstanceProfile',
  service: 'iam',
  actions: ['iam:GetInstanceProfile'],
  section: 'iam',
  worldValue: z.array(WorldInstanceProfileSchema).default([]),
  read: async (send, name): Promise<InstanceProfile | undefined> => {
    const input: GetInstanceProfileCommandInput = { InstanceProfileName: name };
    const output = await lookup(
      'iam:GetInstanceProfile',
      () => send(new GetInstanceProfileCommand(input)) as Promise<GetInstanceProfileCommandOutput>
    );
    return output?.InstanceProfile ? instanceProfileFromSdk(output.InstanceProfile) : undefined;
  },
  commands: [
    command({
      action: 'iam:GetInstanceProfile',
      Command: GetInstanceProfileCommand,
      answer: (
        input: GetInstanceProfileCommandInput,
        find: (name: string) => WorldInstanceProfile | undefined,
        fail
      ) => {
        const profile = find(input.InstanceProfileName ?? '');
        return profile ? { InstanceProfile: profile } : fail('NoSuchEntity', 404);
      },
    }),
  ],
  recording() {
    const profiles = new Map<string, Json>();
    return {
      record(sent, output) {
        if (!(sent instanceof GetInstanceProfileCommand)) return;
        const profile = (output as GetInstanceProfileCommandOutput).InstanceProfile;
        if (profile?.InstanceProfileName !== undefined) {
          profiles.set(profile.InstanceProfileName, plain(profile));
        }
      },
      recorded: () => byKey(profiles) as z.input<typeof WorldInstanceProfileSchema>[],
    };
  },
  index: (world: {
    readonly iam: { readonly instanceProfiles: readonly WorldInstanceProfile[] };
  }) => {
    const byName = new Map(
      world.iam.instanceProfiles.map((profile) => [profile.InstanceProfileName, profile])
    );
    return (name) => byName.get(name);
  },
  fromWorld: instanceProfileFromSdk,
});

const roles = keyedFact({
  method: 'getRole',
  service: 'iam',
  actions: ['iam:GetRole', 'iam:ListAttachedRolePolicies'],
  section: 'iam',
  worldValue: z.array(WorldRoleSchema).default([]),
  /** GetRole + ListAttachedRolePolicies (all pages). */
  read: async (send, name): Promise<Role | undefined> => {
    const input: GetRoleCommandInput = { RoleName: name };
    const role = (
      await lookup(
        'iam:GetRole',
        () => send(new GetRoleCommand(input)) as Promise<GetRoleCommandOutput>
      )
    )?.Role;
    if (!role) return undefined;
    // Deleted between the two calls (not found): the role is gone.
    const attached = await lookup('iam:ListAttachedRolePolicies', () =>
      collectPages(
        'iam:ListAttachedRolePolicies',
        (marker) => {
          const page: ListAttachedRolePoliciesCommandInput = {
            RoleName: name,
            ...(marker === undefined ? {} : { Marker: marker }),
          };
          return send(
            new ListAttachedRolePoliciesCommand(page)
          ) as Promise<ListAttachedRolePoliciesCommandOutput>;
        },
        (page) => page.AttachedPolicies,
        (page) => (page.IsTruncated ? page.Marker : undefined)
      )
    );
    return attached === undefined ? undefined : roleFromSdk(role, attached);
  },
  commands: [
    command({
      action: 'iam:GetRole',
      Command: GetRoleCommand,
      answer: (input: GetRoleCommandInput, find: (name: string) => WorldRole | undefined, fail) => {
        const role = find(input.RoleName ?? '');
        if (!role) return fail('NoSuchEntity', 404);
        const { AttachedPolicies: _attached, RolePolicyList: _inline, ...rest } = role;
        return { Role: rest };
      },
    }),
    command({
      action: 'iam:ListAttachedRolePolicies',
      Command: ListAttachedRolePoliciesCommand,
      answer: (
        input: ListAttachedRolePoliciesCommandInput,
        find: (name: string) => WorldRole | undefined,
        fail
      ) => {
        const role = find(input.RoleName ?? '');
        if (!role) return fail('NoSuchEntity', 404);
        return { AttachedPolicies: role.AttachedPolicies ?? [], IsTruncated: false };
      },
    }),
  ],
  recording() {
    const found = new Map<string, Json>();
    const attached = new Map<string, Map<string, Json>>();
    return {
      record(sent, output) {
        if (sent instanceof GetRoleCommand) {
          const role = (output as GetRoleCommandOutput).Role;
          if (role?.RoleName !== undefined) found.set(role.RoleName, plain(role));
        } else if (sent instanceof ListAttachedRolePoliciesCommand) {
          const roleName = sent.input.RoleName ?? '';
          const policies = attached.get(roleName) ?? new Map<string, Json>();
          const page = (output as ListAttachedRolePoliciesCommandOutput).AttachedPolicies ?? [];
          for (const policy of page as AttachedPolicy[]) {
            if (policy.PolicyArn !== undefined) policies.set(policy.PolicyArn, plain(policy));
          }
          attached.set(roleName, policies);
        }
      },
      recorded: () =>
        byKey(found).map((role) => ({
          ...role,
          AttachedPolicies: byKey(attached.get(String(role.RoleName)) ?? new Map()),
        })) as z.input<typeof WorldRoleSchema>[],
    };
  },
  index: (world: {
    readonly iam: {
      readonly roles: readonly WorldRole[];
      readonly instanceProfiles: readonly WorldInstanceProfile[];
    };
  }) => {
    const byName = new Map(world.iam.roles.map((role) => [role.RoleName, role]));
    // A role recorded only inside an instance profile still answers GetRole.
    for (const profile of world.iam.instanceProfiles) {
      for (const role of profile.Roles ?? []) {
        if (!byName.has(role.RoleName)) byName.set(role.RoleName, role);
      }
    }
    return (name) => byName.get(name);
  },
  fromWorld: (role) => roleFromSdk(role, role.AttachedPolicies ?? []),
});

// --- KMS keys ------------------------------------------------------------------------------------

/** The key policy every KMS key has; the only name GetKeyPolicy accepts. */
const KEY_POLICY_NAME = 'default';

const WorldGrantSchema = z.looseObject({
  GrantId: z.string().optional(),
  GranteePrincipal: z.string().optional(),
  Operations: z.array(z.string()).optional(),
  Constraints: z.looseObject({}).optional(),
});

/**
 * A key as DescribeKey, GetKeyPolicy and ListGrants answered: an absent `Policy` or `Grants` is
 * one the scanner was refused (replayed as AccessDeniedException), as a snapshot records it.
 */
const WorldKmsKeySchema = z.looseObject({
  KeyMetadata: z.looseObject({
    KeyId: z.string().min(1),
    Arn: z.string().min(1),
    KeyState: z.string().optional(),
    KeyManager: z.string().optional(),
    KeyUsage: z.string().optional(),
    KeySpec: z.string().optional(),
    DeletionDate: z.union([z.string(), z.date()]).optional(),
    AWSAccountId: z.string().optional(),
  }),
  /** Alias names (`alias/ebs-nodes`) that resolve to the key. */
  Aliases: z.array(z.string()).optional(),
  Policy: PolicyDocumentSchema.optional(),
  Grants: z.array(WorldGrantSchema).optional(),
});

type WorldKmsKey = z.output<typeof WorldKmsKeySchema>;

/** `arn:aws:kms:us-east-1:111122223333:alias/ebs` → `alias/ebs`, with the ARN's region and account. */
function aliasParts(
  reference: string
): { name: string; region?: string; account?: string } | undefined {
  if (reference.startsWith('alias/')) return { name: reference };
  const parts = reference.split(':');
  const resource = parts.slice(5).join(':');
  if (parts[0] !== 'arn' || parts[2] !== 'kms' || !resource.startsWith('alias/')) return undefined;
  return { name: resource, region: parts[3] ?? '', account: parts[4] ?? '' };
}

/** Region and account of a key ARN. */
function arnScope(arn: string): { region: string; account: string } {
  const parts = arn.split(':');
  return { region: parts[3] ?? '', account: parts[4] ?? '' };
}

/** GetKeyPolicy or ListGrants of a customer managed key: what it answers, or why it could not. */
async function readOptional<T>(action: string, call: () => Promise<T>): Promise<Slice<T>> {
  try {
    return ok(await call());
  } catch (error) {
    const failure = toSourceUnavailable(action, error);
    return unavailable(failure.reason, failure.message);
  }
}

const kmsKeys = keyedFact({
  method: 'describeKmsKey',
  service: 'kms',
  actions: ['kms:DescribeKey', 'kms:GetKeyPolicy', 'kms:ListGrants'],
  section: 'kms',
  worldValue: z.array(WorldKmsKeySchema).default([]),
  /**
   * DescribeKey; then, for a customer managed key, its policy and grants by ARN (AWS managed keys
   * need neither: every principal of the account may use them through the service).
   */
  read: async (send, reference): Promise<KmsKeyLookup | undefined> => {
    const input: DescribeKeyCommandInput = { KeyId: reference };
    const metadata = (
      await lookup(
        'kms:DescribeKey',
        () => send(new DescribeKeyCommand(input)) as Promise<DescribeKeyCommandOutput>
      )
    )?.KeyMetadata;
    if (metadata === undefined) return undefined;
    const key = kmsKeyFromSdk(metadata);
    if (key.manager !== 'CUSTOMER' || key.arn === '') return { key };
    const [policy, grants] = await Promise.all([
      readOptional('kms:GetKeyPolicy', async () => {
        const request: GetKeyPolicyCommandInput = { KeyId: key.arn, PolicyName: KEY_POLICY_NAME };
        const output = (await send(new GetKeyPolicyCommand(request))) as GetKeyPolicyCommandOutput;
        if (output.Policy === undefined) throw new Error('GetKeyPolicy returned no policy');
        return output.Policy;
      }),
      readOptional('kms:ListGrants', () =>
        collectPages(
          'kms:ListGrants',
          (marker) => {
            const page: ListGrantsCommandInput = {
              KeyId: key.arn,
              ...(marker === undefined ? {} : { Marker: marker }),
            };
            return send(new ListGrantsCommand(page)) as Promise<ListGrantsCommandOutput>;
          },
          (page) => page.Grants,
          (page) => (page.Truncated ? page.NextMarker : undefined)
        ).then((list): KmsGrant[] => list.map(kmsGrantFromSdk))
      ),
    ]);
    return { key, policy, grants };
  },
  commands: [
    command({
      action: 'kms:DescribeKey',
      Command: DescribeKeyCommand,
      answer: (
        input: DescribeKeyCommandInput,
        find: (name: string) => WorldKmsKey | undefined,
        fail
      ) => {
        const key = find(input.KeyId ?? '');
        return key ? { KeyMetadata: key.KeyMetadata } : fail('NotFoundException', 404);
      },
    }),
    command({
      action: 'kms:GetKeyPolicy',
      Command: GetKeyPolicyCommand,
      answer: (
        input: GetKeyPolicyCommandInput,
        find: (name: string) => WorldKmsKey | undefined,
        fail
      ) => {
        const key = find(input.KeyId ?? '');
        if (key === undefined) return fail('NotFoundException', 404);
        if (key.Policy === undefined) return fail('AccessDeniedException', 400);
        return { Policy: key.Policy, PolicyName: KEY_POLICY_NAME };
      },
    }),
    command({
      action: 'kms:ListGrants',
      Command: ListGrantsCommand,
      answer: (
        input: ListGrantsCommandInput,
        find: (name: string) => WorldKmsKey | undefined,
        fail
      ) => {
        const key = find(input.KeyId ?? '');
        if (key === undefined) return fail('NotFoundException', 404);
        if (key.Grants === undefined) return fail('AccessDeniedException', 400);
        return { Grants: key.Grants, Truncated: false };
      },
    }),
  ],
  recording() {
    const keys = new Map<string, Json>();
    const aliases = new Map<string, Set<string>>();
    const policies = new Map<string, string>();
    const grants = new Map<string, Json[]>();
    return {
      record(sent, output) {
        if (sent instanceof DescribeKeyCommand) {
          const metadata = (output as DescribeKeyCommandOutput).KeyMetadata;
          if (metadata?.Arn === undefined) return;
          keys.set(metadata.Arn, plain(metadata));
          const alias = aliasParts(sent.input.KeyId ?? '');
          if (alias !== undefined) {
            aliases.set(metadata.Arn, (aliases.get(metadata.Arn) ?? new Set()).add(alias.name));
          }
        } else if (sent instanceof GetKeyPolicyCommand) {
          const policy = (output as GetKeyPolicyCommandOutput).Policy;
          if (policy !== undefined) policies.set(sent.input.KeyId ?? '', policy);
        } else if (sent instanceof ListGrantsCommand) {
          const keyArn = sent.input.KeyId ?? '';
          const page = ((output as ListGrantsCommandOutput).Grants ?? []).map(plain);
          grants.set(keyArn, [...(sent.input.Marker ? (grants.get(keyArn) ?? []) : []), ...page]);
        }
      },
      recorded: () =>
        byKey(keys).map((metadata) => {
          const arn = String(metadata.Arn);
          const names = [...(aliases.get(arn) ?? [])].sort();
          const policy = policies.get(arn);
          const list = grants.get(arn);
          return {
            KeyMetadata: metadata,
            ...(names.length === 0 ? {} : { Aliases: names }),
            ...(policy === undefined ? {} : { Policy: policy }),
            ...(list === undefined ? {} : { Grants: list }),
          };
        }) as z.input<typeof WorldKmsKeySchema>[],
    };
  },
  index: (world: {
    readonly region: string;
    readonly kms: { readonly keys: readonly WorldKmsKey[] };
  }) => {
    const keys = world.kms.keys;
    return (reference) => {
      const alias = aliasParts(reference);
      return keys.find((key) => {
        const { Arn, KeyId } = key.KeyMetadata;
        const scope = arnScope(Arn);
        if (alias !== undefined) {
          // A bare alias or key id names a key of the world's region; an ARN names its own.
          const region = alias.region ?? world.region;
          return (
            (key.Aliases ?? []).includes(alias.name) &&
            scope.region === region &&
            (alias.account === undefined || scope.account === alias.account)
          );
        }
        if (reference === Arn) return true;
        return reference === KeyId && scope.region === world.region;
      });
    };
  },
  fromWorld: (key): KmsKeyLookup => {
    const value = kmsKeyFromSdk(key.KeyMetadata);
    if (value.manager !== 'CUSTOMER') return { key: value };
    const refused = (action: string): Slice<never> =>
      unavailable(
        'access-denied',
        `${action} failed (AccessDeniedException): not recorded in the world file`
      );
    return {
      key: value,
      policy: key.Policy === undefined ? refused('kms:GetKeyPolicy') : ok(key.Policy),
      grants:
        key.Grants === undefined
          ? refused('kms:ListGrants')
          : ok(key.Grants.map((grant) => kmsGrantFromSdk(grant))),
    };
  },
});

/** The keyed facts, by their key under `world.<section>`. */
export const KEYED_FACTS = { parameters, instanceProfiles, roles, keys: kmsKeys };

export type KeyedFacts = typeof KEYED_FACTS;
export type KeyedKey = keyof KeyedFacts;

/** The table's keys, in its order. */
export const KEYED_KEYS = Object.keys(KEYED_FACTS) as KeyedKey[];

type ValueOf<F> =
  F extends KeyedFact<string, infer Value, never, KeyedSection, z.ZodType, never, string>
    ? Value
    : never;
export type BatchMethodOf<F> = F extends {
  readonly batch?: { readonly method: infer M extends string };
}
  ? M
  : never;

/** The port methods the table answers: one lookup per entry, plus each entry's batch. */
export type KeyedMethods = {
  readonly [K in KeyedKey as KeyedFacts[K]['method']]: (
    name: string
  ) => Promise<ValueOf<KeyedFacts[K]> | undefined>;
} & {
  readonly [K in KeyedKey as BatchMethodOf<KeyedFacts[K]>]: (
    names: readonly string[]
  ) => Promise<Map<string, ValueOf<KeyedFacts[K]> | undefined>>;
};

/** The world file's view every entry's `index` reads (the parsed World satisfies it). */
export type KeyedWorldView = UnionToIntersection<Parameters<KeyedFacts[KeyedKey]['index']>[0]>;
type UnionToIntersection<U> = (U extends unknown ? (value: U) => void : never) extends (
  value: infer I
) => void
  ? I
  : never;

/**
 * One port method per entry (and per batch), for the entries `include` keeps: `lookup` answers one
 * name, `batch` several (its default reads them one by one).
 */
export function keyedMethods(
  lookup: (fact: AnyKeyedFact, key: KeyedKey) => (name: string) => Promise<unknown>,
  options: {
    readonly include?: (fact: AnyKeyedFact) => boolean;
    readonly batch?: (
      fact: AnyKeyedFact,
      batch: Batch<unknown>,
      one: (name: string) => Promise<unknown>
    ) => (names: readonly string[]) => Promise<Map<string, unknown>>;
  } = {}
): KeyedMethods {
  const batchOf = options.batch ?? ((_fact, _batch, one) => (names) => singly(names, one));
  const methods = KEYED_KEYS.flatMap((key) => {
    const fact: AnyKeyedFact = KEYED_FACTS[key];
    if (options.include && !options.include(fact)) return [];
    const one = lookup(fact, key);
    const batched =
      fact.batch === undefined ? [] : [[fact.batch.method, batchOf(fact, fact.batch, one)]];
    return [[fact.method, one], ...batched];
  });
  // The mapped type cannot be checked entry by entry; `lookup` keeps each method's value.
  return Object.fromEntries(methods) as unknown as KeyedMethods;
}

async function singly<Value>(
  names: readonly string[],
  one: (name: string) => Promise<Value>
): Promise<Map<string, Value>> {
  return new Map(await Promise.all(names.map(async (name) => [name, await one(name)] as const)));
}

/**
 * The live batch: distinct batchable names in requests of `batch.size`, the others (and any name a
 * request leaves unanswered, or all of a request that `fallsBack`) through the single lookup.
 */
export function readBatched(
  send: Send,
  batch: Batch<unknown>,
  one: (name: string) => Promise<unknown>
): (names: readonly string[]) => Promise<Map<string, unknown>> {
  async function request(names: readonly string[]): Promise<Map<string, unknown>> {
    let output: unknown;
    try {
      output = await send(batch.command(names));
    } catch (error) {
      if (batch.fallsBack(error)) return singly(names, one);
      throw toSourceUnavailable(batch.action, error);
    }
    const values = new Map<string, unknown>(batch.answers(output, names));
    const unanswered = names.filter((name) => !values.has(name));
    for (const [name, value] of await singly(unanswered, one)) values.set(name, value);
    return values;
  }
  return async (names) => {
    const unique = [...new Set(names)];
    const plainNames = unique.filter((name) => batch.batchable(name));
    const requests: string[][] = [];
    for (let start = 0; start < plainNames.length; start += batch.size) {
      requests.push(plainNames.slice(start, start + batch.size));
    }
    const results = await Promise.all([
      ...requests.map((names) => request(names)),
      singly(
        unique.filter((name) => !batch.batchable(name)),
        one
      ),
    ]);
    const values = new Map<string, unknown>();
    for (const result of results) for (const [name, value] of result) values.set(name, value);
    return values;
  };
}

type SectionFields<S extends KeyedSection> = {
  readonly [K in KeyedKey as KeyedFacts[K]['section'] extends S
    ? K
    : never]: KeyedFacts[K]['worldValue'];
};

/** The world-file fields of one section's keyed facts (each with its default). */
export function keyedWorldFields<S extends KeyedSection>(section: S): SectionFields<S> {
  return Object.fromEntries(
    KEYED_KEYS.filter((key) => KEYED_FACTS[key].section === section).map((key) => [
      key,
      KEYED_FACTS[key].worldValue,
    ])
  ) as unknown as SectionFields<S>;
}

/** What a snapshot recorded of every keyed fact, by world-file section and key. */
export type RecordedKeyed = {
  readonly [S in KeyedSection]: {
    [K in KeyedKey as KeyedFacts[K]['section'] extends S ? K : never]: z.input<
      KeyedFacts[K]['worldValue']
    >;
  };
};

/** Fresh recordings of every keyed fact; `record` takes any command of `service`. */
export function keyedRecordings(): {
  record(service: KeyedService, command: unknown, output: unknown): void;
  recorded(): RecordedKeyed;
} {
  const recordings = KEYED_KEYS.map((key) => ({
    key,
    fact: KEYED_FACTS[key] as AnyKeyedFact,
    recording: KEYED_FACTS[key].recording() as FactRecording<unknown>,
  }));
  return {
    record(service, sent, output) {
      for (const { fact, recording } of recordings) {
        if (fact.service === service) recording.record(sent, output);
      }
    },
    recorded() {
      const sections: Record<string, Record<string, unknown>> = { ssm: {}, iam: {}, kms: {} };
      for (const { key, fact, recording } of recordings) {
        const section = sections[fact.section] ?? {};
        section[key] = recording.recorded();
        sections[fact.section] = section;
      }
      return sections as unknown as RecordedKeyed;
    },
  };
}
