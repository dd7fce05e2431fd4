import { describe, expect, it } from 'vitest';
import { CONFIG_ENV_KEYS, HANDLER_ENV_KEYS, loadConfig } from '../../lambda/shared/config.js';
import { parseConfig } from '../../lambda/shared/env-config.js';
import { ConfigError } from '../../lambda/shared/errors.js';

const TOPIC = 'arn:aws:sns:eu-west-1:111122223333:findings';

describe('loadConfig', () => {
  it('parses a scan handler environment into a frozen Config with defaults', () => {
    const config = loadConfig(
      { STATE_TABLE_NAME: 'state', FINDINGS_TOPIC_ARN: TOPIC, AWS_REGION: 'eu-west-1' },
      'scan-cluster'
    );
    expect(config).toEqual({
      region: 'eu-west-1',
      stateTableName: 'state',
      findingsTopicArn: TOPIC,
      account: '111122223333',
      scanQueueUrl: '',
      clusters: [],
      reminderIntervalMs: 24 * 3_600_000,
      resolvedTtlDays: 30,
      simulationCacheHours: 24,
      digest: 'on-change',
      alertBatchThreshold: 5,
      environment: 'production',
      clusterEnvironments: new Map(),
      ignore: [],
      annotationSuppression: 'allow',
      ssmParameterPrefixes: [],
      securityHub: false,
      settings: expect.objectContaining({ alertBatchThreshold: 5, reminderHours: 24 }),
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it("reads each cluster's own scan environment (clusterSettings), by cluster name", () => {
    // Prepare
    const env = { STATE_TABLE_NAME: 'state', FINDINGS_TOPIC_ARN: TOPIC, AWS_REGION: 'eu-west-1' };

    // Act
    const config = loadConfig(
      { ...env, CLUSTER_ENVIRONMENTS: 'dev=non-production, constructor=production' },
      'scan-cluster'
    );

    // Assess: a map, so a cluster named like an Object property is an ordinary key.
    expect([...config.clusterEnvironments]).toEqual([
      ['dev', 'non-production'],
      ['constructor', 'production'],
    ]);
    expect(config.clusterEnvironments.get('prod')).toBeUndefined();
    expect(() =>
      loadConfig({ ...env, CLUSTER_ENVIRONMENTS: 'dev=staging,prod' }, 'iam-event')
    ).toThrow(
      /CLUSTER_ENVIRONMENTS: "dev=staging" is not cluster=production\|non-production; CLUSTER_ENVIRONMENTS: "prod"/
    );
  });

  it('reads the simulation cache hours: 0 disables, a negative or non-number is an error', () => {
    const env = { STATE_TABLE_NAME: 'state', FINDINGS_TOPIC_ARN: TOPIC, AWS_REGION: 'eu-west-1' };
    expect(
      loadConfig({ ...env, SIMULATION_CACHE_HOURS: '0' }, 'iam-event').simulationCacheHours
    ).toBe(0);
    expect(
      loadConfig({ ...env, SIMULATION_CACHE_HOURS: '6' }, 'ami-event').simulationCacheHours
    ).toBe(6);
    expect(() => loadConfig({ ...env, SIMULATION_CACHE_HOURS: '-1' }, 'scan-cluster')).toThrow(
      /SIMULATION_CACHE_HOURS: must be an integer from 0 to 168, got -1/
    );
    expect(() => loadConfig({ ...env, SIMULATION_CACHE_HOURS: 'a day' }, 'scan-cluster')).toThrow(
      ConfigError
    );
  });

  it('keeps __proto__ and constructor as ordinary discovery tag keys', () => {
    const config = loadConfig(
      {
        SCAN_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/111122223333/scan',
        CLUSTERS: '',
        AWS_REGION: 'eu-west-1',
        DISCOVER_CLUSTERS: '__proto__=x,constructor',
      },
      'dispatch'
    );
    const filter = config.discovery?.tagFilter ?? {};
    expect(Object.keys(filter)).toEqual(['__proto__', 'constructor']);
    expect(Object.getOwnPropertyDescriptor(filter, '__proto__')?.value).toBe('x');
  });

  it('parses the dispatcher cluster list with optional regions and overrides', () => {
    const config = loadConfig(
      {
        SCAN_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/111122223333/scan',
        CLUSTERS: ' prod, staging@us-east-2 ,',
        AWS_REGION: 'eu-west-1',
        REMINDER_INTERVAL_HOURS: '6',
        DIGEST: 'never',
        ALERT_BATCH_THRESHOLD: '12',
      },
      'dispatch'
    );
    expect(config.clusters).toEqual([
      { name: 'prod', region: 'eu-west-1' },
      { name: 'staging', region: 'us-east-2' },
    ]);
    expect(config.reminderIntervalMs).toBe(6 * 3_600_000);
    expect(config.digest).toBe('never');
    expect(config.alertBatchThreshold).toBe(12);
  });

  it('lists every missing or invalid variable in one ConfigError', () => {
    const attempt = () =>
      loadConfig(
        {
          FINDINGS_TOPIC_ARN: 'not-an-arn',
          AWS_REGION: 'eu-west-1',
          REMINDER_INTERVAL_HOURS: '-1',
          DIGEST: 'daily',
          ALERT_BATCH_THRESHOLD: '2.5',
        },
        'iam-event'
      );
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/STATE_TABLE_NAME: missing/);
    expect(attempt).toThrow(/FINDINGS_TOPIC_ARN: must be an SNS topic ARN/);
    expect(attempt).toThrow(/REMINDER_INTERVAL_HOURS: must be an integer from 1 to 720, got -1/);
    expect(attempt).toThrow(/DIGEST: must be one of on-change, always, never, got "daily"/);
    expect(attempt).toThrow(/ALERT_BATCH_THRESHOLD: must be an integer from 1 to 1000, got "2.5"/);
  });

  it('declares, for each handler, keys that exist in the schema', () => {
    for (const keys of Object.values(HANDLER_ENV_KEYS)) {
      for (const key of keys) expect(CONFIG_ENV_KEYS).toContain(key);
    }
  });

  it('parses the dispatch environment without the ignore-rules parser, naming each bad entry', () => {
    const attempt = () =>
      parseConfig(
        {
          SCAN_QUEUE_URL: 'http://sqs.eu-west-1.amazonaws.com/111122223333/scan',
          CLUSTERS: 'prod, bad name,staging@nowhere',
          AWS_REGION: 'eu-west-1',
          DISCOVERY_REGIONS: 'eu-west-1,EU',
          DISCOVER_CLUSTERS: 'team=a,=b',
          SCAN_ENVIRONMENT: 'prod',
        },
        'dispatch'
      );
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/SCAN_QUEUE_URL: must be an https URL/);
    expect(attempt).toThrow(/CLUSTERS\[1\]: "bad name" is not an EKS cluster name/);
    expect(attempt).toThrow(/CLUSTERS\[2\]: "nowhere" is not an AWS region name/);
    expect(attempt).toThrow(/DISCOVERY_REGIONS\[1\]: "EU" is not an AWS region name/);
    expect(attempt).toThrow(/DISCOVER_CLUSTERS: "team=a,=b" is not \*, or tag filters/);
    expect(attempt).toThrow(/SCAN_ENVIRONMENT: must be one of production, non-production/);
  });

  it('needs the ignore-rules parser for a scanning function', () => {
    expect(() =>
      parseConfig(
        { STATE_TABLE_NAME: 'state', FINDINGS_TOPIC_ARN: TOPIC, AWS_REGION: 'eu-west-1' },
        'ami-event'
      )
    ).toThrow(/IGNORE_RULES needs a parser/);
  });
});

describe('the Lambdas read the settings table', () => {
  const scanEnv = { STATE_TABLE_NAME: 'state', FINDINGS_TOPIC_ARN: TOPIC };

  it('start in every partition, the European Sovereign Cloud included', () => {
    for (const region of ['eusc-de-east-1', 'us-iso-east-1', 'cn-north-1', 'us-gov-west-1']) {
      expect(loadConfig({ ...scanEnv, AWS_REGION: region }, 'scan-cluster').region).toBe(region);
    }
    const dispatch = parseConfig(
      {
        SCAN_QUEUE_URL: 'https://sqs.eusc-de-east-1.amazonaws.eu/111122223333/scan',
        CLUSTERS: 'prod,dr@eusc-de-east-1',
        AWS_REGION: 'eusc-de-east-1',
      },
      'dispatch'
    );
    expect(dispatch.clusters).toEqual([
      { name: 'prod', region: 'eusc-de-east-1' },
      { name: 'dr', region: 'eusc-de-east-1' },
    ]);
  });

  it('refuse a region that is none, with the nearest one', () => {
    expect(() => loadConfig({ ...scanEnv, AWS_REGION: 'us-iso-east1' }, 'scan-cluster')).toThrow(
      /AWS_REGION: "us-iso-east1" is not an AWS region name .*did you mean "us-iso-east-1"/
    );
  });

  it('hold the same ranges as the construct and cdk.json (one table)', () => {
    const env = { ...scanEnv, AWS_REGION: 'eu-west-1' };
    expect(() => loadConfig({ ...env, ALERT_BATCH_THRESHOLD: '1001' }, 'iam-event')).toThrow(
      /ALERT_BATCH_THRESHOLD: must be an integer from 1 to 1000, got 1001/
    );
    expect(loadConfig({ ...env, ALERT_BATCH_THRESHOLD: '' }, 'iam-event').alertBatchThreshold).toBe(
      5
    );
    expect(loadConfig({ ...env, SECURITY_HUB: 'true' }, 'iam-event').settings.securityHub).toBe(
      true
    );
  });
});
