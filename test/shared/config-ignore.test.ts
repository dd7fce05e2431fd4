import { describe, expect, it } from 'vitest';
import { CHECKS } from '../../lambda/core/checks/index.js';
import { loadConfig } from '../../lambda/shared/config.js';
import { ConfigError } from '../../lambda/shared/errors.js';

const ENV = {
  STATE_TABLE_NAME: 'state',
  FINDINGS_TOPIC_ARN: 'arn:aws:sns:eu-west-1:111122223333:findings',
  AWS_REGION: 'eu-west-1',
};
const CHECK_IDS = CHECKS.map((check) => check.id);
const RULE = {
  check: 'node-role-policies',
  resource: 'prod/EC2NodeClass/legacy-*',
  reason: 'the VPC CNI has its own role',
  expires: '2027-01-31',
};

describe('loadConfig: IGNORE_RULES', () => {
  it('parses the JSON rules of a scanning function, frozen', () => {
    const config = loadConfig({ ...ENV, IGNORE_RULES: JSON.stringify([RULE]) }, 'scan-cluster', {
      checkIds: CHECK_IDS,
    });
    expect(config.ignore).toEqual([RULE]);
    expect(Object.isFrozen(config.ignore)).toBe(true);
  });

  it('has no rules when the variable is unset or empty', () => {
    expect(loadConfig(ENV, 'ami-event').ignore).toEqual([]);
    expect(loadConfig({ ...ENV, IGNORE_RULES: '' }, 'iam-event').ignore).toEqual([]);
  });

  it('names the rule and field of an invalid rule, and an unknown check id given the catalog', () => {
    // Prepare
    const env = {
      ...ENV,
      IGNORE_RULES: JSON.stringify([
        { ...RULE, check: 'node-role-policy' },
        { ...RULE, reason: '' },
      ]),
    };
    // Act
    const attempt = () => loadConfig(env, 'scan-cluster', { checkIds: CHECK_IDS });
    // Assess
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/IGNORE_RULES\[0\]\.check: unknown check id "node-role-policy"/);
    expect(attempt).toThrow(/IGNORE_RULES\[1\]\.reason: required/);
  });

  it('rejects text that is not JSON', () => {
    expect(() => loadConfig({ ...ENV, IGNORE_RULES: '[{' }, 'scan-cluster')).toThrow(
      /IGNORE_RULES: must be a JSON array of ignore rules/
    );
  });

  it('is not read by the dispatch function', () => {
    const config = loadConfig(
      {
        SCAN_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/111122223333/scans',
        CLUSTERS: 'prod',
        AWS_REGION: 'eu-west-1',
        IGNORE_RULES: 'not json',
      },
      'dispatch'
    );
    expect(config.ignore).toEqual([]);
  });
});
