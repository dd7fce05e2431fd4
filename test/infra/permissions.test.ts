import { Stack } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import {
  FUNCTION_CONSTRUCT_IDS,
  handlerResources,
  ROLE_CONSTRUCT_IDS,
} from '../../infra/handler-roles.js';
import {
  GRANTS_KEPT_WITHOUT_USE,
  grantedActions,
  type PermissionScope,
  scannerPolicyStatements,
  wildcardReasons,
} from '../../infra/permissions.js';
import {
  DECLARED_ACTIONS,
  HANDLER_ACTIONS,
  SCANNING_HANDLERS,
} from '../../lambda/adapters/aws/declared-actions.js';
import { HANDLER_NAMES, type HandlerName } from '../../lambda/shared/config.js';
import {
  actionsOf,
  buildApp,
  CDK_JSON_CONTEXT,
  FULL_CONTEXT,
  logicalIdOf,
  resourcesOf,
} from './support.js';

const DRY_RUN_ROLE = 'arn:aws:iam::111122223333:role/karpenter-dry-run';

const SCOPE: PermissionScope = {
  partition: 'aws',
  account: '111122223333',
  topicArn: 'arn:aws:sns:eu-west-1:111122223333:findings',
  tableArn: 'arn:aws:dynamodb:eu-west-1:111122223333:table/state',
  queueArn: 'arn:aws:sqs:eu-west-1:111122223333:scans',
};

function statementsJson(registry: Record<string, readonly string[]>, scope = SCOPE) {
  const stack = new Stack();
  return scannerPolicyStatements(registry, scope).map((statement) =>
    stack.resolve(statement.toStatementJson())
  ) as { Action: string | string[]; Resource: string | string[] }[];
}

function resourcesFor(action: string, registry: Record<string, readonly string[]>, scope = SCOPE) {
  const statement = statementsJson(registry, scope).find((candidate) =>
    [candidate.Action].flat().includes(action)
  );
  return statement === undefined ? undefined : [statement.Resource].flat();
}

type PolicyResource = { Properties?: Record<string, unknown> };
type Statement = { Effect: string; Action: string | string[]; Resource: unknown };

/** Each handler's generated policy and CDK's default policy, with the role they attach to. */
function policiesOf(template: Template, handler: HandlerName) {
  const { roleLogicalId } = handlerResources(template.toJSON() as never)[handler];
  const attached = Object.entries(resourcesOf(template, 'AWS::IAM::Policy')).filter(([, policy]) =>
    JSON.stringify(policy.Properties?.Roles).includes(`"${roleLogicalId}"`)
  );
  const generatedPrefix = `Scanner${FUNCTION_CONSTRUCT_IDS[handler]}Policy`;
  const pick = (generated: boolean) =>
    attached.filter(([id]) => id.startsWith(generatedPrefix) === generated).map(([, p]) => p);
  return { roleLogicalId, generated: pick(true), wiring: pick(false) };
}

function statementsOf(policies: readonly PolicyResource[]): Statement[] {
  return policies.flatMap(
    (policy) =>
      (policy.Properties?.PolicyDocument as { Statement?: Statement[] } | undefined)?.Statement ??
      []
  );
}

const actionsIn = (statement: Statement) => [statement.Action].flat();
const sorted = (actions: Iterable<string>) => [...new Set(actions)].sort();

// What CDK adds besides the generated policy, by handler: named, so nothing else can slip in.
const LOGS = ['logs:CreateLogStream', 'logs:PutLogEvents'];
const KEY = ['kms:Decrypt', 'kms:GenerateDataKey*'];
/** The EBS keys' metadata, policy and grants, read by ebs-kms-key-usable. */
const EBS_KEY_READS = ['kms:DescribeKey', 'kms:GetKeyPolicy', 'kms:ListGrants'];
const EVENT_DLQ = ['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage'];
const SCAN_QUEUE_CONSUMER = [
  'sqs:ChangeMessageVisibility',
  'sqs:DeleteMessage',
  'sqs:GetQueueAttributes',
  'sqs:GetQueueUrl',
  'sqs:ReceiveMessage',
];
const WIRING: Readonly<Record<HandlerName, Readonly<Record<string, readonly string[]>>>> = {
  // resource logical-id fragment → actions on it
  dispatch: { DispatchLogs: LOGS, EventDeadLetters: EVENT_DLQ },
  'scan-cluster': { ScanClusterLogs: LOGS, FindingsKey: KEY, ScanQueue: SCAN_QUEUE_CONSUMER },
  'ami-event': { AmiEventLogs: LOGS, FindingsKey: KEY, EventDeadLetters: EVENT_DLQ },
  'iam-event': { IamEventLogs: LOGS, FindingsKey: KEY, EventDeadLetters: EVENT_DLQ },
};

describe.each([
  ['the shipped cdk.json', CDK_JSON_CONTEXT, false],
  ['DryRun mode on', { ...FULL_CONTEXT, dryRunRoleArn: DRY_RUN_ROLE }, true],
] as const)('each function’s role (%s)', (_, context, dryRun) => {
  const { template } = buildApp(context);

  it.each(HANDLER_NAMES)('%s: its policy grants exactly the actions it declares', (handler) => {
    // Prepare
    const declared = grantedActions(HANDLER_ACTIONS[handler], dryRun);
    const granted = statementsOf(policiesOf(template, handler).generated).flatMap(actionsIn);

    // Assess
    expect(declared.length).toBeGreaterThan(0);
    expect(sorted(granted)).toEqual(sorted(declared));
    expect(granted).toHaveLength(new Set(granted).size);
  });

  it.each(HANDLER_NAMES)('%s: CDK adds only the named wiring, each on its resource', (handler) => {
    // Act
    const statements = statementsOf(policiesOf(template, handler).wiring);
    const byResource = Object.entries(WIRING[handler]).map(([fragment, actions]) => ({
      fragment,
      actions,
      granted: statements
        .filter((statement) => JSON.stringify(statement.Resource).includes(`"Scanner${fragment}`))
        .flatMap(actionsIn),
    }));

    // Assess
    for (const { fragment, actions, granted } of byResource) {
      expect(sorted(granted), fragment).toEqual(sorted(actions));
    }
    expect(sorted(statements.flatMap(actionsIn))).toEqual(
      sorted(Object.values(WIRING[handler]).flat())
    );
  });

  it.each(HANDLER_NAMES)('%s: its function runs as its own role', (handler) => {
    const { roleLogicalId } = policiesOf(template, handler);
    expect(roleLogicalId).toMatch(new RegExp(`^Scanner${ROLE_CONSTRUCT_IDS[handler]}`));
  });
});

describe('least privilege between the functions', () => {
  const { template } = buildApp({ ...FULL_CONTEXT, dryRunRoleArn: DRY_RUN_ROLE });
  const everything = (handler: HandlerName) => {
    const { generated, wiring } = policiesOf(template, handler);
    return statementsOf([...generated, ...wiring]);
  };

  it('dispatch may not simulate IAM, touch the table, publish or use the topic key', () => {
    // Act
    const actions = everything('dispatch').flatMap(actionsIn);

    // Assess
    expect(actions.filter((action) => /^(iam|dynamodb|sns|kms|sts):/.test(action))).toEqual([]);
    expect(actions).toEqual(expect.arrayContaining(['eks:ListClusters', 'sqs:SendMessage']));
  });

  it('dispatch sends to the scan queue (scans) and the event DLQ (its own failures) only', () => {
    // Act
    const targets = everything('dispatch')
      .filter((statement) => actionsIn(statement).includes('sqs:SendMessage'))
      .map((statement) => JSON.stringify(statement.Resource));

    // Assess
    expect(targets).toHaveLength(2);
    expect(targets.some((target) => target.includes('ScannerScanQueue'))).toBe(true);
    expect(targets.some((target) => target.includes('ScannerEventDeadLetters'))).toBe(true);
  });

  it.each(SCANNING_HANDLERS)('%s may not send to the scan queue', (handler) => {
    // Act
    const senders = everything(handler).filter(
      (statement) =>
        JSON.stringify(statement.Resource).includes('ScannerScanQueue') &&
        actionsIn(statement).some((action) => action.startsWith('sqs:Send'))
    );

    // Assess
    expect(senders).toEqual([]);
  });

  it('scan-cluster has no sqs:SendMessage at all (no async destination, no enqueueing)', () => {
    expect(everything('scan-cluster').flatMap(actionsIn)).not.toContain('sqs:SendMessage');
  });

  it.each(SCANNING_HANDLERS)('%s may use the topic key, and only it, to publish', (handler) => {
    // Prepare
    const keyArn = {
      'Fn::GetAtt': [logicalIdOf(template, 'AWS::KMS::Key', 'FindingsKey'), 'Arn'],
    };

    // Act: the key-use actions (reading the metadata, policy and grants of the EBS keys a
    // NodeClass names is no use of a key)
    const kms = everything(handler).filter((statement) =>
      actionsIn(statement).some(
        (action) => action.startsWith('kms:') && !EBS_KEY_READS.includes(action)
      )
    );

    // Assess
    expect(everything(handler).flatMap(actionsIn)).toContain('sns:Publish');
    expect(kms).toEqual([expect.objectContaining({ Effect: 'Allow', Resource: keyArn })]);
    expect(sorted(kms.flatMap(actionsIn))).toEqual(KEY);
  });

  it.each(SCANNING_HANDLERS)(
    '%s may read KMS keys, not use them, beyond the topic key',
    (handler) => {
      // Act
      const reads = everything(handler).filter((statement) =>
        actionsIn(statement).some((action) => EBS_KEY_READS.includes(action))
      );

      // Assess: KMS answers GetKeyPolicy to the key's own account only, so it is granted on
      // this account's keys; DescribeKey and ListGrants work across accounts.
      expect(sorted(reads.flatMap(actionsIn))).toEqual([...EBS_KEY_READS].sort());
      const resourceOf = (action: string) =>
        reads.find((statement) => actionsIn(statement).includes(action))?.Resource;
      const anyAccount = {
        'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':kms:*:*:key/*']],
      };
      expect(resourceOf('kms:DescribeKey')).toEqual(anyAccount);
      expect(resourceOf('kms:ListGrants')).toEqual(anyAccount);
      expect(resourceOf('kms:GetKeyPolicy')).toEqual({
        'Fn::Join': [
          '',
          ['arn:', { Ref: 'AWS::Partition' }, ':kms:*:', { Ref: 'AWS::AccountId' }, ':key/*'],
        ],
      });
      expect(reads.every((statement) => statement.Effect === 'Allow')).toBe(true);
    }
  );

  it('grants the topic key to exactly the roles that may publish', () => {
    for (const handler of HANDLER_NAMES) {
      const actions = everything(handler).flatMap(actionsIn);
      expect(actions.includes('kms:GenerateDataKey*'), handler).toBe(
        actions.includes('sns:Publish')
      );
    }
  });

  it('never lets a role mutate EC2, or assume a role other than the DryRun role', () => {
    // Prepare: everything on, except the VPC (checked below).
    const { vpcId: _vpc, subnetIds: _subnets, ...context } = FULL_CONTEXT;
    const all = Object.values(buildApp(context).template.findResources('AWS::IAM::Policy')).flatMap(
      (policy) => actionsOf(policy.Properties.PolicyDocument)
    );

    // Assess
    expect(all.filter((action) => action.startsWith('ec2:'))).toEqual(
      all.filter((action) => /^ec2:(Describe|Get)/.test(action))
    );
    expect(all.filter((action) => action.startsWith('sts:Assume'))).toEqual([]);
    expect(
      all.filter((action) => action.includes('*') && action !== 'kms:GenerateDataKey*')
    ).toEqual([]);
  });

  it('attaches Lambda’s VPC access policy only to the roles of functions in the VPC', () => {
    // Prepare
    const managed = (t: Template, handler: HandlerName) =>
      JSON.stringify(
        resourcesOf(t, 'AWS::IAM::Role')[policiesOf(t, handler).roleLogicalId]?.Properties
          ?.ManagedPolicyArns
      );
    const shipped = buildApp().template;

    // Assess
    for (const handler of HANDLER_NAMES) {
      expect(managed(shipped, handler), handler).toBeUndefined();
      const inVpc = (SCANNING_HANDLERS as readonly string[]).includes(handler);
      expect(managed(template, handler)?.includes('AWSLambdaVPCAccessExecutionRole') ?? false).toBe(
        inVpc
      );
    }
  });
});

describe('policy generation', () => {
  it('scopes policy simulation to role ARNs', () => {
    expect(
      resourcesFor('iam:SimulatePrincipalPolicy', { permissions: ['iam:SimulatePrincipalPolicy'] })
    ).toEqual(['arn:aws:iam::111122223333:role/*']);
  });

  it('scopes publishing and state to the scanner’s own topic, table and queue', () => {
    // Prepare
    const registry = {
      publish: ['sns:Publish'],
      state: ['dynamodb:PutItem', 'dynamodb:Query'],
      queue: ['sqs:SendMessage'],
    };

    // Assess
    expect(resourcesFor('sns:Publish', registry)).toEqual([SCOPE.topicArn]);
    expect(resourcesFor('dynamodb:Query', registry)).toEqual([
      SCOPE.tableArn,
      `${SCOPE.tableArn}/index/*`,
    ]);
    expect(resourcesFor('sqs:SendMessage', registry)).toEqual([SCOPE.queueArn]);
  });

  it('grants sts:AssumeRole only on the DryRun role, and only when DryRun mode is on', () => {
    // Prepare
    const registry = { dryRun: ['sts:AssumeRole'] };
    const dryRunRoleArn = 'arn:aws:iam::111122223333:role/karpenter-dry-run';

    // Assess
    expect(statementsJson(registry)).toEqual([]);
    expect(resourcesFor('sts:AssumeRole', registry, { ...SCOPE, dryRunRoleArn })).toEqual([
      dryRunRoleArn,
    ]);
  });

  it.each(['ec2:RunInstances', 'ec2:CreateFleet', 'iam:PassRole', 's3:GetObject'])(
    'refuses to synthesise an action it has no scope for (%s)',
    (action) => {
      expect(() => statementsJson({ adapter: [action] })).toThrow(
        `no resource scope for the declared action "${action}"`
      );
    }
  );

  it('names a reason for each grant a run may not exercise, and each is granted somewhere', () => {
    // Prepare
    const granted = grantedActions(DECLARED_ACTIONS, true);

    // Assess
    for (const { action, reason } of GRANTS_KEPT_WITHOUT_USE) {
      expect(granted, action).toContain(action);
      expect(reason.length, action).toBeGreaterThan(20);
    }
  });

  it('gives a reason for every wildcard resource', () => {
    // Act
    const reasons = wildcardReasons(DECLARED_ACTIONS, SCOPE);
    const wildcards = statementsJson(DECLARED_ACTIONS)
      .flatMap((statement) => [statement.Resource].flat())
      .filter((resource) => resource.includes('*'));

    // Assess
    expect(reasons.map(({ resource }) => resource).sort()).toEqual([...new Set(wildcards)].sort());
    for (const { reason } of reasons) expect(reason.length).toBeGreaterThan(30);
  });
});
