// Per-cluster settings end to end at synth: the construct's Lambda environment (read back with the
// Lambdas' own parser), the email filter policy (evaluated against the attributes the Lambdas put
// on their messages), and the limits checked at synth.
import { App, Stack } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import {
  type EmailFilterPolicy,
  emailFilterPolicy,
  FILTER_POLICY_MAX_COMBINATIONS,
  filterPolicyCombinations,
} from '../../infra/constructs/alerts.js';
import { NodeClassScanner } from '../../infra/index.js';
import { clusterAlertMinimums } from '../../lambda/core/cluster-settings.js';
import { resourceMatches } from '../../lambda/core/ignore-rules.js';
import { SEVERITIES, type Severity } from '../../lambda/core/model.js';
import { messageAttributes } from '../../lambda/core/notify/message.js';
import { loadConfig } from '../../lambda/shared/config.js';
import { buildApp, CDK_JSON_CONTEXT, resourcesOf, STUB_LAMBDA_BUNDLES } from './support.js';

type Condition = string | { exists: boolean } | { 'anything-but': string[] };

/** SNS attribute filtering for the operators the scanner's policies use. */
function accepts(policy: EmailFilterPolicy, attributes: Readonly<Record<string, string>>): boolean {
  if ('$or' in policy)
    return (policy.$or as EmailFilterPolicy[]).some((b) => accepts(b, attributes));
  return Object.entries(policy as Record<string, Condition[]>).every(([key, conditions]) =>
    conditions.some((condition) => {
      const value = attributes[key];
      if (typeof condition === 'string') return value === condition;
      if ('exists' in condition) return condition.exists === (value !== undefined);
      if ('anything-but' in condition) {
        return value !== undefined && !condition['anything-but'].includes(value);
      }
      throw new Error(`unsupported condition ${JSON.stringify(condition)}`);
    })
  );
}

const LOCATION = { account: '111122223333', region: 'eu-west-1' };
const findingMessage = (cluster: string, severity: Severity) =>
  messageAttributes('new', {
    severity,
    checkId: 'subnet-selector-matches',
    cluster,
    status: 'fail',
    location: LOCATION,
  });

const CONTEXT = {
  ...CDK_JSON_CONTEXT,
  clusters: ['prod', 'dev', 'staging@us-west-2'],
  alertEmails: ['oncall@example.com'],
  alertMinSeverity: 'high',
  clusterSettings: {
    dev: {
      environment: 'non-production',
      alertMinSeverity: 'critical',
      ignore: [{ check: '*', resource: 'EC2NodeClass/legacy-*', reason: 'being retired' }],
    },
    'staging@us-west-2': { alertMinSeverity: 'medium' },
  },
};

describe('email filter policy with per-cluster minimums', () => {
  const policy = emailFilterPolicy(
    'high',
    new Map([
      ['dev', 'critical'],
      ['staging', 'medium'],
    ])
  );

  it.each([
    ['prod', ['critical', 'high']],
    ['dev', ['critical']],
    ['staging', ['critical', 'high', 'medium']],
    ['discovered-later', ['critical', 'high']],
  ] as const)('emails %s findings at %j', (cluster, emailed) => {
    for (const severity of SEVERITIES) {
      expect(accepts(policy, findingMessage(cluster, severity)), `${cluster} ${severity}`).toBe(
        (emailed as readonly string[]).includes(severity)
      );
    }
  });

  it('lets alarms through, and summaries and digests by their own severity and cluster', () => {
    // Prepare: a CloudWatch alarm notification carries no message attributes.
    const summary = (cluster: string, severity: Severity) =>
      messageAttributes('summary', { severity, cluster, location: LOCATION });

    // Assess
    expect(accepts(policy, {})).toBe(true);
    expect(accepts(policy, summary('dev', 'high'))).toBe(false);
    expect(accepts(policy, summary('dev', 'critical'))).toBe(true);
    expect(
      accepts(policy, messageAttributes('digest', { severity: 'medium', cluster: 'staging' }))
    ).toBe(true);
  });

  it('treats a finding without a cluster attribute by the global minimum', () => {
    expect(accepts(policy, { change: 'new', severity: 'high' })).toBe(true);
    expect(accepts(policy, { change: 'new', severity: 'medium' })).toBe(false);
  });

  it('stays the plain severity list without per-cluster minimums (unchanged template)', () => {
    expect(emailFilterPolicy('medium', new Map())).toEqual({
      severity: ['critical', 'high', 'medium', { exists: false }],
    });
  });

  it('counts combinations as SNS does and refuses a policy over its limit at synth', () => {
    // Prepare: 40 clusters emailed at every severity: 40 × 5 values in one branch.
    const clusters = Array.from({ length: 40 }, (_, index) => `c${index}`);
    const stack = new Stack(new App());

    // Act
    const create = () =>
      new NodeClassScanner(stack, 'Scanner', {
        lambdaBundlesDirectory: STUB_LAMBDA_BUNDLES,
        clusters,
        alertEmails: ['oncall@example.com'],
        clusterSettings: Object.fromEntries(clusters.map((c) => [c, { alertMinSeverity: 'info' }])),
      });

    // Assess
    expect(filterPolicyCombinations(policy)).toBe(1 + 1 + 3 + 2 + 2);
    expect(create).toThrow(
      `the email filter policy has ${1 + 200 + 2 + 2} combinations of values (SNS allows ${FILTER_POLICY_MAX_COMBINATIONS})`
    );
  });
});

describe('per-cluster settings in the synthesized stack', () => {
  const { template } = buildApp(CONTEXT);
  const functions = Object.values(resourcesOf(template, 'AWS::Lambda::Function'));
  const subscriptions = Object.values(resourcesOf(template, 'AWS::SNS::Subscription'));

  it('filters the email subscription on each cluster’s own minimum', () => {
    // Prepare
    const emails = subscriptions.filter((s) => s.Properties?.Protocol === 'email');

    // Assess
    expect(emails).toHaveLength(1);
    expect(emails[0]?.Properties?.FilterPolicy).toEqual(
      emailFilterPolicy('high', clusterAlertMinimums(CONTEXT.clusterSettings as never))
    );
  });

  it('gives the scanning Lambdas each cluster’s environment and scoped rules, as they parse them', () => {
    // Prepare
    const scanCluster = functions.find((fn) =>
      JSON.stringify(fn.Properties?.Environment).includes('"STATE_TABLE_NAME"')
    );
    const environment = scanCluster?.Properties?.Environment as
      | { Variables: Record<string, unknown> }
      | undefined;
    const variables = environment?.Variables ?? {};
    const env = Object.fromEntries(
      Object.entries(variables).map(([key, value]) => [
        key,
        typeof value === 'string' ? value : 'x',
      ])
    );

    // Act: the scan function's own parser, on its synthesized environment.
    const config = loadConfig(
      {
        ...env,
        STATE_TABLE_NAME: 'state',
        FINDINGS_TOPIC_ARN: 'arn:aws:sns:eu-west-1:111122223333:findings',
        AWS_REGION: 'eu-west-1',
      },
      'scan-cluster'
    );

    // Assess
    expect(config.environment).toBe('production');
    expect([...config.clusterEnvironments]).toEqual([['dev', 'non-production']]);
    expect(config.ignore).toEqual([
      { check: '*', resource: 'dev/EC2NodeClass/legacy-*', reason: 'being retired' },
    ]);
    const [rule] = config.ignore;
    const legacy = (cluster: string) =>
      ({ cluster, kind: 'EC2NodeClass', name: 'legacy-a' }) as const;
    expect(resourceMatches(rule?.resource ?? '', legacy('dev'))).toBe(true);
    expect(resourceMatches(rule?.resource ?? '', legacy('prod'))).toBe(false);
  });

  it('fails the construct on settings for a cluster it does not scan, naming it', () => {
    const stack = new Stack(new App());
    expect(
      () =>
        new NodeClassScanner(stack, 'Scanner', {
          lambdaBundlesDirectory: STUB_LAMBDA_BUNDLES,
          clusters: ['prod'],
          clusterSettings: { prd: { environment: 'non-production' } },
        })
    ).toThrow(
      'clusterSettings.prd: "prd" is not one of the clusters (prod) (did you mean "prod"?)'
    );
  });
});
