// A tiny in-memory table behind aws-sdk-client-mock, honouring exactly the key conditions and
// condition expressions the finding store uses, so handler tests see real conditional-write races.
import {
  BatchWriteCommand,
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';

type Item = Record<string, unknown>;
type Values = Record<string, unknown> | undefined;

/** A scalar as DynamoDB sends it (`{ N: '7' }`); the store compares scalars only. */
function wireValue(value: unknown): Record<string, unknown> {
  if (typeof value === 'string') return { S: value };
  if (typeof value === 'number') return { N: String(value) };
  if (typeof value === 'boolean') return { BOOL: value };
  return { S: JSON.stringify(value) };
}

/**
 * As DynamoDB: with `ReturnValuesOnConditionCheckFailure: 'ALL_OLD'` the failure carries the item
 * as the condition found it, in the wire form the document client leaves it in.
 */
const conditionFailed = (returnValues?: string, item?: Item) =>
  Object.assign(new Error('The conditional request failed'), {
    name: 'ConditionalCheckFailedException',
    $metadata: { httpStatusCode: 400 },
    ...(returnValues === 'ALL_OLD' && item !== undefined
      ? {
          Item: Object.fromEntries(
            Object.entries(item).map(([name, value]) => [name, wireValue(value)])
          ),
        }
      : {}),
  });

const NEWER_SCAN = '(attribute_not_exists(scanSeq) OR scanSeq < :scanSeq)';

function newerScan(item: Item | undefined, values: Values): boolean {
  return item?.scanSeq === undefined || Number(item.scanSeq) < Number(values?.[':scanSeq']);
}

function holds(
  condition: string | undefined,
  item: Item | undefined,
  values: Values,
  names: Record<string, string> = {}
): boolean {
  const revision = item?.revision === values?.[':revision'];
  switch (condition) {
    case undefined:
      return true;
    case 'attribute_not_exists(pk)':
      return item === undefined;
    case 'revision = :revision':
      return revision;
    case 'revision = :revision AND attribute_not_exists(pendingSeq)':
      return revision && item?.pendingSeq === undefined;
    case `revision = :revision AND attribute_not_exists(pendingSeq) AND ${NEWER_SCAN}`:
      return revision && item?.pendingSeq === undefined && newerScan(item, values);
    case `revision = :revision AND #status = :open AND ${NEWER_SCAN}`:
      return revision && item?.status === values?.[':open'] && newerScan(item, values);
    case 'revision = :revision AND pendingSeq = :owner':
      return revision && item?.pendingSeq === values?.[':owner'];
    case 'revision = :revision AND pendingSeq = :scanSeq':
      return revision && item?.pendingSeq === values?.[':scanSeq'];
    // A first scan's batch claim: no newer scan started, no other batch pending.
    case '#seq = :seq AND attribute_not_exists(batchKey)':
      return item?.[names['#seq'] ?? '#seq'] === values?.[':seq'] && item?.batchKey === undefined;
    case 'batchKey = :key AND batchOwnerSeq = :owner':
      return item?.batchKey === values?.[':key'] && item?.batchOwnerSeq === values?.[':owner'];
    case 'attribute_not_exists(#adoptedBy) OR #adoptedBy = :me':
      return item?.adoptedBy === undefined || item.adoptedBy === values?.[':me'];
    default:
      throw new Error(`fake table: unsupported condition ${condition}`);
  }
}

/** The update expressions the store sends: `SET a = :x, …`, `REMOVE a, …`, `ADD #n :v SET #m = :w`. */
function applyUpdate(
  current: Item | undefined,
  key: Item,
  input: {
    UpdateExpression: string;
    ExpressionAttributeNames?: Record<string, string>;
    ExpressionAttributeValues?: Values;
  }
): Item {
  const names = input.ExpressionAttributeNames ?? {};
  const values = input.ExpressionAttributeValues ?? {};
  const name = (token: string) => names[token] ?? token;
  const next: Item = { ...key, ...current };
  const clauses = input.UpdateExpression.split(/\b(?=SET |REMOVE |ADD )/);
  for (const clause of clauses) {
    const [verb, ...rest] = clause.trim().split(' ');
    const body = rest.join(' ');
    for (const part of body.split(',').map((p) => p.trim())) {
      if (verb === 'REMOVE') delete next[name(part)];
      else if (verb === 'SET') {
        const [target, value] = part.split('=').map((p) => p.trim());
        next[name(target ?? '')] = values[value ?? ''];
      } else if (verb === 'ADD') {
        const [target, value] = part.split(' ');
        next[name(target ?? '')] =
          Number(next[name(target ?? '')] ?? 0) + Number(values[value ?? '']);
      }
    }
  }
  return next;
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
      (input: {
        Item: Item;
        ConditionExpression?: string;
        ExpressionAttributeValues?: Values;
        ReturnValuesOnConditionCheckFailure?: string;
      }) => {
        const current = items.get(key(input.Item));
        if (!holds(input.ConditionExpression, current, input.ExpressionAttributeValues))
          throw conditionFailed(input.ReturnValuesOnConditionCheckFailure, current);
        items.set(key(input.Item), structuredClone(input.Item));
        return {};
      }
    );
  mock
    .on(DeleteCommand)
    .callsFake(
      (input: {
        Key: Item;
        ConditionExpression?: string;
        ExpressionAttributeValues?: Values;
        ReturnValuesOnConditionCheckFailure?: string;
      }) => {
        const current = items.get(key(input.Key));
        if (!holds(input.ConditionExpression, current, input.ExpressionAttributeValues))
          throw conditionFailed(input.ReturnValuesOnConditionCheckFailure, current);
        items.delete(key(input.Key));
        return {};
      }
    );
  // As DynamoDB: an update creates a missing item when its condition holds without one.
  mock.on(UpdateCommand).callsFake((input) => {
    const current = items.get(key(input.Key));
    if (
      !holds(
        input.ConditionExpression,
        current,
        input.ExpressionAttributeValues,
        input.ExpressionAttributeNames
      )
    ) {
      throw conditionFailed(input.ReturnValuesOnConditionCheckFailure, current);
    }
    const next = applyUpdate(current, input.Key, input);
    items.set(key(input.Key), next);
    return { Attributes: structuredClone(next) };
  });
  mock.on(GetCommand).callsFake((input) => {
    const item = items.get(key(input.Key));
    return item ? { Item: structuredClone(item) } : {};
  });
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
