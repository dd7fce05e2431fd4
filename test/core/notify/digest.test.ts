import { describe, expect, it } from 'vitest';
import { diffFindings } from '../../../lambda/core/lifecycle.js';
import type { ChatbotNotification } from '../../../lambda/core/notify/chatbot.js';
import { type DigestBody, renderDigest } from '../../../lambda/core/notify/digest.js';
import { structuredMessageBytes } from '../../../lambda/core/notify/message.js';
import { aFinding, aStoredState } from '../../support/findings.js';

const NOW = new Date('2026-11-01T00:00:00Z');
const OPEN = { critical: 1, high: 2, medium: 0, low: 0, info: 0 };

describe('renderDigest', () => {
  it('summarises the changes of one scan with counts, open findings and attributes', () => {
    // Prepare
    const gone = aStoredState(
      aFinding({ id: 'gone', severity: 'medium' }),
      '2026-10-01T00:00:00.000Z'
    );
    const { changes } = diffFindings({
      stored: [gone],
      findings: [aFinding({ id: 'a', severity: 'high' })],
      scope: { clusters: ['prod'] },
      now: NOW,
    });
    // Act
    const message = renderDigest({
      scanId: 'scan-1',
      trigger: 'schedule',
      scannedAt: NOW.toISOString(),
      clusters: ['prod'],
      failedClusters: [],
      nodeClassesScanned: 3,
      changes,
      openBySeverity: OPEN,
    });
    const body = JSON.parse(message.bodies.default) as DigestBody;
    // Assess
    expect(message.attributes).toEqual({ change: 'digest', severity: 'high', cluster: 'prod' });
    expect(body.counts).toEqual({ new: 1, changed: 0, resolved: 1, suppressed: 0, reminder: 0 });
    expect(body.changes.map((c) => `${c.change}:${c.findingId}`)).toEqual([
      'new:a',
      'resolved:gone',
    ]);
    expect(body.openBySeverity).toEqual(OPEN);
    expect(body.text).toContain('Open findings: 1 critical, 2 high, 0 medium, 0 low, 0 info');
    const chatbot = JSON.parse(message.bodies.https) as ChatbotNotification;
    expect(chatbot).toMatchObject({
      version: '1.0',
      source: 'custom',
      metadata: { eventType: 'digest' },
    });
    expect(message.id).toBe('digest-scan-1');
  });

  it('lists at most 50 changes and says how many were left out, within the size limit', () => {
    const findings = Array.from({ length: 120 }, (_, i) =>
      aFinding({ id: `f${i}`, message: `${'m'.repeat(2_000)}` })
    );
    const { changes } = diffFindings({
      stored: [],
      findings,
      scope: { clusters: ['prod'] },
      now: NOW,
    });
    const message = renderDigest({
      scanId: 'scan:2/x',
      trigger: 'schedule',
      scannedAt: NOW.toISOString(),
      clusters: ['prod', 'staging'],
      failedClusters: ['staging'],
      nodeClassesScanned: 120,
      changes,
      openBySeverity: OPEN,
    });
    const body = JSON.parse(message.bodies.default) as DigestBody;
    expect(body.changes).toHaveLength(50);
    expect(body.omitted).toBe(70);
    expect(body.text).toContain('Clusters that could not be scanned: staging');
    expect(message.attributes.cluster).toBeUndefined();
    expect(message.id).toBe('digest-scan_2_x');
    expect(structuredMessageBytes(message.bodies)).toBeLessThan(240 * 1024);
  });

  it('names the account and each cluster with its region', () => {
    const message = renderDigest({
      scanId: 'scan-3',
      trigger: 'schedule',
      scannedAt: NOW.toISOString(),
      clusters: ['prod'],
      account: '111122223333',
      regions: { prod: 'eu-west-1' },
      failedClusters: [],
      nodeClassesScanned: 1,
      changes: [],
      openBySeverity: OPEN,
    });
    const body = JSON.parse(message.bodies.default) as DigestBody;
    expect(body).toMatchObject({ account: '111122223333', regions: { prod: 'eu-west-1' } });
    expect(body.text).toContain('Where: account 111122223333, clusters prod (eu-west-1)');
    expect(JSON.parse(message.bodies.https).content.description).toContain(
      'Where: account 111122223333, clusters prod (eu-west-1)'
    );
    expect(message.subject).toBe(
      '[nodeclass-scanner] Scan digest for prod in 111122223333 eu-west-1: no changes'
    );
    expect(message.attributes).toMatchObject({ account: '111122223333', region: 'eu-west-1' });
  });

  it('tells same-named clusters of two regions apart by their labels', () => {
    // Prepare: one change of the home region's prod, one of the prod in us-west-2
    const [change] = diffFindings({
      stored: [],
      findings: [aFinding({ id: 'a', severity: 'high' })],
      scope: { clusters: ['prod'] },
      now: NOW,
    }).changes;
    if (!change) throw new Error('expected a change');
    // Act
    const both = renderDigest({
      scanId: 'scan-4',
      trigger: 'iam-AttachRolePolicy',
      scannedAt: NOW.toISOString(),
      clusters: ['prod', 'prod@us-west-2'],
      account: '111122223333',
      regions: { prod: 'eu-west-1', 'prod@us-west-2': 'us-west-2' },
      failedClusters: [],
      nodeClassesScanned: 2,
      changes: [change, { ...change, clusterLabel: 'prod@us-west-2' }],
      openBySeverity: OPEN,
    });
    const west = renderDigest({
      scanId: 'scan-5',
      trigger: 'schedule',
      scannedAt: NOW.toISOString(),
      clusters: ['prod@us-west-2'],
      account: '111122223333',
      regions: { 'prod@us-west-2': 'us-west-2' },
      failedClusters: [],
      nodeClassesScanned: 1,
      changes: [{ ...change, clusterLabel: 'prod@us-west-2' }],
      openBySeverity: OPEN,
    });
    // Assess
    const body = JSON.parse(both.bodies.default) as DigestBody;
    expect(body.changes.map((item) => item.resource)).toEqual([
      'prod/EC2NodeClass/default',
      'prod@us-west-2/EC2NodeClass/default',
    ]);
    expect(body.text).toContain('clusters prod (eu-west-1), prod@us-west-2');
    // One cluster: its attributes are its name and its region.
    expect(west.attributes).toMatchObject({ cluster: 'prod', region: 'us-west-2' });
    expect(west.subject).toContain('Scan digest for prod@us-west-2 in 111122223333 us-west-2');
  });
});
