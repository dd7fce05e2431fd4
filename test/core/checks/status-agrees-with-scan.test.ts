import { describe, expect, it } from 'vitest';
import { instanceProfileIsName } from '../../../lambda/core/checks/instance-profile-is-name.js';
import { statusAgreesWithScan } from '../../../lambda/core/checks/status-agrees-with-scan.js';
import { runChecks } from '../../../lambda/core/evaluate.js';
import type { AwsNodeClassFacts, Image } from '../../../lambda/core/facts/aws.js';
import { ok } from '../../../lambda/core/facts/slice.js';
import { nodeClassKey } from '../../../lambda/core/inventory.js';
import { aNodeClassObject, anInventory } from '../../support/builders.js';

const now = new Date('2026-11-01T12:00:00Z');
const minutesAgo = (minutes: number) => new Date(now.getTime() - minutes * 60_000).toISOString();

function conditions(overrides: Record<string, Record<string, unknown>> = {}) {
  const base: Record<string, Record<string, unknown>> = {
    AMIsReady: { status: 'True', reason: 'AMIsReady' },
    SubnetsReady: { status: 'True', reason: 'SubnetsReady' },
    SecurityGroupsReady: { status: 'True', reason: 'SecurityGroupsReady' },
    InstanceProfileReady: { status: 'True', reason: 'InstanceProfileReady' },
    ValidationSucceeded: { status: 'True', reason: 'ValidationSucceeded' },
    Ready: { status: 'True', reason: 'Ready', observedGeneration: 1 },
  };
  return Object.entries({ ...base, ...overrides }).map(([type, fields]) => ({
    type,
    lastTransitionTime: minutesAgo(120),
    ...fields,
  }));
}

function evaluate(
  object: Record<string, unknown>,
  facts?: AwsNodeClassFacts,
  checks = [statusAgreesWithScan]
) {
  const inventory = anInventory([object], {
    cluster: { name: 'prod' },
    inputs: ['spec', 'cluster'],
    ...(facts
      ? { overrides: { awsFacts: new Map([[nodeClassKey('prod', 'default'), facts]]) } }
      : {}),
  });
  return runChecks(inventory, checks, { now }).findings;
}

const image = (id: string, state: string): Image => ({ id, state, tags: {} });

function amiFacts(images: Image[]): AwsNodeClassFacts {
  const selection = ok({
    queries: [
      { query: { filters: [], includeDeprecated: true }, termIndexes: [0], images, selected: [] },
    ],
    matchCount: images.length,
    selected: [],
  });
  return { amis: ok({ ssmParameters: [], available: selection, ignoringState: selection }) };
}

describe('status-agrees-with-scan', () => {
  it('passes when the status is consistent, saying AWS facts were not compared', () => {
    // Act
    const [finding] = evaluate(aNodeClassObject({ status: { conditions: conditions() } }));

    // Assess
    expect(finding?.status).toBe('pass');
    expect(finding?.message).toContain('AWS facts not collected');
  });

  it('gives two findings for the seed case: ARN profile, InstanceProfileReady=True, ValidationSucceeded=Unknown for 40 minutes', () => {
    // Prepare
    const seed = aNodeClassObject({
      spec: {
        role: undefined,
        instanceProfile: 'arn:aws:iam::123456789012:instance-profile/KarpenterNode',
      },
      status: {
        conditions: conditions({
          ValidationSucceeded: {
            status: 'Unknown',
            reason: 'AwaitingReconciliation',
            lastTransitionTime: minutesAgo(40),
          },
          Ready: { status: 'Unknown', reason: 'ReconcilingDependents', observedGeneration: 1 },
        }),
      },
    });

    // Act
    const findings = evaluate(seed, undefined, [instanceProfileIsName, statusAgreesWithScan]);

    // Assess
    const failing = findings.filter((finding) => finding.status === 'fail');
    expect(failing.map((finding) => finding.checkId).sort()).toEqual([
      'instance-profile-is-name',
      'status-agrees-with-scan',
    ]);
    const lying = failing.find((finding) => finding.checkId === 'status-agrees-with-scan');
    expect(lying?.severity).toBe('high');
    expect(lying?.message).toContain('InstanceProfileReady=True');
    expect(lying?.message).toContain(
      'ValidationSucceeded=Unknown/AwaitingReconciliation for 40 minutes'
    );
    expect(lying?.evidence.contradictions).toEqual([
      expect.objectContaining({ kind: 'instance-profile' }),
      expect.objectContaining({ kind: 'validation-unknown', minutes: 40 }),
    ]);
  });

  it('tolerates ValidationSucceeded=Unknown for up to 30 minutes', () => {
    // Prepare
    const object = aNodeClassObject({
      status: {
        conditions: conditions({
          ValidationSucceeded: { status: 'Unknown', lastTransitionTime: minutesAgo(30) },
        }),
      },
    });

    // Act
    const [finding] = evaluate(object);

    // Assess
    expect(finding?.status).toBe('pass');
  });

  it('does not blame validation that waits for a dependency that is not ready', () => {
    // Prepare
    const object = aNodeClassObject({
      status: {
        conditions: conditions({
          AMIsReady: { status: 'Unknown', reason: 'AwaitingReconciliation' },
          ValidationSucceeded: {
            status: 'Unknown',
            reason: 'DependenciesNotReady',
            lastTransitionTime: minutesAgo(90),
          },
        }),
      },
    });

    // Act
    const [finding] = evaluate(object);

    // Assess
    expect(finding?.status).toBe('pass');
  });

  it('fails when Ready.observedGeneration is behind metadata.generation', () => {
    // Prepare
    const object = aNodeClassObject({
      metadata: { generation: 3 },
      status: { conditions: conditions({ Ready: { status: 'True', observedGeneration: 2 } }) },
    });

    // Act
    const [finding] = evaluate(object);

    // Assess
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('generation 2 but the spec is at generation 3');
  });

  it('fails when status.amis holds an image that is no longer available', () => {
    // Prepare
    const object = aNodeClassObject({
      status: {
        conditions: conditions(),
        amis: [
          { id: 'ami-good', name: 'good' },
          { id: 'ami-gone', name: 'gone' },
        ],
      },
    });
    const facts = amiFacts([image('ami-good', 'available'), image('ami-gone', 'deregistered')]);

    // Act
    const [finding] = evaluate(object, facts);

    // Assess
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('ami-gone (gone), whose state is "deregistered"');
    expect(finding?.message).not.toContain('ami-good');
  });

  it('passes with AWS facts when every status AMI is available', () => {
    // Prepare
    const object = aNodeClassObject({
      status: { conditions: conditions(), amis: [{ id: 'ami-good' }] },
    });

    // Act
    const [finding] = evaluate(object, amiFacts([image('ami-good', 'available')]));

    // Assess
    expect(finding?.status).toBe('pass');
    expect(finding?.evidence).toEqual({ awsFactsUsed: true });
  });

  it('fails when InstanceProfileReady=True but the named profile does not exist', () => {
    // Prepare
    const object = aNodeClassObject({
      spec: { role: undefined, instanceProfile: 'missing-profile' },
      status: { conditions: conditions() },
    });

    // Act
    const [finding] = evaluate(object, {
      instanceProfile: ok({ name: 'missing-profile' }),
    });

    // Assess
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('"missing-profile" does not exist');
  });

  it('fails when InstanceProfileReady=True but the profile holds no role', () => {
    // Prepare
    const object = aNodeClassObject({
      spec: { role: undefined, instanceProfile: 'empty-profile' },
      status: { conditions: conditions() },
    });

    // Act
    const [finding] = evaluate(object, {
      instanceProfile: ok({
        name: 'empty-profile',
        profile: {
          name: 'empty-profile',
          arn: 'arn:aws:iam::1:instance-profile/empty-profile',
          roleNames: [],
        },
      }),
    });

    // Assess
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('"empty-profile" holds no role');
  });

  it('fails in role mode when InstanceProfileReady=True but the node role was deleted', () => {
    // Prepare
    const object = aNodeClassObject({ status: { conditions: conditions() } });

    // Act
    const [finding] = evaluate(object, {
      nodeRole: ok({ source: 'spec.role', name: 'KarpenterNodeRole-demo' }),
    });

    // Assess
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('node role "KarpenterNodeRole-demo" does not exist');
  });

  describe('material facts', () => {
    const unknownSince = minutesAgo(40);
    const stuck = (overrides: Record<string, unknown> = {}) =>
      aNodeClassObject({
        ...overrides,
        status: {
          conditions: conditions({
            ValidationSucceeded: {
              status: 'Unknown',
              reason: 'AwaitingReconciliation',
              lastTransitionTime: unknownSince,
            },
          }),
        },
      });
    const scanAt = (at: Date, object: Record<string, unknown>) => {
      const inventory = anInventory([object], { cluster: { name: 'prod' }, inputs: ['cluster'] });
      const [finding] = runChecks(inventory, [statusAgreesWithScan], { now: at }).findings;
      return finding;
    };

    it('keeps the material hash while the Unknown condition only ages by 15 minutes', () => {
      // Act
      const first = scanAt(now, stuck());
      const later = scanAt(new Date(now.getTime() + 15 * 60_000), stuck());

      // Assess: the message says the minutes, the hash does not depend on them.
      expect(first?.message).toContain('for 40 minutes');
      expect(later?.message).toContain('for 55 minutes');
      expect(later?.id).toBe(first?.id);
      expect(later?.materialHash).toBe(first?.materialHash);
    });

    it('changes the material hash when another kind of contradiction appears', () => {
      // Act
      const first = scanAt(now, stuck());
      const later = scanAt(now, stuck({ metadata: { generation: 2 } }));

      // Assess
      expect(later?.status).toBe('fail');
      expect(later?.evidence.contradictions).toEqual([
        expect.objectContaining({ kind: 'validation-unknown' }),
        expect.objectContaining({ kind: 'observed-generation' }),
      ]);
      expect(later?.materialHash).not.toBe(first?.materialHash);
    });

    it('changes the material hash when the contradiction is about another image', () => {
      // Prepare
      const withAmi = (id: string) =>
        aNodeClassObject({ status: { conditions: conditions(), amis: [{ id }] } });
      const facts = amiFacts([image('ami-old', 'deregistered'), image('ami-new', 'failed')]);

      // Act
      const [first] = evaluate(withAmi('ami-old'), facts);
      const [later] = evaluate(withAmi('ami-new'), facts);

      // Assess
      expect(first?.evidence.contradictions).toEqual([
        expect.objectContaining({ kind: 'ami-state', subject: 'ami-old' }),
      ]);
      expect(later?.materialHash).not.toBe(first?.materialHash);
    });
  });

  it('is not applicable to a NodeClass without status', () => {
    const [finding] = evaluate(aNodeClassObject());
    expect(finding?.status).toBe('not-applicable');
  });

  it('is not run without cluster state', () => {
    // Prepare
    const inventory = anInventory([aNodeClassObject({ status: { conditions: conditions() } })]);

    // Act
    const evaluation = runChecks(inventory, [statusAgreesWithScan], { now });

    // Assess
    expect(evaluation.findings).toEqual([]);
    expect(evaluation.notRun).toEqual([
      { checkId: 'status-agrees-with-scan', missingInputs: ['cluster'] },
    ]);
  });
});
