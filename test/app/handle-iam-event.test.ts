import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { handleIamEvent } from '../../lambda/app/handle-iam-event.js';
import type { ScanRequest } from '../../lambda/app/scan-and-publish.js';
import type { IamEntityReader } from '../../lambda/core/ports/service.js';
import { InMemoryFindingStore, RecordingMetrics, silentLogger } from '../support/service-fakes.js';

const event = (name: string) =>
  JSON.parse(
    readFileSync(join(import.meta.dirname, `../../examples/events/${name}.json`), 'utf8')
  ) as unknown;

let store: InMemoryFindingStore;
let metrics: RecordingMetrics;
let scans: ScanRequest[];
let lookups: string[];

const iam: IamEntityReader = {
  async rolesAttachedToPolicy(arn) {
    lookups.push(`policy:${arn}`);
    return arn.endsWith('/KarpenterControllerPolicy-prod') ? ['KarpenterController-prod'] : [];
  },
  async instanceProfilesForRole(role) {
    lookups.push(`role:${role}`);
    return role === 'KarpenterNodeRole-prod' ? ['KarpenterNodeInstanceProfile-prod'] : [];
  },
};

function deps(failedClusters: string[] = []) {
  return {
    iam,
    store,
    metrics,
    logger: silentLogger,
    homeRegion: 'eu-west-1',
    scan: async (request: ScanRequest) => {
      scans.push(request);
      return { outcomes: [], failedClusters };
    },
  };
}

beforeEach(async () => {
  store = new InMemoryFindingStore();
  metrics = new RecordingMetrics();
  scans = [];
  lookups = [];
  await store.putIndexEntries([
    {
      cluster: 'prod',
      name: 'role-mode',
      amiSelectorTerms: [],
      resolvedAmiIds: [],
      nodeRole: 'KarpenterNodeRole-prod',
    },
    {
      cluster: 'prod',
      name: 'profile-mode',
      amiSelectorTerms: [],
      resolvedAmiIds: [],
      instanceProfile: 'KarpenterNodeInstanceProfile-prod',
    },
    {
      cluster: 'staging',
      name: 'default',
      amiSelectorTerms: [],
      resolvedAmiIds: [],
      nodeRole: 'KarpenterNodeRole-staging',
      controllerRoleArn: 'arn:aws:iam::111122223333:role/KarpenterController-prod',
    },
    {
      cluster: 'dev',
      name: 'default',
      amiSelectorTerms: [],
      resolvedAmiIds: [],
      nodeRole: 'Unrelated',
    },
  ]);
});

describe('handleIamEvent', () => {
  it('AttachRolePolicy: rescans NodeClasses using the role directly or through its instance profile', async () => {
    // Act
    const outcome = await handleIamEvent(deps(), event('iam-attach-role-policy'));
    // Assess
    expect(outcome.status).toBe('scanned');
    expect(lookups).toEqual([
      'policy:arn:aws:iam::111122223333:policy/karpenter-node-extra',
      'role:KarpenterNodeRole-prod',
    ]);
    expect(scans).toEqual([
      {
        scanId: 'iam-a1000000-0000-4000-8000-000000000002',
        trigger: 'iam-AttachRolePolicy',
        clusters: [{ cluster: 'prod' }],
        restrictTo: [
          { cluster: 'prod', name: 'role-mode' },
          { cluster: 'prod', name: 'profile-mode' },
        ],
      },
    ]);
  });

  it('SetDefaultPolicyVersion: maps the policy to the controller role and rescans its clusters', async () => {
    await handleIamEvent(deps(), event('iam-set-default-policy-version'));
    expect(scans[0]?.restrictTo).toEqual([{ cluster: 'staging', name: 'default' }]);
  });

  it('DeleteInstanceProfile: rescans the NodeClasses naming the profile', async () => {
    await handleIamEvent(deps(), event('iam-delete-instance-profile'));
    expect(scans[0]?.restrictTo).toEqual([{ cluster: 'prod', name: 'profile-mode' }]);
  });

  it('does not scan when no stored NodeClass is affected', async () => {
    const raw = event('iam-put-role-policy') as { detail: Record<string, unknown> };
    const other = {
      ...raw,
      detail: { ...raw.detail, requestParameters: { roleName: 'SomeoneElse', policyName: 'p' } },
    };
    expect(await handleIamEvent(deps(), other)).toEqual({ status: 'no-match' });
    expect(scans).toEqual([]);
  });

  it('drops a failed call and a malformed event with the EventsIgnored metric, without lookups', async () => {
    const raw = event('iam-put-role-policy') as { detail: Record<string, unknown> };
    await handleIamEvent(deps(), {
      ...raw,
      detail: { ...raw.detail, errorCode: 'NoSuchEntityException' },
    });
    await handleIamEvent(deps(), { ...raw, detail: { ...raw.detail, requestParameters: null } });
    expect(metrics.records.map((r) => r.dimensions.Reason)).toEqual([
      'iam-call-failed',
      'malformed-event',
    ]);
    expect(lookups).toEqual([]);
  });

  it('rescans same-named clusters of two regions as two clusters, a NodeClass indexed twice once', async () => {
    // Prepare: another prod, in us-west-2, with the same node role; and the home region's
    // role-mode entry as an earlier version stored it too (no account, no region).
    await store.putIndexEntries([
      {
        cluster: 'prod',
        account: '111122223333',
        region: 'us-west-2',
        name: 'role-mode',
        amiSelectorTerms: [],
        resolvedAmiIds: [],
        nodeRole: 'KarpenterNodeRole-prod',
      },
      {
        cluster: 'prod',
        account: '111122223333',
        region: 'eu-west-1',
        name: 'role-mode',
        amiSelectorTerms: [],
        resolvedAmiIds: [],
        nodeRole: 'KarpenterNodeRole-prod',
      },
    ]);
    // Act
    await handleIamEvent(deps(), event('iam-attach-role-policy'));
    // Assess
    expect(scans).toHaveLength(1);
    expect(scans[0]?.clusters).toEqual([
      { cluster: 'prod' },
      { cluster: 'prod', region: 'us-west-2' },
    ]);
    expect(scans[0]?.restrictTo).toEqual([
      { cluster: 'prod', name: 'role-mode' },
      { cluster: 'prod', name: 'profile-mode' },
      { cluster: 'prod', name: 'role-mode', region: 'us-west-2' },
    ]);
  });

  it('throws after scanning when a cluster failed, so the event is retried', async () => {
    await expect(handleIamEvent(deps(['prod']), event('iam-put-role-policy'))).rejects.toThrow(
      /prod/
    );
    expect(scans).toHaveLength(1);
  });
});
