import {
  BatchImportFindingsCommand,
  BatchUpdateFindingsCommand,
  SecurityHubClient,
} from '@aws-sdk/client-securityhub';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { classifySecurityHubFailure } from '../../../lambda/adapters/aws/aws-errors.js';
import {
  createSecurityHubPort,
  MAX_IMPORT_BATCH_BYTES,
  planImportBatches,
  securityHubActions,
} from '../../../lambda/adapters/aws/security-hub.js';
import { type AsffFinding, asffSizeBytes, toAsffFinding } from '../../../lambda/core/asff.js';
import { findingId } from '../../../lambda/core/model.js';

const securityHub = mockClient(SecurityHubClient);
const target = { account: '123456789012', region: 'eu-west-1', partition: 'aws' };
const times = {
  firstObservedAt: '2026-11-01T00:00:00.000Z',
  lastObservedAt: '2026-11-01T00:00:00.000Z',
  updatedAt: '2026-11-01T00:00:00.000Z',
};

function records(count: number): AsffFinding[] {
  return Array.from({ length: count }, (_, index) => {
    const resource = { cluster: 'prod', kind: 'EC2NodeClass' as const, name: `nc-${index}` };
    return toAsffFinding(
      {
        id: findingId('subnets-resolve', resource),
        checkId: 'subnets-resolve',
        severity: 'high',
        status: 'fail',
        resource,
        message: 'No subnet matches.',
      },
      { target, times }
    );
  });
}

const idsOfCall = (index: number) =>
  (securityHub.commandCalls(BatchImportFindingsCommand)[index]?.args[0].input.Findings ?? []).map(
    (finding) => finding.Id
  );

function error(name: string, status = 400): Error {
  return Object.assign(new Error(name), { name, $metadata: { httpStatusCode: status } });
}

beforeEach(() => securityHub.reset());

describe('createSecurityHubPort', () => {
  it('declares the actions it calls', () => {
    expect(securityHubActions).toEqual([
      'securityhub:BatchImportFindings',
      'securityhub:BatchUpdateFindings',
    ]);
  });

  it('imports at most 100 findings per call', async () => {
    securityHub.on(BatchImportFindingsCommand).resolves({ FailedCount: 0, SuccessCount: 100 });
    const findings = records(250);
    const failed = await createSecurityHubPort(securityHub as never).importFindings(findings);
    expect(failed).toEqual([]);
    const calls = securityHub.commandCalls(BatchImportFindingsCommand);
    expect(calls.map((call) => call.args[0].input.Findings?.length)).toEqual([100, 100, 50]);
    expect([...idsOfCall(0), ...idsOfCall(1), ...idsOfCall(2)]).toEqual(
      findings.map((finding) => finding.Id)
    );
  });

  it('retries only the findings that failed for a transient reason, once', async () => {
    const findings = records(3);
    const [a, b, c] = findings.map((finding) => finding.Id);
    securityHub
      .on(BatchImportFindingsCommand)
      .resolvesOnce({
        FailedCount: 2,
        SuccessCount: 1,
        FailedFindings: [
          { Id: b, ErrorCode: 'InternalFailure', ErrorMessage: 'try again' },
          { Id: c, ErrorCode: 'InvalidInput', ErrorMessage: 'bad Types' },
        ],
      })
      .resolves({ FailedCount: 0, SuccessCount: 1 });
    const failed = await createSecurityHubPort(securityHub as never).importFindings(findings);
    expect(idsOfCall(1)).toEqual([b]);
    expect(failed).toEqual([
      { id: c, code: 'InvalidInput', message: 'bad Types', kind: 'rejected' },
    ]);
    expect(idsOfCall(0)).toContain(a);
  });

  it('returns a transient failure that failed twice, never throws', async () => {
    securityHub.on(BatchImportFindingsCommand).rejects(error('ThrottlingException', 429));
    const findings = records(2);
    const failed = await createSecurityHubPort(securityHub as never).importFindings(findings);
    expect(securityHub.commandCalls(BatchImportFindingsCommand)).toHaveLength(2);
    expect(failed.map((failure) => [failure.id, failure.kind])).toEqual(
      findings.map((finding) => [finding.Id, 'transient'])
    );
  });

  it('does not retry when Security Hub is not enabled in the account', async () => {
    securityHub.on(BatchImportFindingsCommand).rejects(error('InvalidAccessException', 401));
    const failed = await createSecurityHubPort(securityHub as never).importFindings(records(1));
    expect(securityHub.commandCalls(BatchImportFindingsCommand)).toHaveLength(1);
    expect(failed[0]).toMatchObject({ code: 'InvalidAccessException', kind: 'refused' });
  });

  it('marks findings RESOLVED, 100 per call, and reports the unprocessed ones', async () => {
    const findings = records(120).map(({ Id, ProductArn }) => ({ Id, ProductArn }));
    const missing = findings[5];
    securityHub
      .on(BatchUpdateFindingsCommand)
      .resolves({ ProcessedFindings: [], UnprocessedFindings: [] });
    securityHub
      .on(BatchUpdateFindingsCommand, { FindingIdentifiers: findings.slice(0, 100) })
      .resolves({
        ProcessedFindings: [],
        UnprocessedFindings: [
          { FindingIdentifier: missing, ErrorCode: 'FindingSizeExceeded', ErrorMessage: 'too big' },
        ],
      });
    const failed = await createSecurityHubPort(securityHub as never).markResolved(findings);
    const calls = securityHub.commandCalls(BatchUpdateFindingsCommand);
    expect(calls.map((call) => call.args[0].input.FindingIdentifiers?.length)).toEqual([100, 20]);
    expect(calls[0]?.args[0].input.Workflow).toEqual({ Status: 'RESOLVED' });
    expect(failed).toEqual([
      { id: missing?.Id, code: 'FindingSizeExceeded', message: 'too big', kind: 'rejected' },
    ]);
  });

  it('sets SUPPRESSED with each note, and NEW, one request per status and note', async () => {
    // Prepare
    const [a, b, c] = records(3).map(({ Id, ProductArn }) => ({ Id, ProductArn }));
    if (!a || !b || !c) throw new Error('expected three records');
    securityHub
      .on(BatchUpdateFindingsCommand)
      .resolves({ ProcessedFindings: [], UnprocessedFindings: [] });
    // Act
    const failed = await createSecurityHubPort(securityHub as never).updateWorkflow([
      { ...a, status: 'SUPPRESSED', note: 'Suppressed by annotation …: accepted' },
      { ...b, status: 'NEW' },
      { ...c, status: 'SUPPRESSED', note: 'Suppressed by annotation …: accepted' },
    ]);
    // Assess
    expect(failed).toEqual([]);
    expect(
      securityHub.commandCalls(BatchUpdateFindingsCommand).map((call) => call.args[0].input)
    ).toEqual([
      {
        FindingIdentifiers: [a, c],
        Workflow: { Status: 'SUPPRESSED' },
        Note: { Text: 'Suppressed by annotation …: accepted', UpdatedBy: 'nodeclass-scanner' },
      },
      { FindingIdentifiers: [b], Workflow: { Status: 'NEW' } },
    ]);
  });
});

describe('planImportBatches', () => {
  it('keeps each request under 6 MB', () => {
    const big = records(1)[0] as AsffFinding;
    const padded = {
      ...big,
      ProductFields: Object.fromEntries(
        Array.from({ length: 40 }, (_, index) => [`k${index}`, 'x'.repeat(2000)])
      ),
    } as AsffFinding;
    const size = asffSizeBytes(padded);
    const perRequest = Math.floor(MAX_IMPORT_BATCH_BYTES / size);
    const batches = planImportBatches(Array.from({ length: 100 }, () => padded));
    for (const batch of batches) {
      expect(batch.reduce((sum, finding) => sum + asffSizeBytes(finding), 0)).toBeLessThanOrEqual(
        MAX_IMPORT_BATCH_BYTES
      );
    }
    expect(batches[0]).toHaveLength(Math.min(100, perRequest));
  });
});

describe('classifySecurityHubFailure', () => {
  it('tells transient, refused and rejected apart', () => {
    expect(classifySecurityHubFailure('ConcurrentUpdateError')).toBe('transient');
    expect(classifySecurityHubFailure('InternalFailure')).toBe('transient');
    expect(classifySecurityHubFailure('InvalidAccess')).toBe('refused');
    expect(classifySecurityHubFailure('InvalidInput')).toBe('rejected');
    expect(classifySecurityHubFailure(error('LimitExceededException'))).toBe('transient');
    expect(classifySecurityHubFailure(error('AccessDeniedException', 403))).toBe('refused');
    expect(classifySecurityHubFailure(error('InternalException', 500))).toBe('transient');
  });
});
