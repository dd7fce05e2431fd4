import { describe, expect, it } from 'vitest';
import { diffFindings, type LifecycleChange } from '../../../lambda/core/lifecycle.js';
import type { Finding } from '../../../lambda/core/model.js';
import type { ChatbotNotification } from '../../../lambda/core/notify/chatbot.js';
import { structuredMessageBytes } from '../../../lambda/core/notify/message.js';
import {
  renderSummary,
  type SummaryBody,
  summaryMessageId,
} from '../../../lambda/core/notify/summary.js';
import { aFinding, aStoredState } from '../../support/findings.js';

const NOW = new Date('2026-11-01T00:00:00Z');
const LOCATION = { account: '111122223333', region: 'eu-west-1' };
const POLICY = {
  Version: '2012-10-17',
  Statement: [
    {
      Effect: 'Allow',
      Action: ['iam:PassRole'],
      Resource: ['arn:aws:iam::111122223333:role/KarpenterNodeRole-prod'],
      Condition: { StringEquals: { 'iam:PassedToService': ['ec2.amazonaws.com'] } },
    },
  ],
};

function changesOf(findings: readonly Finding[], stored = [] as ReturnType<typeof aStoredState>[]) {
  return diffFindings({ stored, findings, scope: { clusters: ['prod'] }, now: NOW }).changes;
}

function codeBlocks(text: string): string[] {
  return [...text.matchAll(/```\n([\s\S]*?)\n```/g)].map((match) => match[1] ?? '');
}

/** A root failure, its follow-on, an IAM denial with a policy to paste, and three more. */
function firstScanFindings(): Finding[] {
  const root = aFinding({ id: 'root', checkId: 'ami-selector-resolves' });
  return [
    root,
    aFinding({
      id: 'follow',
      checkId: 'controller-can-launch',
      status: 'error',
      message: 'Launching nodes could not be verified: the class resolved no image.',
      causedBy: root.id,
    }),
    aFinding({
      id: 'denied',
      checkId: 'controller-can-pass-node-role',
      severity: 'high',
      remediation: `Add to the Karpenter controller role's policy: ${JSON.stringify(POLICY)}`,
      evidence: { remediationPolicy: POLICY },
    }),
    ...['a', 'b', 'c'].map((name) =>
      aFinding({ id: `imds-${name}`, checkId: 'imds-v2-required', severity: 'medium' })
    ),
  ];
}

describe('renderSummary', () => {
  it('names a cluster outside the home region name@region, in its title, subject and id', () => {
    // Prepare: the same first findings of a prod in the home region and of one in us-west-2
    const changes = changesOf(firstScanFindings());
    const home = { ...LOCATION, homeRegion: LOCATION.region };
    const render = (region: string) =>
      renderSummary({
        cluster: 'prod',
        scanSeq: 1,
        location: { ...home, region },
        changes,
        firstScan: true,
      });
    // Act
    const atHome = render(LOCATION.region);
    const elsewhere = render('us-west-2');
    // Assess
    expect(atHome.id).toBe(summaryMessageId('prod', 1));
    expect(elsewhere.id).toBe(summaryMessageId('prod@us-west-2', 1));
    expect(elsewhere.id).not.toBe(atHome.id);
    expect(atHome.subject).toContain('First findings on prod in ');
    expect(elsewhere.subject).toContain('First findings on prod@us-west-2 in ');
    expect(elsewhere.bodies.email).toContain('on prod@us-west-2/EC2NodeClass/');
    expect(elsewhere.attributes).toMatchObject({ cluster: 'prod', region: 'us-west-2' });
    expect(JSON.parse(elsewhere.bodies.default)).toMatchObject({
      cluster: 'prod',
      region: 'us-west-2',
    });
  });

  it('lists every change of a first scan in one message naming account, region and cluster', () => {
    // Prepare
    const changes = changesOf(firstScanFindings());
    // Act
    const message = renderSummary({
      cluster: 'prod',
      scanSeq: 3,
      location: LOCATION,
      changes,
      firstScan: true,
    });
    const body = JSON.parse(message.bodies.default) as SummaryBody;
    const chatbot = JSON.parse(message.bodies.https) as ChatbotNotification;
    // Assess
    expect(message.id).toBe(summaryMessageId('prod', 3));
    expect(message.covers).toEqual(changes.map((change) => `new:${change.next.id}`));
    expect(message.attributes).toEqual({
      change: 'summary',
      severity: 'critical',
      cluster: 'prod',
      account: '111122223333',
      region: 'eu-west-1',
    });
    expect(message.subject).toBe(
      '[nodeclass-scanner] First findings on prod in 111122223333 eu-west-1: 1 critical, 1 high, 3 medium'
    );
    expect(body).toMatchObject({
      change: 'summary',
      cluster: 'prod',
      account: '111122223333',
      region: 'eu-west-1',
      firstScan: true,
      counts: { new: 5, changed: 0, resolved: 0, suppressed: 0, reminder: 0 },
      omitted: 0,
    });
    expect(body.changes.map((item) => item.findingId)).toEqual([
      'root',
      'denied',
      'imds-a',
      'imds-b',
      'imds-c',
    ]);
    expect(message.bodies.email).toBe(body.text);
    expect(body.text).toContain('Where: cluster prod, account 111122223333, region eu-west-1');
    expect(chatbot.content.description).toContain(
      'Where: cluster prod, account 111122223333, region eu-west-1'
    );
  });

  it('shows a follow-on under its root, not as a change of its own', () => {
    const changes = changesOf(firstScanFindings());
    const message = renderSummary({
      cluster: 'prod',
      scanSeq: 1,
      location: LOCATION,
      changes,
      firstScan: true,
    });
    const body = JSON.parse(message.bodies.default) as SummaryBody;
    expect(body.changes.find((item) => item.findingId === 'root')?.followOns).toEqual([
      expect.objectContaining({ id: 'follow', checkId: 'controller-can-launch', status: 'error' }),
    ]);
    expect(body.changes.map((item) => item.findingId)).not.toContain('follow');
    const lines = body.text.split('\n');
    const rootAt = lines.findIndex((line) => line.includes('ami-selector-resolves on prod'));
    expect(lines.slice(rootAt, rootAt + 5).join('\n')).toContain(
      'Caused by this (not alerted on their own):\n- controller-can-launch (error)'
    );
    expect(JSON.parse(message.bodies.https).content.description).toContain(
      'ami-selector-resolves on prod/EC2NodeClass/default (+1 follow-on)'
    );
  });

  it('keeps the IAM statement of a listed change valid JSON in the email', () => {
    const message = renderSummary({
      cluster: 'prod',
      scanSeq: 1,
      location: LOCATION,
      changes: changesOf(firstScanFindings()),
      firstScan: true,
    });
    expect(codeBlocks(message.bodies.email).map((code) => JSON.parse(code))).toEqual([POLICY]);
    expect(message.bodies.https).not.toMatch(/［|］/);
  });

  it('counts changes by kind when it batches a later scan', () => {
    // Prepare: two resolved, six new
    const gone = ['x', 'y'].map((id) => aStoredState(aFinding({ id }), '2026-10-01T00:00:00.000Z'));
    const fresh = Array.from({ length: 6 }, (_, i) => aFinding({ id: `n${i}`, severity: 'low' }));
    const changes = changesOf(fresh, gone);
    // Act
    const message = renderSummary({
      cluster: 'prod',
      scanSeq: 9,
      location: LOCATION,
      changes,
      firstScan: false,
    });
    // Assess
    expect(message.subject).toBe(
      '[nodeclass-scanner] 8 changes on prod in 111122223333 eu-west-1: 6 new, 2 resolved'
    );
    expect(message.covers).toHaveLength(8);
    expect(message.covers).toContain('resolved:x');
  });

  it('stays within its byte budget by dropping detail, then listing fewer changes', () => {
    // Prepare
    const many: readonly LifecycleChange[] = changesOf(
      Array.from({ length: 150 }, (_, i) =>
        aFinding({
          id: `f${i}`,
          message: 'm'.repeat(900),
          remediation: `Add: ${JSON.stringify(POLICY)}`,
        })
      )
    );
    // Act
    const message = renderSummary(
      { cluster: 'prod', scanSeq: 1, location: LOCATION, changes: many, firstScan: true },
      64 * 1024
    );
    const body = JSON.parse(message.bodies.default) as SummaryBody;
    // Assess
    expect(structuredMessageBytes(message.bodies)).toBeLessThanOrEqual(64 * 1024);
    expect(body.omitted).toBeGreaterThan(0);
    expect(body.changes.length + body.omitted).toBe(150);
    expect(message.covers).toHaveLength(150);
    expect(body.text).toContain(`… and ${body.omitted} more`);
  });
});

describe('renderSummary: suppressed changes', () => {
  it('counts and lists a suppression with who accepted the finding and why', () => {
    // Prepare: an open finding an annotation now accepts, among other changes of the scan
    const open = aFinding({ id: 'imds', checkId: 'imds-v2-required', severity: 'high' });
    const stored = [aStoredState(open, '2026-10-31T00:00:00.000Z')];
    const changes = changesOf(
      [
        {
          ...open,
          status: 'suppressed',
          suppression: { reason: 'GPU AMI needs IMDSv1', source: 'annotation', status: 'fail' },
        },
        aFinding({ id: 'other' }),
      ],
      stored
    );
    // Act
    const message = renderSummary({
      cluster: 'prod',
      scanSeq: 2,
      location: LOCATION,
      changes,
      firstScan: false,
    });
    const body = JSON.parse(message.bodies.default) as SummaryBody;
    // Assess
    expect(body.counts).toEqual({ new: 1, changed: 0, resolved: 0, suppressed: 1, reminder: 0 });
    expect(body.changes.find((item) => item.findingId === 'imds')).toMatchObject({
      change: 'suppressed',
      status: 'suppressed',
      suppression: { reason: 'GPU AMI needs IMDSv1', source: 'annotation', status: 'fail' },
    });
    expect(body.text).toContain(
      'SUPPRESSED HIGH imds-v2-required on prod/EC2NodeClass/default\nSuppressed by the annotation ignore-check.nodeclass-scanner/imds-v2-required on EC2NodeClass/default: "GPU AMI needs IMDSv1"'
    );
    expect(message.subject).toContain('2 changes on prod');
    expect(message.covers).toEqual(['new:other', 'suppressed:imds']);
  });
});
