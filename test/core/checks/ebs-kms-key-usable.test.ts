import { describe, expect, it } from 'vitest';
import { ebsKmsKeyUsable } from '../../../lambda/core/checks/ebs-kms-key-usable.js';
import type {
  AwsNodeClassFacts,
  EbsKeyFacts,
  KmsGrant,
  KmsKey,
  KmsKeyLookup,
} from '../../../lambda/core/facts/aws.js';
import type {
  PermissionFacts,
  SimulationDecision,
  SimulationOutcome,
} from '../../../lambda/core/facts/permissions.js';
import { ok, type Slice, unavailable } from '../../../lambda/core/facts/slice.js';
import type { Inventory } from '../../../lambda/core/inventory.js';
import {
  EBS_LAUNCH_KMS_ACTIONS,
  ebsKmsKeyRequests,
} from '../../../lambda/core/kms/launch-access.js';
import { ACCOUNT, anAwsInventory } from '../../support/aws-builders.js';
import { aNodeClassObject } from '../../support/builders.js';
import { aControllerRole, CONTROLLER_ROLE } from '../../support/permission-builders.js';

const now = new Date('2026-11-01T00:00:00Z');
const SCOPE = {
  partition: 'aws',
  region: 'us-east-1',
  accountId: ACCOUNT,
  clusterName: 'demo',
  eksClusterName: 'demo',
} as const;
const KEY_ARN = `arn:aws:kms:us-east-1:${ACCOUNT}:key/11111111-2222-3333-4444-555555555555`;
const ROOT = `arn:aws:iam::${ACCOUNT}:root`;

const USE_ACTIONS = [
  'kms:Encrypt',
  'kms:Decrypt',
  'kms:ReEncrypt*',
  'kms:GenerateDataKey*',
  'kms:CreateGrant',
  'kms:DescribeKey',
];

/** A key policy: `root` defers to IAM; `role` allows the controller role itself; `nobody` neither. */
function keyPolicy(grantee: 'root' | 'role' | 'nobody', extra: object[] = []): string {
  const admin = {
    Sid: 'Admins',
    Effect: 'Allow',
    Principal: { AWS: `arn:aws:iam::${ACCOUNT}:role/KeyAdmin` },
    Action: ['kms:Describe*', 'kms:Put*'],
    Resource: '*',
  };
  const statements =
    grantee === 'root'
      ? [
          {
            Sid: 'Enable IAM policies',
            Effect: 'Allow',
            Principal: { AWS: ROOT },
            Action: 'kms:*',
            Resource: '*',
          },
        ]
      : grantee === 'role'
        ? [
            {
              Sid: 'Karpenter',
              Effect: 'Allow',
              Principal: { AWS: CONTROLLER_ROLE },
              Action: USE_ACTIONS,
              Resource: '*',
            },
          ]
        : [];
  return JSON.stringify({ Version: '2012-10-17', Statement: [admin, ...statements, ...extra] });
}

function aKey(overrides: Partial<KmsKey> = {}): KmsKey {
  return {
    keyId: '11111111-2222-3333-4444-555555555555',
    arn: KEY_ARN,
    state: 'Enabled',
    manager: 'CUSTOMER',
    usage: 'ENCRYPT_DECRYPT',
    spec: 'SYMMETRIC_DEFAULT',
    ...overrides,
  };
}

function aLookup(
  key: Partial<KmsKey> = {},
  policy: Slice<string> = ok(keyPolicy('role')),
  grants: Slice<readonly KmsGrant[]> = ok([])
): KmsKeyLookup {
  return { key: aKey(key), policy, grants };
}

/** A class whose data volume names `alias/nodes` (the root volume keeps Karpenter's default). */
function aClass(name: string, kmsKeyID = 'alias/nodes'): unknown {
  return aNodeClassObject({
    name,
    spec: {
      blockDeviceMappings: [
        { deviceName: '/dev/xvda', rootVolume: true, ebs: { volumeSize: '20Gi', encrypted: true } },
        { deviceName: '/dev/xvdb', ebs: { volumeSize: '100Gi', encrypted: true, kmsKeyID } },
      ],
    },
  });
}

const AWS_DEFAULTS = ok({ encryptedByDefault: false, defaultKmsKeyId: 'alias/aws/ebs' });

function ebsFacts(
  lookup: Slice<KmsKeyLookup | undefined>,
  defaults: EbsKeyFacts['defaults'] = AWS_DEFAULTS,
  reference = 'alias/nodes'
): AwsNodeClassFacts {
  return {
    ebsKeys: ok({ ...(defaults === undefined ? {} : { defaults }), keys: [{ reference, lookup }] }),
  };
}

/** The controller's simulations on KEY_ARN, every action answered `decision`. */
function simulated(decision: SimulationDecision | 'unavailable'): SimulationOutcome[] {
  return ebsKmsKeyRequests(SCOPE, aControllerRole(), [KEY_ARN]).map((request) => ({
    request,
    results:
      decision === 'unavailable'
        ? unavailable('throttled', 'iam:SimulatePrincipalPolicy failed (Throttling)')
        : ok(
            request.actions.map((action) => ({
              action,
              resource: KEY_ARN,
              decision,
              matchedStatements: [],
              missingContextValues: [],
            }))
          ),
  }));
}

function withPermissions(
  inventory: Inventory,
  simulations: readonly SimulationOutcome[] = simulated('allowed')
): Inventory {
  const permissions = new Map<string, PermissionFacts>();
  for (const key of inventory.awsFacts.keys()) {
    permissions.set(key, { controllerRole: aControllerRole(), simulations, gaps: [] });
  }
  return {
    ...inventory,
    inputs: new Set([...inventory.inputs, 'permissions']),
    permissions,
  };
}

function evaluate(inventory: Inventory) {
  return ebsKmsKeyUsable.evaluate(inventory, { now });
}

function keyFinding(inventory: Inventory, nodeClass = 'default') {
  return evaluate(inventory).find(
    (draft) => draft.resource.name === nodeClass && draft.discriminator === 'kmsKeyID:alias/nodes'
  );
}

describe('ebs-kms-key-usable', () => {
  it('fails on a disabled key and passes the healthy class beside it', () => {
    // Arrange
    const inventory = withPermissions(
      anAwsInventory([aClass('broken'), aClass('healthy', KEY_ARN)], (name) =>
        name === 'broken'
          ? ebsFacts(ok(aLookup({ state: 'Disabled' })))
          : ebsFacts(ok(aLookup()), AWS_DEFAULTS, KEY_ARN)
      )
    );

    // Act
    const drafts = evaluate(inventory);

    // Assess
    const broken = drafts.filter((draft) => draft.resource.name === 'broken');
    const healthy = drafts.filter((draft) => draft.resource.name === 'healthy');
    expect(broken.find((draft) => draft.status === 'fail')).toMatchObject({
      discriminator: 'kmsKeyID:alias/nodes',
      evidence: { reason: 'key-unusable', keyState: 'Disabled', volumes: ['/dev/xvdb'] },
    });
    expect(broken.find((draft) => draft.status === 'fail')?.message).toContain('Disabled');
    expect(broken.find((draft) => draft.status === 'fail')?.remediation).toContain('enable-key');
    expect(healthy.map((draft) => draft.status)).toEqual(['pass', 'pass']);
    // The root volume is encrypted with the AWS managed default key.
    expect(healthy.find((draft) => draft.discriminator === 'account-default')).toMatchObject({
      evidence: { reason: 'aws-managed' },
    });
  });

  it.each([
    ['PendingDeletion', 'cancel-key-deletion'],
    ['PendingImport', 'enabled symmetric'],
    ['Unavailable', 'enabled symmetric'],
  ])('fails on a key that is %s', (state, remedy) => {
    // Arrange
    const inventory = withPermissions(
      anAwsInventory(
        [aClass('default')],
        ebsFacts(ok(aLookup({ state, deletionDate: '2026-11-20T00:00:00.000Z' })))
      )
    );

    // Act
    const finding = keyFinding(inventory);

    // Assess
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain(`the key is ${state}`);
    expect(finding?.remediation).toContain(remedy);
  });

  it('fails on an asymmetric key and on a key of another region', () => {
    // Arrange
    const asymmetric = withPermissions(
      anAwsInventory([aClass('default')], ebsFacts(ok(aLookup({ spec: 'RSA_2048' }))))
    );
    const elsewhere = withPermissions(
      anAwsInventory(
        [aClass('default')],
        ebsFacts(ok(aLookup({ arn: KEY_ARN.replace('us-east-1', 'eu-west-1') })))
      )
    );

    // Assess
    expect(keyFinding(asymmetric)?.message).toContain('symmetric');
    expect(keyFinding(elsewhere)?.message).toContain('the key is in eu-west-1');
  });

  it('fails when the key does not exist', () => {
    // Arrange
    const inventory = withPermissions(anAwsInventory([aClass('default')], ebsFacts(ok(undefined))));

    // Act
    const finding = keyFinding(inventory);

    // Assess
    expect(finding).toMatchObject({ status: 'fail', evidence: { reason: 'not-found' } });
  });

  it('passes a key whose policy defers to IAM when the role may use it, fails when it may not', () => {
    // Arrange
    const facts = ebsFacts(ok(aLookup({}, ok(keyPolicy('root')))));
    const allowed = withPermissions(
      anAwsInventory([aClass('default')], facts),
      simulated('allowed')
    );
    const denied = withPermissions(
      anAwsInventory([aClass('default')], facts),
      simulated('implicitDeny')
    );

    // Assess
    expect(keyFinding(allowed)?.status).toBe('pass');
    // The fleet's service-linked roles' key access (encrypted AMI snapshots) is named as not evaluated.
    expect(keyFinding(allowed)?.message).toContain(
      'Not evaluated: whether the service-linked roles AWSServiceRoleForEC2Fleet and AWSServiceRoleForEC2Spot may use the key'
    );
    expect(keyFinding(allowed)?.message).toContain('ec2-fleet-prerequisites.html');
    const failure = keyFinding(denied);
    expect(failure?.status).toBe('fail');
    expect(failure?.message).toContain(
      'the key policy leaves it to IAM (statement Enable IAM policies)'
    );
    expect(failure?.evidence?.deniedActions).toEqual([...EBS_LAUNCH_KMS_ACTIONS]);
  });

  it('reports an error, not a pass, when the IAM side could not be simulated', () => {
    // Arrange
    const inventory = withPermissions(
      anAwsInventory([aClass('default')], ebsFacts(ok(aLookup({}, ok(keyPolicy('root')))))),
      simulated('unavailable')
    );

    // Act
    const finding = keyFinding(inventory);

    // Assess
    expect(finding?.status).toBe('error');
    expect(finding?.message).toContain('could not be simulated');
    expect(finding?.readFault).toEqual({
      reason: 'throttled',
      input: 'IAM policy simulation (use-ebs-kms-key)',
    });
  });

  it('is no read fault when a problem beside the unsimulated ones is a conclusion', () => {
    // Arrange: the key policy's answer for kms:CreateGrant depends on a NotPrincipal.
    const guard = {
      Sid: 'Guard',
      Effect: 'Deny',
      NotPrincipal: { AWS: ROOT },
      Action: 'kms:CreateGrant',
      Resource: '*',
    };
    const inventory = withPermissions(
      anAwsInventory(
        [aClass('default')],
        ebsFacts(ok(aLookup({}, ok(keyPolicy('root', [guard])))))
      ),
      simulated('unavailable')
    );

    // Act
    const finding = keyFinding(inventory);

    // Assess
    expect(finding?.status).toBe('error');
    expect(finding?.message).toContain('could not be simulated');
    expect(finding?.message).toContain('cannot evaluate (Guard: NotPrincipal)');
    expect(finding?.readFault).toBeUndefined();
  });

  it('fails a key policy that names neither the role nor the account, saying grants could not be read', () => {
    // Arrange
    const inventory = withPermissions(
      anAwsInventory(
        [aClass('default')],
        ebsFacts(
          ok(
            aLookup(
              {},
              ok(keyPolicy('nobody')),
              unavailable('access-denied', 'kms:ListGrants failed (AccessDeniedException)')
            )
          )
        )
      )
    );

    // Act
    const finding = keyFinding(inventory);

    // Assess
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('no key policy statement allows the role or the account');
    expect(finding?.message).toContain('Its grants could not be read');
    expect(finding?.message).toContain('kms:ListGrants');
  });

  it('passes a key the role may use through an unconstrained grant', () => {
    // Arrange
    const operations = EBS_LAUNCH_KMS_ACTIONS.map((action) => action.slice('kms:'.length));
    const grant = { granteePrincipal: CONTROLLER_ROLE, operations, constrained: false };
    const constrained = { ...grant, constrained: true };
    const granted = withPermissions(
      anAwsInventory(
        [aClass('default')],
        ebsFacts(ok(aLookup({}, ok(keyPolicy('nobody')), ok([grant]))))
      )
    );
    const onlyConstrained = withPermissions(
      anAwsInventory(
        [aClass('default')],
        ebsFacts(ok(aLookup({}, ok(keyPolicy('nobody')), ok([constrained]))))
      )
    );

    // Assess
    expect(keyFinding(granted)?.status).toBe('pass');
    expect(keyFinding(onlyConstrained)?.status).not.toBe('pass');
  });

  it('reports an error, not a fail, when only an encryption-context-constrained grant lets the role use the key', () => {
    // Arrange
    const operations = EBS_LAUNCH_KMS_ACTIONS.map((action) => action.slice('kms:'.length));
    const constrained: KmsGrant = {
      grantId: 'g-ctx',
      granteePrincipal: CONTROLLER_ROLE,
      operations,
      constrained: true,
      constraints: 'EncryptionContextSubset {"team":"data"}',
    };
    const nobody = withPermissions(
      anAwsInventory(
        [aClass('default')],
        ebsFacts(ok(aLookup({}, ok(keyPolicy('nobody')), ok([constrained]))))
      )
    );
    const iamDenies = withPermissions(
      anAwsInventory(
        [aClass('default')],
        ebsFacts(ok(aLookup({}, ok(keyPolicy('root')), ok([constrained]))))
      ),
      simulated('implicitDeny')
    );

    // Act
    const byPolicy = keyFinding(nobody);
    const byIam = keyFinding(iamDenies);

    // Assess
    expect(byPolicy?.status).toBe('error');
    expect(byPolicy?.evidence?.reason).toBe('access-unknown');
    expect(byPolicy?.message).toContain('grant g-ctx');
    expect(byPolicy?.message).toContain('EncryptionContextSubset {"team":"data"}');
    expect(byPolicy?.message).toContain('cannot be known');
    expect(byIam?.status).toBe('error');
    expect(byIam?.message).toContain('grant g-ctx');
  });

  it.each([
    [
      'another region and account',
      'arn:aws:kms:eu-west-1:999999999999:alias/aws/ebs',
      ['it is in eu-west-1', 'account 999999999999'],
    ],
    [
      'another account',
      'arn:aws:kms:us-east-1:999999999999:alias/aws/ebs',
      ['account 999999999999'],
    ],
  ])('fails the AWS managed EBS key of %s, naming the mismatch', (_case, reference, parts) => {
    // Arrange
    const inventory = withPermissions(
      anAwsInventory(
        [aClass('default', reference)],
        ebsFacts(ok(undefined), AWS_DEFAULTS, reference)
      )
    );

    // Act
    const finding = evaluate(inventory).find(
      (draft) => draft.discriminator === `kmsKeyID:${reference}`
    );

    // Assess
    expect(finding).toMatchObject({
      status: 'fail',
      evidence: { reason: 'aws-managed-elsewhere' },
    });
    for (const part of parts) expect(finding?.message).toContain(part);
  });

  it("passes the AWS managed EBS key by its ARN in the cluster's region and account", () => {
    // Arrange
    const reference = `arn:aws:kms:us-east-1:${ACCOUNT}:alias/aws/ebs`;
    const inventory = withPermissions(
      anAwsInventory(
        [aClass('default', reference)],
        ebsFacts(ok(undefined), AWS_DEFAULTS, reference)
      )
    );

    // Act
    const finding = evaluate(inventory).find(
      (draft) => draft.discriminator === `kmsKeyID:${reference}`
    );

    // Assess
    expect(finding).toMatchObject({ status: 'pass', evidence: { reason: 'aws-managed' } });
  });

  it('fails an AWS managed key that DescribeKey places in another account', () => {
    // Arrange
    const foreign = withPermissions(
      anAwsInventory(
        [aClass('default')],
        ebsFacts(
          ok(
            aLookup({
              manager: 'AWS',
              arn: 'arn:aws:kms:us-east-1:999999999999:key/11111111-2222-3333-4444-555555555555',
            })
          )
        )
      )
    );

    // Act
    const finding = keyFinding(foreign);

    // Assess
    expect(finding).toMatchObject({
      status: 'fail',
      evidence: { reason: 'aws-managed-elsewhere' },
    });
    expect(finding?.message).toContain('account 999999999999');
  });

  it('fails on a key policy Deny, even when another statement allows the role', () => {
    // Arrange
    const deny = {
      Sid: 'NoGrants',
      Effect: 'Deny',
      Principal: { AWS: '*' },
      Action: 'kms:CreateGrant',
      Resource: '*',
      Condition: { StringEquals: { 'kms:CallerAccount': ACCOUNT } },
    };
    const inventory = withPermissions(
      anAwsInventory([aClass('default')], ebsFacts(ok(aLookup({}, ok(keyPolicy('role', [deny]))))))
    );

    // Act
    const finding = keyFinding(inventory);

    // Assess
    expect(finding?.status).toBe('fail');
    expect(finding?.evidence?.deniedActions).toEqual(['kms:CreateGrant']);
    expect(finding?.message).toContain('statement NoGrants');
  });

  it("passes the via-EC2 policy of Karpenter's troubleshooting guide, which names no role", () => {
    // Arrange
    const viaEc2 = JSON.stringify({
      Statement: [
        {
          Effect: 'Allow',
          Principal: { AWS: '*' },
          Action: USE_ACTIONS,
          Resource: '*',
          Condition: {
            StringEquals: {
              'kms:ViaService': 'ec2.us-east-1.amazonaws.com',
              'kms:CallerAccount': ACCOUNT,
            },
          },
        },
      ],
    });
    const otherRegion = viaEc2.replace('ec2.us-east-1', 'ec2.eu-west-1');

    // Assess
    const inventoryOf = (policy: string) =>
      withPermissions(anAwsInventory([aClass('default')], ebsFacts(ok(aLookup({}, ok(policy))))));
    expect(keyFinding(inventoryOf(viaEc2))?.status).toBe('pass');
    expect(keyFinding(inventoryOf(otherRegion))?.status).toBe('fail');
  });

  it('reports an error naming the condition key it cannot evaluate', () => {
    // Arrange
    const policy = JSON.stringify({
      Statement: [
        {
          Effect: 'Allow',
          Principal: { AWS: CONTROLLER_ROLE },
          Action: 'kms:*',
          Resource: '*',
          Condition: { StringEquals: { 'aws:SourceVpce': 'vpce-1' } },
        },
      ],
    });
    const inventory = withPermissions(
      anAwsInventory([aClass('default')], ebsFacts(ok(aLookup({}, ok(policy)))))
    );

    // Act
    const finding = keyFinding(inventory);

    // Assess
    expect(finding?.status).toBe('error');
    expect(finding?.message).toContain('aws:SourceVpce');
  });

  it('says exactly what could not be read: the key policy (same account) or the key', () => {
    // Arrange
    const policyDenied = withPermissions(
      anAwsInventory(
        [aClass('default')],
        ebsFacts(
          ok(
            aLookup(
              {},
              unavailable('access-denied', 'kms:GetKeyPolicy failed (AccessDeniedException)')
            )
          )
        )
      )
    );
    const keyDenied = withPermissions(
      anAwsInventory(
        [aClass('default')],
        ebsFacts(unavailable('access-denied', 'kms:DescribeKey failed (AccessDeniedException)'))
      )
    );

    // Assess
    expect(keyFinding(policyDenied)).toMatchObject({
      status: 'error',
      evidence: { reason: 'policy-unreadable' },
    });
    expect(keyFinding(policyDenied)?.message).toContain(`kms:GetKeyPolicy on ${KEY_ARN}`);
    expect(keyFinding(keyDenied)?.status).toBe('error');
    expect(keyFinding(keyDenied)?.message).toContain('kms:DescribeKey');
  });

  it("gives a notice for another account's key, whose policy no other account can read", () => {
    // Arrange
    const foreign = KEY_ARN.replace(ACCOUNT, '444455556666');
    const inventory = withPermissions(
      anAwsInventory(
        [aClass('default', foreign)],
        ebsFacts(
          ok(aLookup({ arn: foreign }, unavailable('access-denied', 'kms:GetKeyPolicy failed'))),
          AWS_DEFAULTS,
          foreign
        )
      )
    );

    // Act
    const finding = evaluate(inventory).find(
      (draft) => draft.discriminator === `kmsKeyID:${foreign}`
    );

    // Assess
    expect(finding).toMatchObject({
      status: 'notice',
      evidence: { reason: 'cross-account-policy' },
    });
    expect(finding?.message).toContain('account 444455556666');
  });

  it('judges the account default key for volumes encrypted without one, and for all volumes when the account encrypts by default', () => {
    // Arrange
    const defaultKey = `arn:aws:kms:us-east-1:${ACCOUNT}:key/default-cmk`;
    const unencrypted = aNodeClassObject({
      name: 'default',
      spec: { blockDeviceMappings: [{ deviceName: '/dev/xvda', ebs: { volumeSize: '20Gi' } }] },
    });
    const inventoryOf = (encryptedByDefault: boolean) =>
      withPermissions(
        anAwsInventory(
          [unencrypted],
          ebsFacts(
            ok(aLookup({ arn: defaultKey, state: 'PendingDeletion' })),
            ok({ encryptedByDefault, defaultKmsKeyId: defaultKey }),
            defaultKey
          )
        )
      );

    // Act
    const byDefault = evaluate(inventoryOf(true));
    const notByDefault = evaluate(inventoryOf(false));

    // Assess
    expect(byDefault).toHaveLength(1);
    expect(byDefault[0]).toMatchObject({
      status: 'fail',
      discriminator: 'account-default',
      evidence: { accountDefault: true, volumes: ['/dev/xvda'] },
    });
    expect(notByDefault.map((draft) => [draft.status, draft.evidence?.reason])).toEqual([
      ['pass', 'unencrypted'],
    ]);
  });

  it('says when the default key cannot be judged: settings not recorded, or not readable', () => {
    // Arrange
    const notRecorded = withPermissions(
      anAwsInventory([aNodeClassObject()], { ebsKeys: ok({ keys: [] }) })
    );
    const denied = withPermissions(
      anAwsInventory([aNodeClassObject()], {
        ebsKeys: ok({
          defaults: unavailable(
            'access-denied',
            'ec2:GetEbsDefaultKmsKeyId failed (UnauthorizedOperation)'
          ),
          keys: [],
        }),
      })
    );

    // Assess
    expect(evaluate(notRecorded)).toMatchObject([
      { status: 'not-applicable', evidence: { reason: 'defaults-not-recorded' } },
    ]);
    expect(evaluate(denied)[0]?.status).toBe('error');
    expect(evaluate(denied)[0]?.message).toContain('ec2:GetEbsDefaultKmsKeyId');
  });

  it('gives a notice on an enabled customer key when the scan has no controller role', () => {
    // Arrange
    const inventory = anAwsInventory([aClass('default')], ebsFacts(ok(aLookup())));

    // Act
    const finding = keyFinding(inventory);

    // Assess
    expect(finding).toMatchObject({
      status: 'notice',
      evidence: { reason: 'access-not-evaluated' },
    });
  });

  it('reports an error when the keys were not read at all', () => {
    // Arrange
    const inventory = anAwsInventory([aClass('default')], {});

    // Act
    const drafts = evaluate(inventory);

    // Assess
    expect(drafts).toMatchObject([{ status: 'error', evidence: { reason: 'not-read' } }]);
    const unreadable = anAwsInventory([aClass('default')], {
      ebsKeys: unavailable('throttled', 'Rate exceeded'),
    });
    expect(evaluate(unreadable)).toMatchObject([
      { status: 'error', evidence: { reason: 'throttled' } },
    ]);
  });
});
