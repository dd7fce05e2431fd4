import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type {
  ContextEntry,
  SimulationRequest,
  SimulationResult,
} from '../../../lambda/core/facts/permissions.js';
import {
  comparesValue,
  contextKeyUsage,
  relevantContext,
  valueKeysOfPolicy,
} from '../../../lambda/core/iam/policy-conditions.js';
import { simulationKey } from '../../../lambda/core/iam/request-context.js';
import { batchSimulations, memberResults } from '../../../lambda/core/iam/simulation-batches.js';
import { IAM_ARN, wildcardMatches } from '../../../lambda/core/wildcard.js';

const NODECLASS = 'aws:RequestTag/karpenter.k8s.aws/ec2nodeclass';
const TEAM = 'aws:RequestTag/team';

/** Karpenter's reference controller policy tests its tags this way. */
const KARPENTER_STYLE = JSON.stringify({
  Version: '2012-10-17',
  Statement: [
    {
      Effect: 'Allow',
      Action: ['iam:CreateInstanceProfile'],
      Resource: '*',
      Condition: {
        StringEquals: { 'aws:RequestTag/kubernetes.io/cluster/demo': 'owned' },
        StringLike: { [NODECLASS]: '*' },
      },
    },
  ],
});

describe('policy conditions', () => {
  it('counts StringLike "*" and Null as presence tests, other operators as value comparisons', () => {
    const usage = contextKeyUsage([KARPENTER_STYLE]);
    expect(comparesValue(usage, NODECLASS)).toBe(false);
    expect(comparesValue(usage, 'aws:requesttag/kubernetes.io/cluster/demo')).toBe(true);
    const keys = valueKeysOfPolicy(
      JSON.stringify({
        Statement: {
          Effect: 'Deny',
          Action: '*',
          // biome-ignore lint/suspicious/noTemplateCurlyInString: an IAM policy variable
          Resource: 'arn:aws:ec2:*:*:instance/${aws:PrincipalTag/team}',
          Condition: {
            Null: { 'aws:RequestTag/a': 'true' },
            StringLikeIfExists: { 'aws:RequestTag/b': ['prod-*'] },
            'ForAnyValue:StringLike': { 'aws:TagKeys': '*' },
          },
        },
      })
    );
    expect([...(keys ?? [])].sort()).toEqual([
      'aws:principaltag/team',
      'aws:requesttag/b',
      'aws:tagkeys',
    ]);
  });

  it('treats an unreadable or unparsable policy, or a key named by a variable, as comparing everything', () => {
    expect(contextKeyUsage(undefined)).toEqual({ kind: 'unknown' });
    expect(contextKeyUsage(['not json'])).toEqual({ kind: 'unknown' });
    const variableKey = JSON.stringify({
      Statement: [
        {
          Effect: 'Allow',
          Action: '*',
          Resource: '*',
          Condition: { Null: { 'aws:RequestTag/${aws:PrincipalTag/x}': 'false' } },
        },
      ],
    });
    expect(comparesValue(contextKeyUsage([variableKey]), NODECLASS)).toBe(true);
  });

  it('blanks presence-only values but keeps empty strings and value counts', () => {
    const usage = contextKeyUsage([KARPENTER_STYLE]);
    const context: ContextEntry[] = [
      { key: NODECLASS, type: 'string', values: ['default'] },
      { key: 'aws:RequestTag/karpenter.sh/nodepool', type: 'string', values: [''] },
    ];
    const other: ContextEntry[] = [
      { key: NODECLASS, type: 'string', values: ['gpu'] },
      { key: 'aws:RequestTag/karpenter.sh/nodepool', type: 'string', values: ['general'] },
    ];
    expect(relevantContext(context, usage)[0]).toEqual(relevantContext(other, usage)[0]);
    expect(relevantContext(context, usage)[1]).not.toEqual(relevantContext(other, usage)[1]);
  });
});

// A small IAM evaluator (identity policies, an optional boundary, explicit denies, a few
// operators), standing in for SimulatePrincipalPolicy.
interface Condition {
  readonly operator: string;
  readonly key: string;
  readonly values: readonly string[];
}
interface Statement {
  readonly effect: 'Allow' | 'Deny';
  readonly actions: readonly string[];
  readonly conditions: readonly Condition[];
}

function documentOf(statements: readonly Statement[]): string {
  return JSON.stringify({
    Version: '2012-10-17',
    Statement: statements.map((statement) => ({
      Effect: statement.effect,
      Action: statement.actions,
      Resource: '*',
      ...(statement.conditions.length === 0
        ? {}
        : {
            Condition: Object.fromEntries(
              [...new Set(statement.conditions.map((condition) => condition.operator))].map(
                (op) => [
                  op,
                  Object.fromEntries(
                    statement.conditions
                      .filter((condition) => condition.operator === op)
                      .map((condition) => [condition.key, condition.values])
                  ),
                ]
              )
            ),
          }),
    })),
  });
}

function conditionHolds(condition: Condition, context: readonly ContextEntry[]): boolean {
  const entry = context.find((item) => item.key.toLowerCase() === condition.key.toLowerCase());
  const bare = condition.operator.replace(/IfExists$/, '');
  if (bare === 'Null') return (entry === undefined) === (condition.values[0] === 'true');
  if (entry === undefined) return condition.operator.endsWith('IfExists');
  const value = entry.values[0] ?? '';
  const match = (pattern: string) =>
    bare.includes('Like') ? wildcardMatches(pattern, value, IAM_ARN) : pattern === value;
  const any = condition.values.some(match);
  return bare.startsWith('StringNot') ? !any : any;
}

function statementsMatch(
  statements: readonly Statement[],
  effect: 'Allow' | 'Deny',
  action: string,
  context: readonly ContextEntry[]
): boolean {
  return statements.some(
    (statement) =>
      statement.effect === effect &&
      statement.actions.includes(action) &&
      statement.conditions.every((condition) => conditionHolds(condition, context))
  );
}

function evaluate(
  identity: readonly Statement[],
  boundary: readonly Statement[] | undefined,
  request: Pick<SimulationRequest, 'actions' | 'resourceArns' | 'context'>
): SimulationResult[] {
  return request.actions.flatMap((action) =>
    request.resourceArns.map((resource): SimulationResult => {
      const all = [...identity, ...(boundary ?? [])];
      const denied = statementsMatch(all, 'Deny', action, request.context);
      const allowed =
        statementsMatch(identity, 'Allow', action, request.context) &&
        (boundary === undefined || statementsMatch(boundary, 'Allow', action, request.context));
      return {
        action,
        resource,
        decision: denied ? 'explicitDeny' : allowed ? 'allowed' : 'implicitDeny',
        matchedStatements: [],
        missingContextValues: [],
      };
    })
  );
}

const ACTIONS = ['ec2:RunInstances', 'ec2:CreateTags', 'iam:PassRole'];
const NAMES = ['default', 'gpu', 'batch', ''];
const condition = fc.record({
  operator: fc.constantFrom(
    'StringEquals',
    'StringNotEquals',
    'StringLike',
    'StringNotLike',
    'StringEqualsIfExists',
    'Null'
  ),
  key: fc.constantFrom(NODECLASS, TEAM, 'aws:RequestTag/absent'),
  values: fc.array(fc.constantFrom('default', 'gpu', 'platform', '*', 'g*'), {
    minLength: 1,
    maxLength: 2,
  }),
});
const statement = fc.record({
  effect: fc.constantFrom('Allow' as const, 'Allow' as const, 'Deny' as const),
  actions: fc.subarray(ACTIONS, { minLength: 1 }),
  conditions: fc.array(condition, { maxLength: 2 }),
});
const nullFixed = (item: Statement): Statement => ({
  ...item,
  conditions: item.conditions.map((c) =>
    c.operator === 'Null' ? { ...c, values: [c.values[0] === '*' ? 'true' : 'false'] } : c
  ),
});

function requestOf(name: string, team: string, actions: readonly string[]): SimulationRequest {
  const body = {
    principalArn: 'arn:aws:iam::111122223333:role/Controller',
    actions: [...actions],
    resourceArns: [`arn:aws:ec2:us-east-1:111122223333:instance/${name}`, '*'],
    context: [
      { key: NODECLASS, type: 'string' as const, values: [name] },
      { key: TEAM, type: 'string' as const, values: [team] },
    ],
  };
  return { ...body, key: simulationKey(body), kind: 'run-instances', group: 'launch' };
}

describe('grouped simulations', () => {
  it('give every request the verdicts its own simulation gives', () => {
    fc.assert(
      fc.property(
        fc.array(statement.map(nullFixed), { minLength: 1, maxLength: 4 }),
        fc.option(fc.array(statement.map(nullFixed), { minLength: 1, maxLength: 3 })),
        fc.array(
          fc.record({
            name: fc.constantFrom(...NAMES),
            team: fc.constantFrom('platform', 'data'),
            actions: fc.subarray(ACTIONS, { minLength: 1 }),
          }),
          { minLength: 1, maxLength: 6 }
        ),
        (identity, boundary, classes) => {
          const requests = classes.map((item) => requestOf(item.name, item.team, item.actions));
          const documents = [documentOf(identity), ...(boundary ? [documentOf(boundary)] : [])];
          const usage = contextKeyUsage(documents);
          const batches = batchSimulations(requests, () => usage);
          expect(batches.length).toBeLessThanOrEqual(requests.length);
          for (const batch of batches) {
            const sent = evaluate(identity, boundary ?? undefined, batch.request);
            for (const member of batch.members) {
              const own = memberResults(member, sent);
              expect(own.ok).toBe(true);
              if (own.ok)
                expect(own.results).toEqual(evaluate(identity, boundary ?? undefined, member));
            }
          }
        }
      ),
      { numRuns: 300 }
    );
  });

  it('sends one simulation for NodeClasses whose values the policies only test for presence', () => {
    const usage = contextKeyUsage([KARPENTER_STYLE]);
    const requests = ['default', 'gpu', 'batch'].map((name) =>
      requestOf(name, 'platform', ['ec2:RunInstances'])
    );
    const batches = batchSimulations(requests, () => usage);
    expect(batches).toHaveLength(1);
    expect(batches[0]?.request.resourceArns).toHaveLength(4);
    expect(batchSimulations(requests, () => ({ kind: 'unknown' }))).toHaveLength(3);
  });
});
