import { describe, expect, it } from 'vitest';
import { diffFindings, type LifecycleChange } from '../../../lambda/core/lifecycle.js';
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

  it('omits the cluster attribute when the cluster is empty (SNS rejects empty values)', () => {
    const message = renderChangeMessage(newChange({ resource: { cluster: '' } }));
    expect(message.attributes.cluster).toBeUndefined();
  });
});
