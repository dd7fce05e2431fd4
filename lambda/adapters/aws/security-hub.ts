// Security Hub implementation of the SecurityHubPort: BatchImportFindings and BatchUpdateFindings,
// each at most 100 findings per call (and BatchImportFindings at most 6 MB per request). Findings
// that fail for a transient reason are retried once; what still fails is returned, classified
// (aws-errors.ts), never thrown, so the caller can hold back exactly those.
// https://docs.aws.amazon.com/securityhub/1.0/APIReference/API_BatchImportFindings.html
// https://docs.aws.amazon.com/securityhub/1.0/APIReference/API_BatchUpdateFindings.html

import {
  type AwsSecurityFinding,
  BatchImportFindingsCommand,
  BatchUpdateFindingsCommand,
  type SecurityHubClient,
} from '@aws-sdk/client-securityhub';
import {
  ASFF_BATCH_LIMIT,
  ASFF_NOTE_AUTHOR,
  type AsffFinding,
  asffSizeBytes,
  type SecurityHubFailure,
  type SecurityHubPort,
  type WorkflowUpdate,
} from '../../core/asff.js';
import { batchesWithin, chunks } from '../../shared/chunks.js';
import { classifySecurityHubFailure } from './aws-errors.js';

export const securityHubActions = [
  'securityhub:BatchImportFindings',
  'securityhub:BatchUpdateFindings',
] as const;

export type SecurityHubSender = Pick<SecurityHubClient, 'send'>;

/** BatchImportFindings refuses a request over 6 MB. */
export const MAX_IMPORT_BATCH_BYTES = 6 * 1024 * 1024;

interface Identified {
  readonly Id: string;
}

/** Groups findings into requests of ≤100 findings and ≤6 MB, in order. */
export function planImportBatches(findings: readonly AsffFinding[]): AsffFinding[][] {
  return batchesWithin(
    findings,
    { maxItems: ASFF_BATCH_LIMIT, maxBytes: MAX_IMPORT_BATCH_BYTES },
    asffSizeBytes
  );
}

type SendOnce<E extends Identified> = (entries: readonly E[]) => Promise<SecurityHubFailure[]>;

/** The failures of one request: per finding as Security Hub reports them, or all when it throws. */
async function attempt<E extends Identified>(
  entries: readonly E[],
  send: (entries: readonly E[]) => Promise<readonly { id: string; code: string; message: string }[]>
): Promise<SecurityHubFailure[]> {
  try {
    const failed = await send(entries);
    return failed.map((failure) => ({
      ...failure,
      kind: classifySecurityHubFailure(failure.code),
    }));
  } catch (error) {
    const code = (error as { name?: string }).name ?? 'Error';
    const message = error instanceof Error ? error.message : String(error);
    const kind = classifySecurityHubFailure(error);
    return entries.map((entry) => ({ id: entry.Id, code, message, kind }));
  }
}

/** Sends each batch, retrying its transient failures once; returns what still failed. */
async function sendAll<E extends Identified>(
  batches: readonly (readonly E[])[],
  sendOnce: SendOnce<E>
): Promise<SecurityHubFailure[]> {
  const failures: SecurityHubFailure[] = [];
  for (const batch of batches) {
    const first = await sendOnce(batch);
    failures.push(...first.filter((failure) => failure.kind !== 'transient'));
    const retryIds = new Set(
      first.filter((failure) => failure.kind === 'transient').map((failure) => failure.id)
    );
    if (retryIds.size > 0)
      failures.push(...(await sendOnce(batch.filter((entry) => retryIds.has(entry.Id)))));
  }
  return failures;
}

/** One BatchUpdateFindings request sets one workflow status and one note: updates grouped so. */
function workflowGroups(updates: readonly WorkflowUpdate[]): WorkflowUpdate[][] {
  const groups = new Map<string, WorkflowUpdate[]>();
  for (const update of updates) {
    const key = JSON.stringify([update.status, update.note ?? null]);
    groups.set(key, [...(groups.get(key) ?? []), update]);
  }
  return [...groups.values()].flatMap((group) => chunks(group, ASFF_BATCH_LIMIT));
}

type UpdateRequest = ConstructorParameters<typeof BatchUpdateFindingsCommand>[0];

/** Sends one BatchUpdateFindings request; its unprocessed findings as failures. */
async function updateFindings(client: SecurityHubSender, input: UpdateRequest) {
  const response = await client.send(new BatchUpdateFindingsCommand(input));
  return (response.UnprocessedFindings ?? []).map((failure) => ({
    id: failure.FindingIdentifier?.Id ?? '',
    code: failure.ErrorCode ?? 'Error',
    message: failure.ErrorMessage ?? '',
  }));
}

export function createSecurityHubPort(client: SecurityHubSender): SecurityHubPort {
  return {
    importFindings: (findings) =>
      sendAll(planImportBatches(findings), (batch) =>
        attempt(batch, async (entries) => {
          const response = await client.send(
            new BatchImportFindingsCommand({
              // Our record is a subset of the SDK's shape with read-only arrays.
              Findings: entries as unknown as AwsSecurityFinding[],
            })
          );
          return (response.FailedFindings ?? []).map((failure) => ({
            id: failure.Id ?? '',
            code: failure.ErrorCode ?? 'Error',
            message: failure.ErrorMessage ?? '',
          }));
        })
      ),
    markResolved: (findings) =>
      sendAll(chunks(findings, ASFF_BATCH_LIMIT), (batch) =>
        attempt(batch, (entries) =>
          updateFindings(client, {
            FindingIdentifiers: entries.map(({ Id, ProductArn }) => ({ Id, ProductArn })),
            Workflow: { Status: 'RESOLVED' },
          })
        )
      ),
    updateWorkflow: (updates) =>
      sendAll(workflowGroups(updates), (batch) =>
        attempt(batch, (entries) => {
          const [first] = entries;
          if (first === undefined) return Promise.resolve([]);
          return updateFindings(client, {
            FindingIdentifiers: entries.map(({ Id, ProductArn }) => ({ Id, ProductArn })),
            Workflow: { Status: first.status },
            ...(first.note === undefined
              ? {}
              : { Note: { Text: first.note, UpdatedBy: ASFF_NOTE_AUTHOR } }),
          });
        })
      ),
  };
}
