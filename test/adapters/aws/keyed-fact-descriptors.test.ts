// Table-driven over every keyed fact descriptor (read by name): an entry alone yields the live
// lookup (its SDK commands, translated), not-found and denial classification, its declared IAM
// actions, snapshot recording, the world section and replay, and the bench's emulated answers.
// `SAMPLES` is keyed by the table, so a new entry does not compile here without its sample.
import {
  GetInstanceProfileCommand,
  GetRoleCommand,
  IAMClient,
  ListAttachedRolePoliciesCommand,
} from '@aws-sdk/client-iam';
import {
  DescribeKeyCommand,
  GetKeyPolicyCommand,
  KMSClient,
  ListGrantsCommand,
} from '@aws-sdk/client-kms';
import { GetParameterCommand, GetParametersCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { createLiveAwsFacts } from '../../../lambda/adapters/aws/aws-facts-adapter.js';
import {
  DECLARED_ACTIONS,
  HANDLER_ACTIONS,
  SCANNING_HANDLERS,
} from '../../../lambda/adapters/aws/declared-actions.js';
import { AWS_FACT_ACTIONS } from '../../../lambda/adapters/aws/fact-descriptors.js';
import {
  KEYED_FACTS,
  KEYED_KEYS,
  type KeyedKey,
} from '../../../lambda/adapters/aws/keyed-fact-descriptors.js';
import { createAwsRecorder } from '../../../lambda/adapters/world/recorder.js';
import { WorldSchema } from '../../../lambda/adapters/world/schema.js';
import type { AwsFactsPort } from '../../../lambda/core/ports/aws-facts.js';
import { SCAN_TIME } from '../../support/aws-builders.js';
import { RECORDED_ACCOUNT, recordedWorld } from '../../support/recorded-world.js';

const ACCOUNT = RECORDED_ACCOUNT;
const ssm = mockClient(SSMClient);
const iam = mockClient(IAMClient);
const kms = mockClient(KMSClient);

afterEach(() => {
  ssm.reset();
  iam.reset();
  kms.reset();
});

const error = (name: string) => Object.assign(new Error(name), { name });

interface Sample {
  readonly name: string;
  /** Has the mocked SDK answer a lookup of `name` (an existing item). */
  arrange(): void;
  /** Has the mocked SDK answer every command of the fact with `error`. */
  fail(failure: Error): void;
  /** The commands one lookup sends, in order: class name and input. */
  readonly sent: readonly (readonly [string, object])[];
  /** The core fact the lookup answers. */
  readonly value: unknown;
}

const ROLE = {
  RoleName: 'node',
  Arn: `arn:aws:iam::${ACCOUNT}:role/node`,
  Path: '/',
  RoleId: 'AROAEXAMPLE',
  AssumeRolePolicyDocument: encodeURIComponent('{"Version":"2012-10-17","Statement":[]}'),
};
const POLICY = (name: string) => ({
  PolicyName: name,
  PolicyArn: `arn:aws:iam::aws:policy/${name}`,
});

const KEY_ARN = `arn:aws:kms:us-east-1:${ACCOUNT}:key/1234abcd-12ab-34cd-56ef-1234567890ab`;
const KEY_POLICY = JSON.stringify({
  Version: '2012-10-17',
  Statement: [
    {
      Sid: 'Enable IAM User Permissions',
      Effect: 'Allow',
      Principal: { AWS: `arn:aws:iam::${ACCOUNT}:root` },
      Action: 'kms:*',
      Resource: '*',
    },
  ],
});

const SAMPLES: Record<KeyedKey, Sample> = {
  parameters: {
    name: '/aws/service/eks/ami',
    arrange: () => {
      ssm.on(GetParameterCommand).resolves({
        Parameter: { Name: '/aws/service/eks/ami', Type: 'String', Value: 'ami-0123456789abcdef0' },
      });
    },
    fail: (failure) => {
      ssm.on(GetParameterCommand).rejects(failure);
    },
    sent: [['GetParameterCommand', { Name: '/aws/service/eks/ami', WithDecryption: false }]],
    value: 'ami-0123456789abcdef0',
  },
  instanceProfiles: {
    name: 'node-profile',
    arrange: () => {
      iam.on(GetInstanceProfileCommand).resolves({
        InstanceProfile: {
          InstanceProfileName: 'node-profile',
          InstanceProfileId: 'AIPAEXAMPLE',
          Arn: `arn:aws:iam::${ACCOUNT}:instance-profile/node-profile`,
          Path: '/',
          CreateDate: SCAN_TIME,
          Roles: [{ ...ROLE, CreateDate: SCAN_TIME }],
        },
      });
    },
    fail: (failure) => {
      iam.on(GetInstanceProfileCommand).rejects(failure);
    },
    sent: [['GetInstanceProfileCommand', { InstanceProfileName: 'node-profile' }]],
    value: {
      name: 'node-profile',
      arn: `arn:aws:iam::${ACCOUNT}:instance-profile/node-profile`,
      path: '/',
      roleNames: ['node'],
    },
  },
  roles: {
    name: 'node',
    arrange: () => {
      iam.on(GetRoleCommand).resolves({ Role: { ...ROLE, CreateDate: SCAN_TIME } });
      // Two pages: the Marker of the first is sent for the second.
      iam
        .on(ListAttachedRolePoliciesCommand, { RoleName: 'node' })
        .resolves({ AttachedPolicies: [POLICY('A')], IsTruncated: true, Marker: 'm-2' })
        .on(ListAttachedRolePoliciesCommand, { RoleName: 'node', Marker: 'm-2' })
        .resolves({ AttachedPolicies: [POLICY('B')], IsTruncated: false });
    },
    fail: (failure) => {
      iam.on(GetRoleCommand).rejects(failure);
    },
    sent: [
      ['GetRoleCommand', { RoleName: 'node' }],
      ['ListAttachedRolePoliciesCommand', { RoleName: 'node' }],
      ['ListAttachedRolePoliciesCommand', { RoleName: 'node', Marker: 'm-2' }],
    ],
    value: {
      name: 'node',
      arn: `arn:aws:iam::${ACCOUNT}:role/node`,
      path: '/',
      assumeRolePolicyDocument: '{"Version":"2012-10-17","Statement":[]}',
      attachedPolicyArns: ['arn:aws:iam::aws:policy/A', 'arn:aws:iam::aws:policy/B'],
    },
  },
  keys: {
    name: 'alias/nodes',
    arrange: () => {
      kms.on(DescribeKeyCommand).resolves({
        KeyMetadata: {
          KeyId: '1234abcd-12ab-34cd-56ef-1234567890ab',
          Arn: KEY_ARN,
          AWSAccountId: ACCOUNT,
          KeyState: 'Enabled',
          KeyManager: 'CUSTOMER',
          KeyUsage: 'ENCRYPT_DECRYPT',
          KeySpec: 'SYMMETRIC_DEFAULT',
        },
      });
      kms.on(GetKeyPolicyCommand).resolves({ Policy: KEY_POLICY, PolicyName: 'default' });
      // Two pages of grants: the first page's marker is sent for the second.
      kms
        .on(ListGrantsCommand, { KeyId: KEY_ARN })
        .resolves({
          Grants: [
            {
              GrantId: 'g-1',
              GranteePrincipal: 'arn:aws:iam::111122223333:role/a',
              Operations: ['Decrypt'],
            },
          ],
          Truncated: true,
          NextMarker: 'm-2',
        })
        .on(ListGrantsCommand, { KeyId: KEY_ARN, Marker: 'm-2' })
        .resolves({
          Grants: [
            {
              GrantId: 'g-2',
              GranteePrincipal: 'arn:aws:iam::111122223333:role/b',
              Operations: ['Decrypt'],
              Constraints: { EncryptionContextSubset: { 'aws:ebs:id': 'vol-1' } },
            },
          ],
          Truncated: false,
        });
    },
    fail: (failure) => {
      kms.on(DescribeKeyCommand).rejects(failure);
    },
    sent: [
      ['DescribeKeyCommand', { KeyId: 'alias/nodes' }],
      ['GetKeyPolicyCommand', { KeyId: KEY_ARN, PolicyName: 'default' }],
      ['ListGrantsCommand', { KeyId: KEY_ARN }],
      ['ListGrantsCommand', { KeyId: KEY_ARN, Marker: 'm-2' }],
    ],
    value: {
      key: {
        keyId: '1234abcd-12ab-34cd-56ef-1234567890ab',
        arn: KEY_ARN,
        state: 'Enabled',
        manager: 'CUSTOMER',
        usage: 'ENCRYPT_DECRYPT',
        spec: 'SYMMETRIC_DEFAULT',
      },
      policy: { status: 'ok', value: KEY_POLICY },
      grants: {
        status: 'ok',
        value: [
          {
            grantId: 'g-1',
            granteePrincipal: 'arn:aws:iam::111122223333:role/a',
            operations: ['Decrypt'],
            constrained: false,
          },
          {
            grantId: 'g-2',
            granteePrincipal: 'arn:aws:iam::111122223333:role/b',
            operations: ['Decrypt'],
            constrained: true,
            constraints: 'EncryptionContextSubset {"aws:ebs:id":"vol-1"}',
          },
        ],
      },
    },
  },
};

function sentCommands(): [string, object][] {
  return [...ssm.calls(), ...iam.calls(), ...kms.calls()].map((call) => {
    const sent = call.args[0] as unknown as { constructor: { name: string }; input: object };
    return [sent.constructor.name, sent.input];
  });
}

/** A port method by name, called with one name. */
function lookup(port: AwsFactsPort, method: string, name: string): Promise<unknown> {
  return (port[method as keyof AwsFactsPort] as (name: string) => Promise<unknown>).call(
    port,
    name
  );
}

const live = () =>
  createLiveAwsFacts({
    ec2: {} as never,
    ssm: new SSMClient({}),
    iam: new IAMClient({}),
    kms: new KMSClient({}),
  });

describe.each(KEYED_KEYS)('keyed fact %s', (key) => {
  const fact = KEYED_FACTS[key];
  const sample = SAMPLES[key];

  it('sends the commands its descriptor builds and translates the answer', async () => {
    // Arrange
    sample.arrange();

    // Act
    const value = await lookup(live(), fact.method, sample.name);

    // Assess
    expect(sentCommands()).toEqual(sample.sent);
    expect(value).toEqual(sample.value);
  });

  it('answers undefined for a name that does not exist', async () => {
    // Arrange
    sample.fail(error(key === 'parameters' ? 'ParameterNotFound' : 'NoSuchEntity'));

    // Act
    const value = await lookup(live(), fact.method, sample.name);

    // Assess
    expect(value).toBeUndefined();
  });

  it('maps a denial to the unavailable source named by its first action', async () => {
    // Arrange
    sample.fail(error('AccessDeniedException'));

    // Act
    const read = lookup(live(), fact.method, sample.name);

    // Assess
    await expect(read).rejects.toMatchObject({
      source: fact.actions[0],
      reason: 'access-denied',
    });
  });

  it('declares the actions it calls for every scanning Lambda', () => {
    // Assess
    expect(AWS_FACT_ACTIONS[fact.method]).toEqual(fact.actions);
    for (const action of fact.actions) {
      expect(DECLARED_ACTIONS.awsFacts).toContain(action);
      for (const handler of SCANNING_HANDLERS) {
        expect(HANDLER_ACTIONS[handler].awsFacts).toContain(action);
      }
    }
  });

  it('records what the live scan read; the world file and the bench replay it', async () => {
    // Arrange
    sample.arrange();
    const recorder = createAwsRecorder({
      ec2: {} as never,
      ssm: new SSMClient({}),
      iam: new IAMClient({}),
      kms: new KMSClient({}),
    });

    // Act
    const read = await lookup(createLiveAwsFacts(recorder.clients), fact.method, sample.name);
    const { replay, bench } = recordedWorld(recorder);

    // Assess
    expect(read).toEqual(sample.value);
    expect(await lookup(replay, fact.method, sample.name)).toEqual(read);
    expect(await lookup(bench, fact.method, sample.name)).toEqual(read);
    expect(await lookup(replay, fact.method, 'absent')).toBeUndefined();
    expect(await lookup(bench, fact.method, 'absent')).toBeUndefined();
  });
});

describe('the keyed facts table', () => {
  it('gives every world file an empty value per fact when its section is absent', () => {
    // Act
    const world = WorldSchema.parse({ version: 1, account: ACCOUNT, region: 'us-east-1' });

    // Assess
    for (const key of KEYED_KEYS) {
      const section: Record<string, unknown> = world[KEYED_FACTS[key].section];
      expect(section[key]).toEqual(key === 'parameters' ? {} : []);
    }
    expect(world.iam.permissions).toEqual([]);
    expect(world.iam.permissionsDefault).toBe('allowed');
  });

  it('rejects a recorded item its schema refuses (a role without RoleName)', () => {
    // Act
    const parsed = WorldSchema.safeParse({
      version: 1,
      account: ACCOUNT,
      region: 'us-east-1',
      iam: { roles: [{ Arn: 'arn:aws:iam::111122223333:role/x' }] },
    });

    // Assess
    expect(parsed.success).toBe(false);
  });

  it('batches parameters: GetParameters for plain names, the answer recorded and replayed', async () => {
    // Arrange
    ssm.on(GetParametersCommand).resolves({
      Parameters: [{ Name: '/a', Type: 'String', Value: 'ami-0123456789abcdef0' }],
      InvalidParameters: ['/b'],
    });
    const recorder = createAwsRecorder({
      ec2: {} as never,
      ssm: new SSMClient({}),
      iam: new IAMClient({}),
    });

    // Act
    const values = await createLiveAwsFacts(recorder.clients).getParameters?.(['/a', '/b']);

    // Assess
    expect(sentCommands()).toEqual([
      ['GetParametersCommand', { Names: ['/a', '/b'], WithDecryption: false }],
    ]);
    expect(values).toEqual(
      new Map([
        ['/a', 'ami-0123456789abcdef0'],
        ['/b', undefined],
      ])
    );
    expect(recorder.recorded().keyed.ssm.parameters).toEqual({ '/a': 'ami-0123456789abcdef0' });
  });
});
