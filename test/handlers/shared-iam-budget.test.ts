// iamBudgetTableArn: the scanning Lambdas take their IAM tokens from another deployment's table (in
// its region), and keep their findings in their own.
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiCallCounter } from '../../lambda/adapters/aws/api-call-counter.js';
import { RATE_BUDGET_PK } from '../../lambda/adapters/aws/table-rate-budget.js';
import { createStateStores, sharedBudgetTable } from '../../lambda/handlers/phases/state.js';
import { parseConfig } from '../../lambda/shared/env-config.js';

const documents = mockClient(DynamoDBDocumentClient);
afterEach(() => documents.reset());

const SHARED = 'arn:aws:dynamodb:us-east-1:123456789012:table/Home-StateTable0A1B2C3D';
const scanEnv = {
  STATE_TABLE_NAME: 'Regional-StateTable',
  FINDINGS_TOPIC_ARN: 'arn:aws:sns:eu-west-1:123456789012:findings',
  AWS_REGION: 'eu-west-1',
  IGNORE_RULES: '',
};
const configOf = (env: Record<string, string>) =>
  parseConfig(env, 'scan-cluster', () => ({ value: [] }));

/** Table and region of the one budget request `take` sends. */
async function budgetRequestOf(env: Record<string, string>) {
  documents.on(UpdateCommand).resolves({});
  const stores = createStateStores(configOf(env), new ApiCallCounter(), () => new Date());
  await stores.iamBudget.take();
  const [call] = documents.commandCalls(UpdateCommand);
  const client = call?.thisValue as DynamoDBDocumentClient | undefined;
  return {
    tableName: call?.args[0].input.TableName,
    key: call?.args[0].input.Key,
    region: await client?.config.region(),
  };
}

describe('iamBudgetTableArn', () => {
  it("reads the table and region from the ARN (none when unset or not a table's)", () => {
    expect(sharedBudgetTable(SHARED)).toEqual({
      region: 'us-east-1',
      tableName: 'Home-StateTable0A1B2C3D',
    });
    expect(sharedBudgetTable(undefined)).toBeUndefined();
    expect(sharedBudgetTable('arn:aws:sqs:us-east-1:123456789012:queue')).toBeUndefined();
  });

  it("takes IAM tokens from the shared table's BUDGET item, through a client of its region", async () => {
    expect(await budgetRequestOf({ ...scanEnv, IAM_BUDGET_TABLE_ARN: SHARED })).toEqual({
      tableName: 'Home-StateTable0A1B2C3D',
      key: { pk: RATE_BUDGET_PK, sk: 'iam' },
      region: 'us-east-1',
    });
  });

  it("takes them from the deployment's own table when unset", async () => {
    expect(await budgetRequestOf(scanEnv)).toEqual({
      tableName: 'Regional-StateTable',
      key: { pk: RATE_BUDGET_PK, sk: 'iam' },
      region: 'eu-west-1',
    });
  });

  it('refuses a value that is not a DynamoDB table ARN, naming the variable', () => {
    expect(() => configOf({ ...scanEnv, IAM_BUDGET_TABLE_ARN: 'Home-StateTable' })).toThrow(
      /IAM_BUDGET_TABLE_ARN: .*DynamoDB table ARN/
    );
  });
});
