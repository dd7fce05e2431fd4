// A tiny in-memory table behind aws-sdk-client-mock, honouring exactly the key conditions and
// condition expressions the finding store uses, so handler tests see real conditional-write races.
import {
  BatchWriteCommand,
  DeleteCommand,
  DynamoDBDocumentClient,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';

type Item = Record<string, unknown>;
type Values = Record<string, unknown> | undefined;

const conditionFailed = () =>
  Object.assign(new Error('The conditional request failed'), {
    name: 'ConditionalCheckFailedException',
    $metadata: { httpStatusCode: 400 },
  });

function holds(condition: string | undefined, item: Item | undefined, values: Values): boolean {
  switch (condition) {
    case undefined:
      return true;
    case 'attribute_not_exists(pk)':
      return item === undefined;
    case 'revision = :revision':
      return item?.revision === values?.[':revision'];
    case 'revision = :revision AND #status = :open':
      return item?.revision === values?.[':revision'] && item?.status === values?.[':open'];
    default:
      throw new Error(`fake table: unsupported condition ${condition}`);
  }
}

const documentMock = () => mockClient(DynamoDBDocumentClient);

export interface FakeTable {
  readonly items: Map<string, Item>;
  readonly mock: ReturnType<typeof documentMock>;
  findings(): Item[];
}

export function fakeDynamoDb(): FakeTable {
  const items = new Map<string, Item>();
  const key = (k: { pk?: unknown; sk?: unknown }) => `${String(k.pk)}|${String(k.sk)}`;
  const mock = documentMock();
  mock
    .on(PutCommand)
    .callsFake(
      (input: { Item: Item; ConditionExpression?: string; ExpressionAttributeValues?: Values }) => {
        if (
          !holds(
            input.ConditionExpression,
            items.get(key(input.Item)),
            input.ExpressionAttributeValues
          )
        )
          throw conditionFailed();
        items.set(key(input.Item), structuredClone(input.Item));
        return {};
      }
    );
  mock
    .on(DeleteCommand)
    .callsFake(
      (input: { Key: Item; ConditionExpression?: string; ExpressionAttributeValues?: Values }) => {
        if (
          !holds(
            input.ConditionExpression,
            items.get(key(input.Key)),
            input.ExpressionAttributeValues
          )
        )
          throw conditionFailed();
        items.delete(key(input.Key));
        return {};
      }
    );
  mock
    .on(UpdateCommand)
    .callsFake(
      (input: { Key: Item; ConditionExpression?: string; ExpressionAttributeValues?: Values }) => {
        const current = items.get(key(input.Key));
        if (!holds(input.ConditionExpression, current, input.ExpressionAttributeValues) || !current)
          throw conditionFailed();
        items.set(key(input.Key), {
          ...current,
          lastSeen: input.ExpressionAttributeValues?.[':lastSeen'],
        });
        return {};
      }
    );
  mock.on(QueryCommand).callsFake((input) => {
    const pk = input.ExpressionAttributeValues[':pk'];
    const prefix = input.ExpressionAttributeValues[':prefix'] ?? '';
    return {
      Items: [...items.values()]
        .filter((item) => item.pk === pk && String(item.sk).startsWith(prefix))
        .map((item) => structuredClone(item)),
    };
  });
  mock
    .on(BatchWriteCommand)
    .callsFake(
      (input: {
        RequestItems: Record<
          string,
          { PutRequest?: { Item: Item }; DeleteRequest?: { Key: Item } }[]
        >;
      }) => {
        for (const request of Object.values(input.RequestItems).flat()) {
          if (request.PutRequest)
            items.set(key(request.PutRequest.Item), structuredClone(request.PutRequest.Item));
          if (request.DeleteRequest) items.delete(key(request.DeleteRequest.Key));
        }
        return { UnprocessedItems: {} };
      }
    );
  return {
    items,
    mock,
    findings: () => [...items.values()].filter((item) => item.type === 'finding'),
  };
}
