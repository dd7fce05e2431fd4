// A full scan replaces its cluster's NodeClass index rows, but writes only the rows whose content
// changed: on a real DynamoDB implementation (dynalite), so what is compared is what DynamoDB
// hands back (marshalled and unmarshalled), not what the store wrote.
import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { createFindingStore } from '../../../lambda/adapters/aws/finding-store.js';
import type { NodeClassIndexEntry } from '../../../lambda/core/event-index.js';
import type { FindingStore } from '../../../lambda/core/ports/service.js';
import { useDynaliteTable } from '../../support/dynalite-table.js';

const PROD = { account: '111122223333', region: 'eu-west-1', name: 'prod' };

/** Entries of the shapes a scan writes: nested tag maps, aliases, ids, both node identities. */
const ENTRIES: readonly NodeClassIndexEntry[] = [
  {
    cluster: 'prod',
    name: 'default',
    amiSelectorTerms: [{ alias: 'al2023@v20260101' }],
    resolvedAmiIds: ['ami-0123456789abcdef0', 'ami-0123456789abcdef1'],
    nodeRole: 'KarpenterNodeRole-prod',
    controllerRoleArn: 'arn:aws:iam::111122223333:role/KarpenterController',
  },
  {
    cluster: 'prod',
    name: 'gpu',
    amiSelectorTerms: [
      { tags: { 'karpenter.sh/discovery': 'prod', team: 'ml' }, owner: 'self' },
      { id: 'ami-0fedcba9876543210' },
    ],
    resolvedAmiIds: [],
    instanceProfile: 'KarpenterGpuProfile',
  },
  {
    cluster: 'prod',
    name: 'legacy',
    amiSelectorTerms: [{ name: 'eks-node-*', owner: '123456789012' }],
    resolvedAmiIds: ['ami-0aaaaaaaaaaaaaaaa'],
    nodeRole: 'KarpenterNodeRole-prod',
  },
];

const dynamo = useDynaliteTable();
/** Every index row each BatchWriteItem put or deleted (`put <sk>` / `delete <sk>`). */
let written: string[];

/** The document client, counting the index rows its batch writes carry. */
function countingClient(documents: DynamoDBDocumentClient): Pick<DynamoDBDocumentClient, 'send'> {
  return {
    send: ((command: unknown) => {
      if (command instanceof BatchWriteCommand) {
        for (const request of Object.values(command.input.RequestItems ?? {}).flat()) {
          if (request.PutRequest) written.push(`put ${String(request.PutRequest.Item?.sk)}`);
          if (request.DeleteRequest)
            written.push(`delete ${String(request.DeleteRequest.Key?.sk)}`);
        }
      }
      return documents.send(command as never);
    }) as DynamoDBDocumentClient['send'],
  };
}

function store(at: Date): FindingStore {
  return createFindingStore(countingClient(dynamo.documents), {
    tableName: dynamo.name,
    resolvedTtlDays: 30,
    homeRegion: PROD.region,
    now: () => at,
  });
}

const sk = (name: string) => `111122223333/eu-west-1/prod#${name}`;

beforeEach(() => {
  written = [];
});

describe('replaceClusterIndex', () => {
  it('a rescan that changes nothing writes no index row, and the index reads the same', async () => {
    // Prepare
    await store(new Date('2026-11-01T00:00:00Z')).replaceClusterIndex(PROD, ENTRIES);
    expect(written.sort()).toEqual([
      `put ${sk('default')}`,
      `put ${sk('gpu')}`,
      `put ${sk('legacy')}`,
    ]);
    written = [];
    const before = await store(new Date()).loadIndex();

    // Act: a later scan (another stamp) with the same entries, terms' keys in another order
    const reordered = ENTRIES.map((entry) =>
      entry.name === 'gpu'
        ? {
            ...entry,
            amiSelectorTerms: [
              { owner: 'self', tags: { team: 'ml', 'karpenter.sh/discovery': 'prod' } },
              { id: 'ami-0fedcba9876543210' },
            ],
          }
        : entry
    );
    await store(new Date('2026-11-01T00:15:00Z')).replaceClusterIndex(PROD, reordered);

    // Assess
    expect(written).toEqual([]);
    expect(await store(new Date()).loadIndex()).toEqual(before);
  });

  it('a rescan writes just the rows that changed, and deletes the NodeClasses gone', async () => {
    // Prepare
    await store(new Date('2026-11-01T00:00:00Z')).replaceClusterIndex(PROD, ENTRIES);
    written = [];
    const [first, second] = ENTRIES;
    if (!first || !second) throw new Error('two entries expected');
    const added: NodeClassIndexEntry = { ...first, name: 'spot' };

    // Act: `default` resolved a new image, `gpu` is unchanged, `legacy` is gone, `spot` is new
    await store(new Date('2026-11-01T00:15:00Z')).replaceClusterIndex(PROD, [
      { ...first, resolvedAmiIds: ['ami-0bbbbbbbbbbbbbbbb'] },
      second,
      added,
    ]);

    // Assess
    expect(written.sort()).toEqual([
      `delete ${sk('legacy')}`,
      `put ${sk('default')}`,
      `put ${sk('spot')}`,
    ]);
    const index = await store(new Date()).loadIndex();
    expect(index.find((entry) => entry.name === 'default')?.resolvedAmiIds).toEqual([
      'ami-0bbbbbbbbbbbbbbbb',
    ]);
    expect(index.map((entry) => entry.name).sort()).toEqual(['default', 'gpu', 'spot']);
  });

  it('a field removed (role mode to instance-profile mode) is a change', async () => {
    // Prepare
    const [first] = ENTRIES;
    if (!first) throw new Error('an entry expected');
    await store(new Date('2026-11-01T00:00:00Z')).replaceClusterIndex(PROD, [first]);
    written = [];

    // Act
    const { nodeRole: _role, ...withoutRole } = first;
    await store(new Date('2026-11-01T00:15:00Z')).replaceClusterIndex(PROD, [
      { ...withoutRole, instanceProfile: 'KarpenterProfile' },
    ]);

    // Assess
    expect(written).toEqual([`put ${sk('default')}`]);
    const [stored] = await store(new Date()).loadIndex();
    expect(stored?.nodeRole).toBeUndefined();
    expect(stored?.instanceProfile).toBe('KarpenterProfile');
  });
});
