import { describe, expect, it } from 'vitest';
import { CHECKS } from '../../lambda/core/checks/index.js';
import { loadConfig } from '../../lambda/shared/config.js';

const ENV = {
  STATE_TABLE_NAME: 'state',
  FINDINGS_TOPIC_ARN: 'arn:aws:sns:eu-west-1:111122223333:findings',
  AWS_REGION: 'eu-west-1',
};
const checkIds = CHECKS.map((check) => check.id);

describe('ANNOTATION_SUPPRESSION', () => {
  it('allows annotations when unset or empty', () => {
    expect(loadConfig(ENV, 'scan-cluster').annotationSuppression).toBe('allow');
    expect(
      loadConfig({ ...ENV, ANNOTATION_SUPPRESSION: '' }, 'ami-event').annotationSuppression
    ).toBe('allow');
  });

  it('reads deny, and a comma-separated list of check ids or globs', () => {
    expect(
      loadConfig({ ...ENV, ANNOTATION_SUPPRESSION: 'deny' }, 'iam-event', { checkIds })
        .annotationSuppression
    ).toBe('deny');
    expect(
      loadConfig({ ...ENV, ANNOTATION_SUPPRESSION: 'imds-*,node-role-policies' }, 'scan-cluster', {
        checkIds,
      }).annotationSuppression
    ).toEqual(['imds-*', 'node-role-policies']);
  });

  it('refuses a malformed value, naming the variable', () => {
    expect(() => loadConfig({ ...ENV, ANNOTATION_SUPPRESSION: 'Deny' }, 'scan-cluster')).toThrow(
      /ANNOTATION_SUPPRESSION: expected allow, deny or check ids/
    );
  });

  it('refuses, given the catalog, a check id that names no check', () => {
    expect(() =>
      loadConfig({ ...ENV, ANNOTATION_SUPPRESSION: 'imds-*,node-role-policy' }, 'scan-cluster', {
        checkIds,
      })
    ).toThrow(/ANNOTATION_SUPPRESSION\[1\]: unknown check id "node-role-policy"/);
  });

  it('is not read by the dispatcher', () => {
    const dispatch = loadConfig(
      {
        SCAN_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/111122223333/scan',
        CLUSTERS: 'prod',
        AWS_REGION: 'eu-west-1',
        ANNOTATION_SUPPRESSION: 'not valid at all',
      },
      'dispatch'
    );
    expect(dispatch.annotationSuppression).toBe('allow');
  });
});
