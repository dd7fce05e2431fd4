// The opt-in securityHub setting: the scanning roles get the two Security Hub actions, scoped to
// the account's default product (import) and to the RESOLVED, SUPPRESSED and NEW marks (update);
// off, nobody gets them.
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { handlerResources } from '../../infra/handler-roles.js';
import { grantedActions } from '../../infra/permissions.js';
import { HANDLER_ACTIONS, SCANNING_HANDLERS } from '../../lambda/adapters/aws/declared-actions.js';
import { buildApp, CDK_JSON_CONTEXT, FULL_CONTEXT, resourcesOf } from './support.js';

interface Statement {
  Action: string | string[];
  Resource: unknown;
  Condition?: unknown;
}

function statementsOfRole(template: ReturnType<typeof buildApp>['template'], roleId: string) {
  return Object.values(resourcesOf(template, 'AWS::IAM::Policy'))
    .filter((policy) => JSON.stringify(policy.Properties?.Roles).includes(`"${roleId}"`))
    .flatMap(
      (policy) =>
        (policy.Properties?.PolicyDocument as { Statement: Statement[] } | undefined)?.Statement ??
        []
    );
}

const securityHubStatements = (statements: Statement[]) =>
  statements.filter((statement) =>
    [statement.Action].flat().some((action) => action.startsWith('securityhub:'))
  );

describe('securityHub setting', () => {
  it('is off by default: no role may call Security Hub, and no function is told to', () => {
    const { template } = buildApp(CDK_JSON_CONTEXT);
    expect(JSON.stringify(template.toJSON())).not.toContain('securityhub:');
    const functions = Object.values(resourcesOf(template, 'AWS::Lambda::Function'));
    for (const fn of functions) {
      const variables = (fn.Properties?.Environment as { Variables: Record<string, string> })
        ?.Variables;
      expect(variables?.SECURITY_HUB).toBe('false');
    }
  });

  describe('on', () => {
    const { template, app } = buildApp({ ...FULL_CONTEXT, securityHub: true });
    const handlers = handlerResources(template.toJSON() as never);

    it.each(SCANNING_HANDLERS)(
      '%s: imports into the default product and may only mark findings RESOLVED, SUPPRESSED or NEW',
      (handler) => {
        const statements = securityHubStatements(
          statementsOfRole(template, handlers[handler].roleLogicalId)
        );
        const importing = statements.find((statement) =>
          [statement.Action].flat().includes('securityhub:BatchImportFindings')
        );
        expect([importing?.Action].flat()).toEqual(['securityhub:BatchImportFindings']);
        expect(JSON.stringify(importing?.Resource)).toMatch(
          /arn:.*"AWS::Partition".*:securityhub:.*"AWS::Region".*"AWS::AccountId".*:product\/.*"AWS::AccountId".*\/default/
        );
        const updating = statements.find((statement) =>
          [statement.Action].flat().includes('securityhub:BatchUpdateFindings')
        );
        expect(updating).toMatchObject({
          Action: 'securityhub:BatchUpdateFindings',
          Resource: '*',
          Condition: {
            StringEquals: {
              'securityhub:ASFFSyntaxPath/Workflow.Status': ['RESOLVED', 'SUPPRESSED', 'NEW'],
            },
          },
        });
        expect(handlers[handler].environment.SECURITY_HUB).toBe('true');
      }
    );

    it('grants the dispatcher nothing of Security Hub', () => {
      const statements = statementsOfRole(template, handlers.dispatch.roleLogicalId);
      expect(securityHubStatements(statements)).toEqual([]);
    });

    it('grants exactly the declared actions (with Security Hub) to each function', () => {
      for (const handler of SCANNING_HANDLERS) {
        const granted = statementsOfRole(template, handlers[handler].roleLogicalId)
          .flatMap((statement) => [statement.Action].flat())
          .filter((action) => action.startsWith('securityhub:'));
        expect(granted.sort()).toEqual(
          grantedActions(HANDLER_ACTIONS[handler], false, true)
            .filter((action) => action.startsWith('securityhub:'))
            .sort()
        );
      }
    });

    it('passes cdk-nag', () => {
      const violations = new AwsSolutionsChecks()
        .validateScope(app)
        .violations.map(
          (violation) =>
            `${violation.ruleName} ${violation.violatingResources.map((r) => r.constructPath).join(', ')}`
        );
      expect(violations).toEqual([]);
    });
  });
});
