import { describe, expect, it } from 'vitest';
import { CONFIG_KEYS, parseScannerConfig } from '../../infra/config.js';
import { severitiesAtOrAbove } from '../../infra/constructs/alerts.js';
import { CDK_JSON_CONTEXT } from './support.js';

describe('scanner configuration (cdk.json context)', () => {
  it('parses the shipped cdk.json context and fills the defaults', () => {
    // Act
    const config = parseScannerConfig({ homeRegion: 'eu-west-1', clusters: ['prod'] });

    // Assess
    expect(parseScannerConfig(CDK_JSON_CONTEXT).homeRegion).toBe('eu-west-1');
    expect(config).toMatchObject({
      scheduleMinutes: 15,
      alertEmails: [],
      alertMinSeverity: 'high',
      reminderHours: 24,
      resolvedTtlDays: 30,
      alertBatchThreshold: 5,
      logRetentionDays: 30,
      scanConcurrency: 4,
      accessEntries: false,
      eksAdminViewPolicy: false,
      iamEvents: true,
      amiEvents: true,
    });
    expect(config.dryRunRoleArn).toBeUndefined();
    expect(config.reservedScanConcurrency).toBeUndefined();
  });

  it('sets every key the schema knows in cdk.json, so the shipped file documents them', () => {
    // Prepare
    const optionalWithoutDefault = [
      'slackWorkspaceId',
      'slackChannelId',
      'dryRunRoleArn',
      'iamBudgetTableArn',
      'reservedScanConcurrency',
      'vpcId',
      'subnetIds',
    ];

    // Assess
    expect(CONFIG_KEYS.filter((key) => !(key in CDK_JSON_CONTEXT)).sort()).toEqual(
      optionalWithoutDefault.sort()
    );
  });

  it('accepts -c key=value strings: comma lists, numbers and booleans', () => {
    // Act
    const config = parseScannerConfig({
      homeRegion: 'eu-west-1',
      clusters: 'prod, staging@us-west-2',
      alertEmails: 'a@example.com,b@example.com',
      scheduleMinutes: '30',
      accessEntries: 'false',
      subnetIds: '["subnet-0123abcd"]',
      vpcId: 'vpc-0123abcd',
    });

    // Assess
    expect(config.clusters).toEqual(['prod', 'staging@us-west-2']);
    expect(config.alertEmails).toEqual(['a@example.com', 'b@example.com']);
    expect(config.scheduleMinutes).toBe(30);
    expect(config.accessEntries).toBe(false);
    expect(config.subnetIds).toEqual(['subnet-0123abcd']);
  });

  it.each([
    [{ scheduleMinutes: 'often' }, 'scheduleMinutes'],
    [{ scheduleMinutes: 0 }, 'scheduleMinutes'],
    [{ alertMinSeverity: 'urgent' }, 'alertMinSeverity'],
    [{ alertEmails: ['not-an-address'] }, 'alertEmails.0'],
    [{ homeRegion: 'Ireland' }, 'homeRegion'],
    [{ clusters: [] }, 'clusters'],
    [{ clusters: ['prod@mars'] }, 'clusters.0'],
    [{ logRetentionDays: 17 }, 'logRetentionDays'],
    [{ scanConcurrency: 1 }, 'scanConcurrency'],
    [{ reservedScanConcurrency: 0 }, 'reservedScanConcurrency'],
    [{ scanConcurrency: 8, reservedScanConcurrency: 4 }, 'reservedScanConcurrency'],
    [{ slackWorkspaceId: 'T0123ABCD' }, 'slackChannelId'],
    [{ vpcId: 'vpc-0123abcd' }, 'subnetIds'],
    [{ dryRunRoleArn: 'arn:aws:iam::111122223333:user/someone' }, 'dryRunRoleArn'],
    [{ accessEntries: true, clusters: ['prod', 'dr@us-west-2'] }, 'accessEntries'],
    [{ eksAdminViewPolicy: true }, 'eksAdminViewPolicy'],
    [{ homeRegion: 'cn-north-1' }, 'iamEvents'],
    [{ clusters: ['prod', 'far@cn-north-1'] }, 'amiEvents'],
    [
      { homeRegion: 'cn-north-1', iamEvents: false, clusters: ['a', 'b@cn-northwest-1'] },
      'amiEvents',
    ],
    [{ stackName: `N${'x'.repeat(110)}`, clusters: ['prod', 'dr@ap-southeast-2'] }, 'stackName'],
    [{ amiEvents: 'maybe' }, 'amiEvents'],
    [{ accessEntries: 'yes' }, 'accessEntries'],
  ])('rejects %j naming the key %s', (override, key) => {
    // Prepare
    const context = { homeRegion: 'eu-west-1', clusters: ['prod'], ...override };

    // Act & Assess
    expect(() => parseScannerConfig(context)).toThrow(`context key "${key}"`);
  });

  it('forwards AMI events in GovCloud, where EventBridge routes between its two regions', () => {
    // Act
    const config = parseScannerConfig({
      homeRegion: 'us-gov-west-1',
      clusters: ['prod', 'dr@us-gov-east-1'],
      iamEvents: false,
    });

    // Assess
    expect(config.amiEvents).toBe(true);
  });

  it('accepts a home-region-only China deployment, and one with amiEvents off', () => {
    expect(() =>
      parseScannerConfig({ homeRegion: 'cn-north-1', clusters: ['prod'], iamEvents: false })
    ).not.toThrow();
    expect(() =>
      parseScannerConfig({
        homeRegion: 'cn-north-1',
        clusters: ['a', 'b@cn-northwest-1'],
        iamEvents: false,
        amiEvents: false,
      })
    ).not.toThrow();
  });

  it('lists every bad key in one error', () => {
    // Act
    const attempt = () =>
      parseScannerConfig({
        homeRegion: 'eu-west-1',
        clusters: ['prod'],
        scheduleMinutes: -1,
        digest: 'daily',
      });

    // Assess
    expect(attempt).toThrow(/"scheduleMinutes"[\s\S]*"digest"|"digest"[\s\S]*"scheduleMinutes"/);
  });

  it('reports a malformed JSON list value as a configuration error', () => {
    expect(() => parseScannerConfig({ homeRegion: 'eu-west-1', clusters: '[prod' })).toThrow(
      /Invalid nodeclass-scanner configuration/
    );
  });

  it.each([
    ['critical', ['critical']],
    ['high', ['critical', 'high']],
    ['info', ['critical', 'high', 'medium', 'low', 'info']],
  ] as const)('emails findings at or above %s', (minimum, expected) => {
    expect(severitiesAtOrAbove(minimum)).toEqual(expected);
  });
});
