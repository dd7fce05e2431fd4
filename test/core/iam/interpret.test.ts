import { describe, expect, it } from 'vitest';
import type {
  PermissionFacts,
  SimulationRequest,
  SimulationResult,
} from '../../../lambda/core/facts/permissions.js';
import { ok, unavailable } from '../../../lambda/core/facts/slice.js';
import { describeDenial, interpretGroup } from '../../../lambda/core/iam/interpret.js';
import { aControllerRole, NODE_ROLE } from '../../support/permission-builders.js';

const REQUEST: SimulationRequest = {
  key: 'k',
  kind: 'pass-node-role',
  group: 'pass-node-role',
  principalArn: 'arn:aws:iam::111122223333:role/c',
  actions: ['iam:PassRole'],
  resourceArns: [NODE_ROLE],
  context: [],
};

function result(overrides: Partial<SimulationResult>): SimulationResult {
  return {
    action: 'iam:PassRole',
    resource: NODE_ROLE,
    decision: 'allowed',
    matchedStatements: [],
    missingContextValues: [],
    ...overrides,
  };
}

function facts(results: PermissionFacts['simulations'][number]['results']): PermissionFacts {
  return {
    controllerRole: aControllerRole(),
    simulations: [{ request: REQUEST, results }],
    gaps: [],
  };
}

describe('interpretGroup', () => {
  it('passes when every pair is allowed with full context', () => {
    expect(interpretGroup(facts(ok([result({})])), 'pass-node-role')).toMatchObject({
      status: 'pass',
      evaluated: 1,
    });
  });

  it.each([
    [{ decision: 'implicitDeny' as const }, 'no-allow'],
    [{ decision: 'explicitDeny' as const, allowedByOrganizations: false }, 'scp'],
    [
      { decision: 'implicitDeny' as const, allowedByPermissionsBoundary: false },
      'permissions-boundary',
    ],
    [
      {
        decision: 'explicitDeny' as const,
        matchedStatements: [{ sourcePolicyId: 'DenyPassRole' }],
      },
      'identity-policy',
    ],
  ])('fails for %o, denied by %s', (overrides, deniedBy) => {
    const verdict = interpretGroup(facts(ok([result(overrides)])), 'pass-node-role');

    expect(verdict.status).toBe('fail');
    expect(verdict.denials[0]?.deniedBy).toBe(deniedBy);
  });

  it('never passes when context keys are missing', () => {
    const verdict = interpretGroup(
      facts(ok([result({ missingContextValues: ['aws:PrincipalTag/kubernetes-pod-name'] })])),
      'pass-node-role'
    );

    expect(verdict.status).toBe('error');
    expect(verdict.inconclusive[0]?.missingContextValues).toEqual([
      'aws:PrincipalTag/kubernetes-pod-name',
    ]);
  });

  it('reports an unavailable simulation and a gap as errors', () => {
    expect(
      interpretGroup(facts(unavailable('throttled', 'Rate exceeded')), 'pass-node-role')
    ).toMatchObject({
      status: 'error',
      unsimulated: [{ kind: 'pass-node-role', reason: 'throttled' }],
    });
    const withGap: PermissionFacts = {
      ...facts(ok([result({})])),
      gaps: [{ group: 'pass-node-role', reason: 'not-found', message: 'no role' }],
    };
    expect(interpretGroup(withGap, 'pass-node-role').status).toBe('error');
  });

  it('ignores other groups and errors when nothing was evaluated', () => {
    expect(
      interpretGroup(facts(ok([result({ decision: 'implicitDeny' })])), 'discover').status
    ).toBe('error');
  });

  it('names the denying statement and missing keys', () => {
    const [denial] = interpretGroup(
      facts(
        ok([
          result({
            decision: 'explicitDeny',
            matchedStatements: [{ sourcePolicyId: 'DenyAll' }],
            missingContextValues: ['ec2:MetadataHttpTokens'],
          }),
        ])
      ),
      'pass-node-role'
    ).denials;

    expect(denial && describeDenial(denial)).toBe(
      `iam:PassRole on ${NODE_ROLE}: explicitly denied by an identity policy (matched: DenyAll); the policies also use context keys Karpenter's request does not carry: ec2:MetadataHttpTokens`
    );
  });
});
