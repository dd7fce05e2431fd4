import { describe, expect, it } from 'vitest';
import { parseScannerConfig } from '../../infra/config.js';
import { ignoreRulesValue } from '../../infra/constructs/node-class-scanner.js';
import { CHECKS } from '../../lambda/core/checks/index.js';
import { IGNORE_RULES_MAX_CHARS, loadConfig } from '../../lambda/shared/config.js';
import { buildApp, CDK_JSON_CONTEXT, resourcesOf } from './support.js';

const BASE = { homeRegion: 'eu-west-1', clusters: ['prod'] };
const RULE = {
  check: 'node-role-policies',
  resource: 'prod/EC2NodeClass/legacy-*',
  reason: 'the VPC CNI has its own role (IRSA)',
  expires: '2027-01-31',
};

describe('scanner configuration: ignore', () => {
  it('ships an empty ignore list in cdk.json', () => {
    expect(CDK_JSON_CONTEXT.ignore).toEqual([]);
    expect(parseScannerConfig(BASE).ignore).toEqual([]);
  });

  it('takes the rules as cdk.json objects or as a -c ignore=[…] JSON string', () => {
    expect(parseScannerConfig({ ...BASE, ignore: [RULE] }).ignore).toEqual([RULE]);
    expect(parseScannerConfig({ ...BASE, ignore: JSON.stringify([RULE]) }).ignore).toEqual([RULE]);
  });

  it('fails synth naming the context key of an unknown check id, a bad glob and a bad date', () => {
    // Act
    const attempt = () =>
      parseScannerConfig({
        ...BASE,
        ignore: [
          { ...RULE, check: 'node-role-policy' },
          { ...RULE, resource: 'legacy-*', expires: 'soon' },
        ],
      });
    // Assess
    expect(attempt).toThrow(
      /context key "ignore\.0\.check": unknown check id "node-role-policy" \(did you mean "node-role-policies"\?\) \(see `nodeclass-scan checks`\)/
    );
    expect(attempt).toThrow(
      /context key "ignore\.1\.resource": "legacy-\*" is not cluster\/Kind\/name/
    );
    expect(attempt).toThrow(/context key "ignore\.1\.expires": "soon" is not a date/);
  });

  it('fails synth when the rules would not fit in the Lambda environment', () => {
    // Prepare
    const rules = Array.from({ length: 40 }, (_, index) => ({
      ...RULE,
      resource: `prod/EC2NodeClass/legacy-${index}`,
    }));
    // Act
    const attempt = () => parseScannerConfig({ ...BASE, ignore: rules });
    // Assess
    expect(JSON.stringify(rules).length).toBeGreaterThan(IGNORE_RULES_MAX_CHARS);
    expect(attempt).toThrow(
      /context key "ignore": the ignore rules and per-cluster environments take \d+ characters/
    );
    expect(() => ignoreRulesValue(rules)).toThrow(/keep them under 2500/);
  });

  it('rejects invalid rules given to the construct directly', () => {
    expect(() => ignoreRulesValue([{ ...RULE, check: 'nope' }])).toThrow(
      'NodeClassScanner: ignore[0].check: unknown check id "nope" (see `nodeclass-scan checks`)'
    );
  });

  it('passes the rules to the scanning functions only, as JSON their config parses back', () => {
    // Act
    const { template } = buildApp({ ...CDK_JSON_CONTEXT, ...BASE, ignore: [RULE] });
    const variables = Object.entries(resourcesOf(template, 'AWS::Lambda::Function')).map(
      ([id, resource]) => ({
        id,
        env: (resource.Properties as { Environment: { Variables: Record<string, string> } })
          .Environment.Variables,
      })
    );
    // Assess
    for (const { id, env } of variables) {
      if (id.startsWith('ScannerDispatch')) {
        expect(env.IGNORE_RULES, id).toBeUndefined();
        continue;
      }
      const handler = id.startsWith('ScannerScanCluster')
        ? 'scan-cluster'
        : id.startsWith('ScannerAmiEvent')
          ? 'ami-event'
          : 'iam-event';
      const config = loadConfig(
        {
          IGNORE_RULES: env.IGNORE_RULES,
          STATE_TABLE_NAME: 'state',
          FINDINGS_TOPIC_ARN: 'arn:aws:sns:eu-west-1:111122223333:findings',
          AWS_REGION: 'eu-west-1',
        },
        handler,
        { checkIds: CHECKS.map((check) => check.id) }
      );
      expect(config.ignore, id).toEqual([RULE]);
    }
    expect(variables).toHaveLength(4);
  });
});
