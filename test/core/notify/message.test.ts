import { describe, expect, it } from 'vitest';
import { diffFindings, type LifecycleChange } from '../../../lambda/core/lifecycle.js';
import type { Finding } from '../../../lambda/core/model.js';
import type { ChatbotNotification } from '../../../lambda/core/notify/chatbot.js';
import {
  type FindingMessageBody,
  MAX_MESSAGE_BYTES,
  renderChangeMessage,
  structuredMessageBytes,
} from '../../../lambda/core/notify/message.js';
import { aFinding, aStoredState } from '../../support/findings.js';

const NOW = new Date('2026-11-01T00:00:00Z');
const HOSTILE = '<!channel> @here \u0000 <@U024BE7LH> *boom* [x](https://evil)';

function newChange(overrides: Parameters<typeof aFinding>[0] = {}): LifecycleChange {
  const finding = aFinding(overrides);
  const scope = { clusters: [finding.resource.cluster] };
  const diff = diffFindings({ stored: [], findings: [finding], scope, now: NOW });
  const change = diff.changes[0];
  if (!change) throw new Error('expected a change');
  return change;
}

/** The contents of the fenced code blocks (```) of a rendered text. */
function codeBlocks(text: string): string[] {
  return [...text.matchAll(/```\n([\s\S]*?)\n```/g)].map((match) => match[1] ?? '');
}

function allStrings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(allStrings);
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).flatMap(([key, item]) => [key, ...allStrings(item)]);
  }
  return [];
}

describe('renderChangeMessage', () => {
  it('renders the JSON body with the finding, a text rendering and routing attributes', () => {
    // Prepare
    const change = newChange({
      evidence: { instanceProfile: 'arn:aws:iam::1:instance-profile/x' },
    });
    // Act
    const message = renderChangeMessage(change);
    const body = JSON.parse(message.bodies.default) as FindingMessageBody;
    // Assess
    expect(message.attributes).toEqual({
      change: 'new',
      severity: 'critical',
      checkId: 'instance-profile-is-name',
      cluster: 'prod',
      status: 'fail',
    });
    expect(body).toMatchObject({
      version: 1,
      change: 'new',
      finding: {
        id: change.next.id,
        checkId: 'instance-profile-is-name',
        severity: 'critical',
        status: 'fail',
        resource: { cluster: 'prod', kind: 'EC2NodeClass', name: 'default' },
        evidence: { instanceProfile: 'arn:aws:iam::1:instance-profile/x' },
      },
      firstSeen: NOW.toISOString(),
      evidenceTruncated: false,
    });
    expect(body.text.split('\n')[0]).toBe(
      'NEW CRITICAL instance-profile-is-name on prod/EC2NodeClass/default'
    );
    expect(message.bodies.email).toBe(body.text);
    expect(message.subject).toBe(
      '[nodeclass-scanner] NEW CRITICAL instance-profile-is-name on prod/EC2NodeClass/default'
    );
    expect(message.id).toMatch(/^[A-Za-z0-9_-]{1,80}$/);
  });

  it('renders a Chatbot custom notification threaded by finding id', () => {
    const change = newChange();
    const chatbot = JSON.parse(renderChangeMessage(change).bodies.https) as ChatbotNotification;
    expect(chatbot).toMatchObject({
      version: '1.0',
      source: 'custom',
      content: {
        textType: 'client-markdown',
        nextSteps: ['Set spec.instanceProfile to the bare name.'],
      },
      metadata: { threadId: change.next.id, eventType: 'new' },
    });
    expect(chatbot.content.title).toContain(
      'NEW CRITICAL instance-profile-is-name on prod/EC2NodeClass/default'
    );
    expect(chatbot.content.description).toContain('spec.instanceProfile is an ARN.');
  });

  it('neutralises a hostile tag value in both message formats', () => {
    // Prepare
    const change = newChange({
      message: `Tag Team=${HOSTILE} is not allowed`,
      remediation: `Remove ${HOSTILE}`,
      resource: { name: 'default' },
      evidence: { tags: { Team: HOSTILE }, [HOSTILE]: 'key too' },
    });
    // Act
    const message = renderChangeMessage(change);
    const strings = [
      ...allStrings(JSON.parse(message.bodies.default)),
      message.bodies.email,
      ...allStrings(JSON.parse(message.bodies.https)),
      message.subject,
      ...Object.values(message.attributes),
    ];
    // Assess
    for (const text of strings) {
      expect(text).not.toContain('<!channel>');
      expect(text).not.toContain('<@U');
      expect(text).not.toMatch(/@here/i);
      expect(text).not.toContain('\u0000');
    }
    const chatbotStrings = allStrings(JSON.parse(message.bodies.https));
    for (const text of chatbotStrings) expect(text).not.toMatch(/\]\(https|\*boom\*/);
    expect(message.bodies.email).toContain('‹!channel› ＠here');
  });

  it('renders resolved for a NodeClass that is gone from its stored state', () => {
    const finding = aFinding();
    const diff = diffFindings({
      stored: [aStoredState(finding, '2026-10-30T00:00:00.000Z')],
      findings: [],
      scope: { clusters: ['prod'] },
      now: NOW,
    });
    const change = diff.changes[0];
    if (!change) throw new Error('expected a change');
    const message = renderChangeMessage(change);
    const body = JSON.parse(message.bodies.default) as FindingMessageBody;
    expect(message.attributes.change).toBe('resolved');
    expect(body.finding).toMatchObject({
      status: 'pass',
      message: 'No longer failing: spec.instanceProfile is an ARN.',
    });
    expect(body.resolvedAt).toBe(NOW.toISOString());
    expect(body.firstSeen).toBe('2026-10-30T00:00:00.000Z');
    expect(JSON.parse(message.bodies.https).content.nextSteps).toEqual([]);
  });

  it('shows the previous severity and message on changed', () => {
    const finding = aFinding();
    const diff = diffFindings({
      stored: [aStoredState(finding, '2026-10-30T00:00:00.000Z')],
      findings: [{ ...finding, severity: 'low', message: 'Now only a warning.' }],
      scope: { clusters: ['prod'] },
      now: NOW,
    });
    const change = diff.changes[0];
    if (!change) throw new Error('expected a change');
    const body = JSON.parse(renderChangeMessage(change).bodies.default) as FindingMessageBody;
    expect(body.previous).toEqual({
      severity: 'critical',
      message: 'spec.instanceProfile is an ARN.',
    });
    expect(body.text).toContain('Before (critical): spec.instanceProfile is an ARN.');
  });

  it('stays under the SNS size limit by truncating evidence, never the headline', () => {
    // Prepare: 2 MB of evidence in many keys and long strings
    const evidence = Object.fromEntries(
      Array.from({ length: 40 }, (_, i) => [
        `k${i}`,
        Array.from({ length: 50 }, () => 'é'.repeat(5_000)),
      ])
    );
    const change = newChange({ evidence, message: 'm'.repeat(20_000) });
    // Act
    const message = renderChangeMessage(change);
    const body = JSON.parse(message.bodies.default) as FindingMessageBody;
    // Assess
    expect(structuredMessageBytes(message.bodies)).toBeLessThanOrEqual(MAX_MESSAGE_BYTES);
    expect(body.evidenceTruncated).toBe(true);
    expect(body.text.split('\n')[0]).toBe(
      'NEW CRITICAL instance-profile-is-name on prod/EC2NodeClass/default'
    );
    expect(body.finding.message.length).toBeLessThanOrEqual(4_000);
  });

  it('shrinks evidence further when given a small byte budget', () => {
    const change = newChange({ evidence: { blob: 'x'.repeat(900), more: 'y'.repeat(900) } });
    const message = renderChangeMessage(change, { maxBytes: 6_000 });
    expect(structuredMessageBytes(message.bodies)).toBeLessThanOrEqual(6_000);
    expect((JSON.parse(message.bodies.default) as FindingMessageBody).evidenceTruncated).toBe(true);
  });

  it('names the account, region and cluster in every body, the subject and the attributes', () => {
    // Act
    const change = newChange({
      checkId: 'imds-v2-required',
      severity: 'high',
      resource: { name: 'gpu' },
    });
    const message = renderChangeMessage(change, {
      location: { account: '111122223333', region: 'eu-west-1' },
    });
    const body = JSON.parse(message.bodies.default) as FindingMessageBody;
    const chatbot = JSON.parse(message.bodies.https) as ChatbotNotification;
    // Assess
    const where = 'cluster prod, account 111122223333, region eu-west-1';
    expect(body).toMatchObject({ account: '111122223333', region: 'eu-west-1' });
    expect(body.finding.resource.cluster).toBe('prod');
    expect(message.bodies.email.split('\n')[1]).toBe(`Where: ${where}`);
    expect(chatbot.content.description).toContain(`Where: ${where}`);
    expect(message.attributes).toMatchObject({ account: '111122223333', region: 'eu-west-1' });
    expect(message.subject).toBe(
      '[nodeclass-scanner] NEW HIGH imds-v2-required on prod/EC2NodeClass/gpu in 111122223333 eu-west-1'
    );
  });

  it('shows a cluster outside the home region as name@region, and threads it apart', () => {
    // Prepare: one finding of `prod`, in the home region and in another
    const change = newChange();
    const home = { account: '111122223333', region: 'eu-west-1', homeRegion: 'eu-west-1' };
    const west = { ...home, region: 'us-west-2' };
    // Act
    const atHome = renderChangeMessage(change, { location: home });
    const elsewhere = renderChangeMessage(change, { location: west });
    // Assess: what people read names the region; the routing keys stay the name and the region
    expect(atHome.subject).toContain('on prod/EC2NodeClass/default');
    expect(elsewhere.subject).toContain('on prod@us-west-2/EC2NodeClass/default');
    expect(elsewhere.bodies.email.split('\n')[0]).toContain('prod@us-west-2/EC2NodeClass/default');
    expect(elsewhere.attributes).toMatchObject({ cluster: 'prod', region: 'us-west-2' });
    const body = JSON.parse(elsewhere.bodies.default) as FindingMessageBody;
    expect(body).toMatchObject({ region: 'us-west-2', finding: { resource: { cluster: 'prod' } } });
    const threads = [atHome, elsewhere].map(
      (message) => (JSON.parse(message.bodies.https) as ChatbotNotification).metadata?.threadId
    );
    expect(threads).toEqual([
      `111122223333/eu-west-1/${change.next.id}`,
      `111122223333/us-west-2/${change.next.id}`,
    ]);
  });

  it('shortens a long subject by dropping the location, then the check id, then at a word boundary', () => {
    // Prepare
    const checkId = 'controller-can-manage-instance-profile';
    const location = { account: '111122223333', region: 'ap-southeast-2' };
    const subjectOf = (name: string) =>
      renderChangeMessage(newChange({ checkId, resource: { name } }), { location }).subject;
    // Act
    const headlineOnly = subjectOf('gpu');
    const resourceOnly = subjectOf('team-payments-batch-workers-spot-arm64');
    const cut = subjectOf(`team-payments-batch-workers-${'spot-arm64-'.repeat(8)}`);
    // Assess
    expect(headlineOnly).toBe(
      `[nodeclass-scanner] NEW CRITICAL ${checkId} on prod/EC2NodeClass/gpu`
    );
    expect(resourceOnly).toBe(
      '[nodeclass-scanner] NEW CRITICAL prod/EC2NodeClass/team-payments-batch-workers-spot-arm64'
    );
    expect(cut).toBe(`[nodeclass-scanner] NEW CRITICAL ${checkId} on prod/EC2NodeClass/...`);
    for (const subject of [headlineOnly, resourceOnly, cut]) {
      expect(subject.length).toBeLessThan(100);
      expect(subject).toMatch(/^[\x20-\x7e]+$/);
    }
  });

  it('keeps an IAM statement in the remediation valid JSON in email and in Slack (code blocks)', () => {
    // Prepare: a controller-can-* remediation with a condition, as permission-check writes it
    const policy = {
      Version: '2012-10-17',
      Statement: [
        {
          Sid: 'AllowScopedResourceCreationTagging',
          Effect: 'Allow',
          Action: ['ec2:CreateTags'],
          Resource: ['arn:aws:ec2:eu-west-1:*:instance/*', 'arn:aws:ec2:eu-west-1:*:volume/*'],
          Condition: {
            StringEquals: {
              'aws:RequestTag/kubernetes.io/cluster/prod': 'owned',
              'ec2:CreateAction': ['RunInstances', 'CreateFleet'],
            },
            StringLike: { 'aws:RequestTag/karpenter.sh/nodepool': '*' },
          },
        },
      ],
    };
    const finding: Partial<Finding> = {
      checkId: 'controller-can-launch',
      remediation: `Add to the Karpenter controller role's policy: ${JSON.stringify(policy)} Then re-run the scan.`,
      evidence: { denials: [{ action: 'ec2:CreateTags' }], remediationPolicy: policy },
    };
    // Act
    const message = renderChangeMessage(newChange(finding));
    const chatbot = JSON.parse(message.bodies.https) as ChatbotNotification;
    const body = JSON.parse(message.bodies.default) as FindingMessageBody;
    // Assess
    expect(codeBlocks(message.bodies.email).map((code) => JSON.parse(code))).toEqual([policy]);
    expect(codeBlocks(chatbot.content.description).map((code) => JSON.parse(code))).toEqual([
      policy,
    ]);
    expect(chatbot.content.nextSteps).toEqual([
      "Add to the Karpenter controller role's policy:",
      'Then re-run the scan.',
    ]);
    expect(body.finding.evidence).toEqual(finding.evidence);
    for (const text of [message.bodies.default, message.bodies.email, message.bodies.https]) {
      expect(text).not.toContain('nested too deep');
      expect(text).not.toMatch(/［|］|∗/);
    }
  });

  it('never cuts a long remediation inside its JSON', () => {
    const policy = {
      Version: '2012-10-17',
      Statement: Array.from({ length: 12 }, (_, i) => ({
        Sid: `Statement${i}`,
        Effect: 'Allow',
        Action: ['ec2:RunInstances', 'ec2:CreateFleet', 'ec2:CreateLaunchTemplate'],
        Resource: [`arn:aws:ec2:eu-west-1:*:launch-template/${'x'.repeat(40)}-${i}`],
        Condition: { StringEquals: { 'aws:RequestTag/karpenter.sh/nodepool': `pool-${i}` } },
      })),
    };
    const remediation = `Add: ${JSON.stringify(policy)}`;
    expect(remediation.length).toBeGreaterThan(2_000);
    const message = renderChangeMessage(newChange({ remediation }));
    const body = JSON.parse(message.bodies.default) as FindingMessageBody;
    expect(codeBlocks(message.bodies.email).map((code) => JSON.parse(code))).toEqual([policy]);
    expect(JSON.parse(body.finding.remediation.slice('Add: '.length))).toEqual(policy);
    // Slack has room for it only compact, or not at all: never a cut statement.
    const description = (JSON.parse(message.bodies.https) as ChatbotNotification).content
      .description;
    for (const code of codeBlocks(description)) expect(JSON.parse(code)).toEqual(policy);
  });

  it('keeps an IAM policy in the evidence whole when the rest of the evidence is cut', () => {
    const policy = {
      Version: '2012-10-17',
      Statement: [
        {
          Effect: 'Allow',
          Action: ['iam:PassRole'],
          Resource: ['arn:aws:iam::111122223333:role/KarpenterNodeRole'],
          Condition: { StringEquals: { 'iam:PassedToService': ['ec2.amazonaws.com'] } },
        },
      ],
    };
    const change = newChange({
      evidence: { blob: 'x'.repeat(900), more: 'y'.repeat(900), remediationPolicy: policy },
    });
    const body = JSON.parse(
      renderChangeMessage(change, { maxBytes: 8_000 }).bodies.default
    ) as FindingMessageBody;
    expect(body.evidenceTruncated).toBe(true);
    expect((body.finding.evidence as { remediationPolicy: unknown }).remediationPolicy).toEqual(
      policy
    );
  });

  it('shows follow-on findings under their root and never as their own headline', () => {
    // Prepare
    const root = aFinding({ checkId: 'ami-selector-resolves' });
    const followOn = aFinding({
      checkId: 'controller-can-launch',
      status: 'error',
      message: 'Launching nodes could not be verified: the class resolved no image.',
      causedBy: root.id,
    });
    const diff = diffFindings({
      stored: [],
      findings: [root, followOn],
      scope: { clusters: ['prod'] },
      now: NOW,
    });
    const change = diff.changes[0];
    if (!change) throw new Error('expected a change');
    // Act
    const message = renderChangeMessage(change);
    const body = JSON.parse(message.bodies.default) as FindingMessageBody;
    // Assess
    expect(diff.changes).toHaveLength(1);
    expect(body.followOns).toEqual([
      {
        id: followOn.id,
        checkId: 'controller-can-launch',
        severity: 'critical',
        status: 'error',
        message: followOn.message,
      },
    ]);
    expect(message.bodies.email).toContain(
      'Caused by this (not alerted on their own):\n- controller-can-launch (error): Launching nodes could not be verified'
    );
    expect(JSON.parse(message.bodies.https).content.description).toContain(
      '- controller-can-launch (error)'
    );
  });

  it('omits the cluster attribute when the cluster is empty (SNS rejects empty values)', () => {
    const message = renderChangeMessage(newChange({ resource: { cluster: '' } }));
    expect(message.attributes.cluster).toBeUndefined();
  });
});

describe('renderChangeMessage: a suppressed change', () => {
  /** The change of an open finding that an annotation (or a rule) now suppresses. */
  function suppressedChange(suppression: NonNullable<Finding['suppression']>): LifecycleChange {
    const failing = aFinding({ severity: 'high', message: 'IMDSv1 is allowed.' });
    const stored = [aStoredState(failing, '2026-10-31T00:00:00.000Z')];
    const suppressed: Finding = { ...failing, status: 'suppressed', suppression };
    const diff = diffFindings({
      stored,
      findings: [suppressed],
      scope: { clusters: ['prod'] },
      now: NOW,
    });
    const change = diff.changes[0];
    if (change?.kind !== 'suppressed') throw new Error('expected a suppressed change');
    return change;
  }

  it('says who suppressed it, why and until when, with change=suppressed for subscription filters', () => {
    // Prepare
    const change = suppressedChange({
      reason: `the GPU AMI needs IMDSv1 ${HOSTILE}`,
      source: 'annotation',
      status: 'fail',
      expires: '2026-12-31',
    });
    // Act
    const message = renderChangeMessage(change, {
      location: { account: '111122223333', region: 'eu-west-1' },
    });
    const body = JSON.parse(message.bodies.default) as FindingMessageBody;
    const chatbot = JSON.parse(message.bodies.https) as ChatbotNotification;
    // Assess
    expect(message.attributes).toEqual({
      change: 'suppressed',
      severity: 'high',
      checkId: 'instance-profile-is-name',
      cluster: 'prod',
      status: 'suppressed',
      suppressedBy: 'annotation',
      account: '111122223333',
      region: 'eu-west-1',
    });
    // Over SNS's 100 characters with the location: the headline alone.
    expect(message.subject).toBe(
      '[nodeclass-scanner] SUPPRESSED HIGH instance-profile-is-name on prod/EC2NodeClass/default'
    );
    expect(body).toMatchObject({
      change: 'suppressed',
      finding: {
        status: 'suppressed',
        suppression: { source: 'annotation', status: 'fail', expires: '2026-12-31' },
      },
    });
    const lines = body.text.split('\n');
    expect(lines[0]).toBe('SUPPRESSED HIGH instance-profile-is-name on prod/EC2NodeClass/default');
    expect(lines.slice(3, 7)).toEqual([
      expect.stringMatching(
        /^Suppressed by the annotation ignore-check\.nodeclass-scanner\/instance-profile-is-name on EC2NodeClass\/default, until 2026-12-31: "the GPU AMI needs IMDSv1 /
      ),
      'It no longer alerts; if it still fails once the suppression is removed or expires, it alerts as new.',
      'Not agreed? Remove the annotation, or refuse annotation suppressions with the annotationSuppression setting.',
      '',
    ]);
    expect(body.text).toContain('What it reported (fail): IMDSv1 is allowed.');
    expect(chatbot.content.title).toBe(
      ':mute: SUPPRESSED HIGH instance-profile-is-name on prod/EC2NodeClass/default'
    );
    expect(chatbot.content.description).toContain('Suppressed by the annotation');
    expect(chatbot.content.nextSteps?.[0]).toContain(
      'Remove the annotation ignore-check.nodeclass-scanner/instance-profile-is-name from prod/EC2NodeClass/default'
    );
    // The reason is the cluster's text: neutralised like every user-controlled field.
    for (const text of [...allStrings(body), ...allStrings(chatbot)]) {
      expect(text).not.toContain('<!channel>');
      expect(text).not.toContain('@here');
    }
  });

  it('names an ignore rule as the source, without the annotation advice', () => {
    const message = renderChangeMessage(
      suppressedChange({ reason: 'legacy, retired in Q1', source: 'config', status: 'error' })
    );
    expect(message.attributes.suppressedBy).toBe('config');
    expect(message.bodies.email).toContain(
      'Suppressed by an ignore rule of the configuration: "legacy, retired in Q1"'
    );
    expect(message.bodies.email).toContain('What it reported (error): IMDSv1 is allowed.');
    expect(message.bodies.email).not.toContain('Not agreed?');
  });
});
