import { describe, expect, it } from 'vitest';
import type { AnnotationSuppression } from '../../lambda/core/annotation-policy.js';
import { CHECKS } from '../../lambda/core/checks/index.js';
import {
  expiryInstant,
  globMatches,
  type IgnoreRule,
  ignoreRulesSchema,
  isExpired,
  resourceMatches,
} from '../../lambda/core/ignore-rules.js';
import { emptyInventory } from '../../lambda/core/inventory.js';
import { materialHash } from '../../lambda/core/material.js';
import { type Finding, findingId } from '../../lambda/core/model.js';
import { parseNodePool } from '../../lambda/core/schema.js';
import {
  type AnnotatedObject,
  annotatedObjectsOf,
  applySuppressions,
  parseAnnotationValue,
} from '../../lambda/core/suppress.js';
import { aNodeClassEntry, aNodeClassObject } from '../support/builders.js';
import { aFinding } from '../support/findings.js';

const NOW = new Date('2026-11-01T12:00:00Z');
const CHECK_IDS = CHECKS.map((check) => check.id);
const PREFIX = 'ignore-check.nodeclass-scanner/';

function suppress(
  findings: readonly Finding[],
  options: {
    rules?: readonly IgnoreRule[];
    objects?: readonly AnnotatedObject[];
    now?: Date;
    policy?: AnnotationSuppression;
  } = {}
): Finding[] {
  return applySuppressions(findings, {
    rules: options.rules ?? [],
    objects: options.objects ?? [],
    now: options.now ?? NOW,
    catalog: CHECKS,
    ...(options.policy === undefined ? {} : { annotationSuppression: options.policy }),
  });
}

function annotated(name: string, annotations: Record<string, string>): AnnotatedObject {
  return { resource: { cluster: 'prod', kind: 'EC2NodeClass', name }, annotations };
}

const cniFinding = aFinding({
  checkId: 'node-role-policies',
  severity: 'high',
  resource: { name: 'legacy-a' },
});

describe('globMatches', () => {
  it.each([
    ['legacy-*', 'legacy-a', true],
    ['legacy-*', 'legacy-', true],
    ['legacy-*', 'new-a', false],
    ['*', '', true],
    ['?', '', false],
    ['a?c', 'abc', true],
    ['a?c', 'ac', false],
    ['*-gpu-*', 'prod-gpu-large', true],
    ['*-gpu-*', 'prod-cpu-large', false],
    ['a*b*c', 'aXbYbZc', true],
    ['a*b*c', 'aXbYbZ', false],
    ['exact', 'exact', true],
    ['exact', 'exactly', false],
  ])('%s against %s is %s', (pattern, text, expected) => {
    expect(globMatches(pattern, text)).toBe(expected);
  });

  it('answers a pathological pattern on a long name in linear-ish time', () => {
    // Prepare: catastrophic for a backtracking regex (/^(.*a){20}b$/-like)
    const pattern = `${'*a'.repeat(20)}b`;
    const text = 'a'.repeat(5000);
    // Act
    const started = performance.now();
    const matched = globMatches(pattern, text);
    // Assess
    expect(matched).toBe(false);
    expect(performance.now() - started).toBeLessThan(500);
  });
});

describe('resourceMatches', () => {
  const legacy = { cluster: 'prod', kind: 'EC2NodeClass' as const, name: 'legacy-a' };

  it('matches cluster, kind and name each against its own segment', () => {
    expect(resourceMatches('*/EC2NodeClass/legacy-*', legacy)).toBe(true);
    expect(resourceMatches('prod/*/legacy-a', legacy)).toBe(true);
    expect(resourceMatches('staging/*/*', legacy)).toBe(false);
    expect(resourceMatches('*/NodePool/*', legacy)).toBe(false);
  });

  it('never lets * span the / between segments', () => {
    expect(resourceMatches('*/legacy-a', legacy)).toBe(false);
    expect(resourceMatches('*', legacy)).toBe(false);
  });

  it('matches manifests scanned without a cluster with * (empty cluster)', () => {
    expect(resourceMatches('*/EC2NodeClass/legacy-a', { ...legacy, cluster: '' })).toBe(true);
  });
});

describe('expiry', () => {
  it('keeps a date rule through the whole day in UTC and drops it at the next midnight', () => {
    const rule = { expires: '2026-11-01' };
    expect(isExpired(rule, new Date('2026-11-01T23:59:59.999Z'))).toBe(false);
    expect(isExpired(rule, new Date('2026-11-02T00:00:00.000Z'))).toBe(true);
  });

  it('keeps a date-time rule up to that instant, honouring its offset', () => {
    const rule = { expires: '2026-11-01T14:00:00+02:00' };
    expect(isExpired(rule, new Date('2026-11-01T12:00:00.000Z'))).toBe(false);
    expect(isExpired(rule, new Date('2026-11-01T12:00:00.001Z'))).toBe(true);
  });

  it('never expires a rule without expires', () => {
    expect(isExpired({}, new Date('2999-01-01T00:00:00Z'))).toBe(false);
  });

  it.each([
    '2026-02-30',
    '2026-13-01',
    '01/11/2026',
    '2026-11-01T12:00:00',
    'tomorrow',
    '2026-11-01T25:00Z',
  ])('rejects %s as a date', (text) => {
    expect(expiryInstant(text)).toBeUndefined();
  });
});

describe('ignoreRulesSchema', () => {
  const schema = ignoreRulesSchema(CHECK_IDS);
  const valid = {
    check: 'node-role-policies',
    resource: '*/EC2NodeClass/legacy-*',
    reason: 'the VPC CNI has its own role (IRSA)',
    expires: '2027-01-31',
  };

  it('accepts a rule, and check globs that name at least one check', () => {
    expect(schema.parse([valid, { ...valid, check: '*' }, { ...valid, check: 'ami-*' }])).toEqual([
      valid,
      { ...valid, check: '*' },
      { ...valid, check: 'ami-*' },
    ]);
  });

  it('names the field of each bad rule: unknown check, bad resource, no reason, bad date, unknown key', () => {
    // Act
    const result = schema.safeParse([
      { ...valid, check: 'node-role-policy' },
      { ...valid, resource: 'legacy-*' },
      { ...valid, reason: '  ' },
      { ...valid, expires: '31.01.2027' },
      { ...valid, resource: '*/Deployment/*' },
      { ...valid, owner: 'me' },
    ]);
    // Assess
    expect(result.success).toBe(false);
    const issues = (result.error?.issues ?? []).map((issue) => [
      issue.path.join('.'),
      issue.message,
    ]);
    expect(issues).toEqual(
      expect.arrayContaining([
        [
          '0.check',
          'unknown check id "node-role-policy" (did you mean "node-role-policies"?) (see `nodeclass-scan checks`)',
        ],
        ['1.resource', expect.stringContaining('"legacy-*" is not cluster/Kind/name')],
        ['2.reason', 'required: the reason the finding is accepted'],
        ['3.expires', expect.stringContaining('"31.01.2027" is not a date')],
        ['4.resource', expect.stringContaining('"Deployment" matches no kind')],
        ['5', expect.stringContaining('owner')],
      ])
    );
  });
});

describe('applySuppressions: annotations', () => {
  it('suppresses the named check on the annotated object, keeping the finding and its reason', () => {
    // Act
    const [finding] = suppress([cniFinding], {
      objects: [annotated('legacy-a', { [`${PREFIX}node-role-policies`]: 'CNI uses IRSA' })],
    });
    // Assess
    expect(finding).toMatchObject({
      id: cniFinding.id,
      status: 'suppressed',
      severity: 'high',
      message: cniFinding.message,
      suppression: { reason: 'CNI uses IRSA', source: 'annotation', status: 'fail' },
    });
    expect(finding?.suppression).not.toHaveProperty('expires');
    expect(finding?.materialHash).toBe(
      materialHash({ status: 'suppressed', severity: 'high', evidence: {} }, [])
    );
    expect(finding?.materialHash).not.toBe(cniFinding.materialHash);
  });

  it('records an error finding as suppressed from error', () => {
    const error = { ...cniFinding, status: 'error' as const };
    const [finding] = suppress([error], {
      objects: [annotated('legacy-a', { [`${PREFIX}node-role-policies`]: 'accepted' })],
    });
    expect(finding?.suppression?.status).toBe('error');
  });

  it('leaves other checks, other objects and other clusters alone', () => {
    // Prepare
    const otherCheck = aFinding({ checkId: 'imds-v2-required', resource: { name: 'legacy-a' } });
    const otherObject = { ...cniFinding, id: 'x', resource: { ...cniFinding.resource, name: 'b' } };
    const otherCluster = {
      ...cniFinding,
      id: 'y',
      resource: { ...cniFinding.resource, cluster: 'staging' },
    };
    // Act
    const findings = suppress([otherCheck, otherObject, otherCluster], {
      objects: [annotated('legacy-a', { [`${PREFIX}node-role-policies`]: 'CNI uses IRSA' })],
    });
    // Assess
    expect(findings.map((finding) => finding.status)).toEqual(['fail', 'fail', 'fail']);
  });

  it('never touches pass or not-applicable findings', () => {
    // Prepare
    const pass = { ...cniFinding, status: 'pass' as const };
    const notApplicable = { ...cniFinding, id: 'na', status: 'not-applicable' as const };
    // Act
    const findings = suppress([pass, notApplicable], {
      objects: [annotated('legacy-a', { [`${PREFIX}node-role-policies`]: 'CNI uses IRSA' })],
      rules: [{ check: '*', resource: '*/*/*', reason: 'all' }],
    });
    // Assess
    expect(findings).toEqual([pass, notApplicable]);
  });

  it('reports an annotation naming an unknown check as an error on the object, naming the annotation', () => {
    // Act
    const findings = suppress([cniFinding], {
      objects: [annotated('legacy-a', { [`${PREFIX}node-role-policy`]: 'typo' })],
    });
    // Assess
    expect(findings[0]).toEqual(cniFinding);
    expect(findings[1]).toMatchObject({
      checkId: 'nodeclass-schema-valid',
      status: 'error',
      severity: 'high',
      resource: { cluster: 'prod', kind: 'EC2NodeClass', name: 'legacy-a' },
      location: { path: `metadata.annotations.${PREFIX}node-role-policy` },
      evidence: { annotation: `${PREFIX}node-role-policy`, checkId: 'node-role-policy' },
    });
    expect(findings[1]?.message).toContain(`${PREFIX}node-role-policy`);
    expect(findings[1]?.message).toContain('"node-role-policy" is not a check id');
  });

  it("replaces the object's nodeclass-schema-valid pass by the annotation error", () => {
    // Prepare
    const schemaPass = aFinding({
      checkId: 'nodeclass-schema-valid',
      status: 'pass',
      resource: { name: 'legacy-a' },
    });
    const otherPass = {
      ...schemaPass,
      id: 'other',
      resource: { ...schemaPass.resource, name: 'b' },
    };
    // Act
    const findings = suppress([schemaPass, otherPass], {
      objects: [annotated('legacy-a', { [`${PREFIX}nope`]: 'typo' })],
    });
    // Assess
    expect(findings.map((finding) => [finding.resource.name, finding.status])).toEqual([
      ['b', 'pass'],
      ['legacy-a', 'error'],
    ]);
  });

  it('reports an annotation without a reason as an error, and suppresses nothing', () => {
    const findings = suppress([cniFinding], {
      objects: [annotated('legacy-a', { [`${PREFIX}node-role-policies`]: ' ' })],
    });
    expect(findings[0]?.status).toBe('fail');
    expect(findings[1]).toMatchObject({ status: 'error', checkId: 'nodeclass-schema-valid' });
    expect(findings[1]?.message).toContain('has no reason');
  });

  it('never suppresses its own annotation errors, even under a rule for every check', () => {
    const findings = suppress([], {
      objects: [annotated('legacy-a', { [`${PREFIX}nope`]: 'typo' })],
      rules: [{ check: '*', resource: '*/*/*', reason: 'everything' }],
    });
    expect(findings).toHaveLength(1);
    expect(findings[0]?.status).toBe('error');
  });

  it('reports one error per annotation when two objects share a name', () => {
    const object = annotated('legacy-a', { [`${PREFIX}nope`]: 'typo' });
    expect(suppress([], { objects: [object, object] })).toHaveLength(1);
  });
});

describe('applySuppressions: config rules', () => {
  const rule: IgnoreRule = {
    check: 'node-role-policies',
    resource: '*/EC2NodeClass/legacy-*',
    reason: 'migrating by Q1',
    expires: '2026-11-01',
  };

  it('suppresses matching findings with the rule reason and expiry', () => {
    const [finding] = suppress([cniFinding], { rules: [rule] });
    expect(finding).toMatchObject({
      status: 'suppressed',
      suppression: {
        reason: 'migrating by Q1',
        source: 'config',
        status: 'fail',
        expires: '2026-11-01',
      },
    });
  });

  it('no longer applies once expires has passed: the finding is normal again', () => {
    const [lastDay] = suppress([cniFinding], { rules: [rule], now: new Date('2026-11-01T23:59Z') });
    const [nextDay] = suppress([cniFinding], { rules: [rule], now: new Date('2026-11-02T00:00Z') });
    expect(lastDay?.status).toBe('suppressed');
    expect(nextDay).toEqual(cniFinding);
  });

  it('lets the follow-ons of a suppressed root stand on their own again', () => {
    // Prepare: accepting the SSM parameter finding must not accept the NodeClass launching nothing
    const root = aFinding({
      checkId: 'ami-ssm-parameter-resolves',
      severity: 'high',
      resource: { name: 'golden' },
    });
    const followOn = aFinding({
      checkId: 'controller-can-launch',
      status: 'error',
      resource: { name: 'golden' },
      causedBy: root.id,
    });
    const accept: IgnoreRule = {
      check: 'ami-ssm-parameter-resolves',
      resource: '*/EC2NodeClass/golden',
      reason: 'parameter is rolled out next week',
    };

    // Act
    const [suppressedRoot, standalone] = suppress([root, followOn], { rules: [accept] });

    // Assess
    expect(suppressedRoot?.status).toBe('suppressed');
    expect(standalone?.status).toBe('error');
    expect(standalone).not.toHaveProperty('causedBy');
  });

  it('matches the check by glob and the resource by cluster/Kind/name', () => {
    // Prepare
    const other = aFinding({ checkId: 'imds-v2-required', resource: { name: 'legacy-b' } });
    const fresh = aFinding({ checkId: 'imds-v2-required', resource: { name: 'fresh' } });
    // Act
    const findings = suppress([other, fresh], {
      rules: [{ check: 'imds-*', resource: 'prod/EC2NodeClass/legacy-?', reason: 'old' }],
    });
    // Assess
    expect(findings.map((finding) => finding.status)).toEqual(['suppressed', 'fail']);
  });

  it('prefers the object annotation when both an annotation and a rule apply', () => {
    const [finding] = suppress([cniFinding], {
      rules: [rule],
      objects: [annotated('legacy-a', { [`${PREFIX}node-role-policies`]: 'owner says so' })],
    });
    expect(finding?.suppression).toEqual({
      reason: 'owner says so',
      source: 'annotation',
      status: 'fail',
    });
  });
});

describe('annotatedObjectsOf', () => {
  it('reads NodeClass and NodePool annotations from the raw object, even when it fails the schema', () => {
    // Prepare
    const invalid = aNodeClassObject({
      name: 'broken',
      metadata: { annotations: { [`${PREFIX}nodeclass-schema-valid`]: 'known', other: 3 } },
      spec: { amiSelectorTerms: 'not-a-list' },
    });
    const entry = aNodeClassEntry(invalid, 'prod');
    const rawPool = {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodePool',
      metadata: { name: 'general', annotations: { [`${PREFIX}nodeclass-ready`]: 'later' } },
      spec: {},
    };
    const nodePool = {
      cluster: 'prod',
      name: 'general',
      raw: rawPool,
      parsed: parseNodePool(rawPool),
    };
    // Act
    const objects = annotatedObjectsOf(
      emptyInventory({ nodeClasses: [entry], nodePools: [nodePool] })
    );
    // Assess
    expect(entry.parsed.ok).toBe(false);
    expect(objects).toEqual([
      {
        resource: { cluster: 'prod', kind: 'EC2NodeClass', name: 'broken' },
        annotations: { [`${PREFIX}nodeclass-schema-valid`]: 'known' },
      },
      {
        resource: { cluster: 'prod', kind: 'NodePool', name: 'general' },
        annotations: { [`${PREFIX}nodeclass-ready`]: 'later' },
      },
    ]);
  });

  it('gives stable ids to annotation errors (same object, same annotation)', () => {
    const object = annotated('legacy-a', { [`${PREFIX}nope`]: 'typo' });
    const [first] = suppress([], { objects: [object] });
    expect(first?.id).toBe(
      findingId(
        'nodeclass-schema-valid',
        object.resource,
        `metadata.annotations.${PREFIX}nope#ignore-check-annotation`
      )
    );
  });
});

describe('parseAnnotationValue', () => {
  it.each([
    ['CNI uses IRSA', { reason: 'CNI uses IRSA' }],
    ['  CNI uses IRSA  ', { reason: 'CNI uses IRSA' }],
    ['CNI uses IRSA; expires=2026-12-31', { reason: 'CNI uses IRSA', expires: '2026-12-31' }],
    ['CNI; IRSA ;expires = 2026-12-31 ', { reason: 'CNI; IRSA', expires: '2026-12-31' }],
    [
      'retiring; expires=2027-03-31T18:00:00+02:00',
      { reason: 'retiring', expires: '2027-03-31T18:00:00+02:00' },
    ],
    // Only a trailing `; expires=` is an expiry: anything else stays part of the reason.
    ['see ticket; expires soon', { reason: 'see ticket; expires soon' }],
    ['a; b', { reason: 'a; b' }],
    ['; expires=2026-12-31', { reason: '', expires: '2026-12-31' }],
  ])('%j', (value, expected) => {
    expect(parseAnnotationValue(value)).toEqual(expected);
  });

  it('reads a hostile 256 KiB value in linear time', () => {
    const started = performance.now();
    parseAnnotationValue(`${' ;'.repeat(65_536)}${' '.repeat(131_072)}x`);
    parseAnnotationValue(`; expires=${'a'.repeat(262_144)} b`);
    expect(performance.now() - started).toBeLessThan(500);
  });
});

describe('applySuppressions: annotation expiry', () => {
  const KEY = `${PREFIX}node-role-policies`;

  it('suppresses until the expiry (through that day, UTC), carrying it in the suppression', () => {
    const [finding] = suppress([cniFinding], {
      objects: [annotated('legacy-a', { [KEY]: 'CNI uses IRSA; expires=2026-11-01' })],
      now: new Date('2026-11-01T23:59:59Z'),
    });
    expect(finding).toMatchObject({
      status: 'suppressed',
      suppression: { reason: 'CNI uses IRSA', source: 'annotation', expires: '2026-11-01' },
    });
  });

  it("reports the finding again once the expiry has passed (the scan's now), saying the suppression expired", () => {
    // Act
    const [finding, ...rest] = suppress([cniFinding], {
      objects: [annotated('legacy-a', { [KEY]: 'CNI uses IRSA; expires=2026-10-31' })],
    });
    // Assess: open again, its id and material hash unchanged; the message and evidence say why
    expect(rest).toEqual([]);
    expect(finding).toMatchObject({
      id: cniFinding.id,
      status: 'fail',
      materialHash: cniFinding.materialHash,
      evidence: {
        annotationSuppression: {
          annotation: KEY,
          reason: 'CNI uses IRSA',
          expires: '2026-10-31',
          outcome: 'expired',
        },
      },
    });
    expect(finding?.message).toBe(
      `${cniFinding.message} The suppression by the annotation ${KEY} ("CNI uses IRSA") expired 2026-10-31; the finding is reported again.`
    );
  });

  it('lets an unexpired config rule suppress what an expired annotation no longer does', () => {
    const [finding] = suppress([cniFinding], {
      objects: [annotated('legacy-a', { [KEY]: 'old; expires=2026-10-31' })],
      rules: [{ check: 'node-role-policies', resource: '*/*/*', reason: 'rule' }],
    });
    expect(finding?.suppression).toMatchObject({ source: 'config', reason: 'rule' });
  });

  it('reports an unreadable expiry as an error on the object, and suppresses nothing', () => {
    const findings = suppress([cniFinding], {
      objects: [annotated('legacy-a', { [KEY]: 'CNI uses IRSA; expires=next-year' })],
    });
    expect(findings[0]).toEqual(cniFinding);
    expect(findings[1]).toMatchObject({ status: 'error', checkId: 'nodeclass-schema-valid' });
    expect(findings[1]?.message).toContain('has an unreadable expiry "next-year"');
  });
});

describe('applySuppressions: the annotationSuppression policy', () => {
  const imds = aFinding({ checkId: 'imds-v2-required', resource: { name: 'legacy-a' } });
  const object = annotated('legacy-a', {
    [`${PREFIX}node-role-policies`]: 'CNI uses IRSA',
    [`${PREFIX}imds-v2-required`]: 'GPU AMI needs IMDSv1',
  });

  it('allows every annotation by default', () => {
    const findings = suppress([cniFinding, imds], { objects: [object] });
    expect(findings.map((finding) => finding.status)).toEqual(['suppressed', 'suppressed']);
  });

  it('deny: the findings stay open, each saying which annotation tried and that the setting refused it', () => {
    // Act
    const [cni, imdsFinding] = suppress([cniFinding, imds], { objects: [object], policy: 'deny' });
    // Assess
    expect(cni).toMatchObject({
      status: 'fail',
      materialHash: cniFinding.materialHash,
      evidence: {
        annotationSuppression: {
          annotation: `${PREFIX}node-role-policies`,
          reason: 'CNI uses IRSA',
          outcome: 'refused',
        },
      },
    });
    expect(cni?.message).toBe(
      `${cniFinding.message} The annotation ${PREFIX}node-role-policies ("CNI uses IRSA") tried to suppress this finding; refused: the annotationSuppression setting does not let annotations suppress node-role-policies, so it stays open.`
    );
    expect(imdsFinding?.status).toBe('fail');
  });

  it('a list: annotations of the listed checks (ids or globs) suppress, the others are refused', () => {
    const findings = suppress([cniFinding, imds], { objects: [object], policy: ['imds-*'] });
    expect(findings.map((finding) => [finding.checkId, finding.status])).toEqual([
      ['node-role-policies', 'fail'],
      ['imds-v2-required', 'suppressed'],
    ]);
  });

  it('never refuses a config rule: a rule still suppresses what a refused annotation could not', () => {
    const [finding] = suppress([cniFinding], {
      objects: [object],
      policy: 'deny',
      rules: [{ check: 'node-role-policies', resource: '*/*/legacy-*', reason: 'retired in Q1' }],
    });
    expect(finding).toMatchObject({
      status: 'suppressed',
      suppression: { source: 'config', reason: 'retired in Q1' },
    });
  });

  it('names the setting that refused, as the caller gives it (the CLI flag)', () => {
    const [finding] = applySuppressions([cniFinding], {
      rules: [],
      objects: [object],
      now: NOW,
      catalog: CHECKS,
      annotationSuppression: 'deny',
      annotationSuppressionSetting: '--no-annotation-suppression',
    });
    expect(finding?.message).toContain(
      'refused: --no-annotation-suppression does not let annotations suppress node-role-policies'
    );
  });

  it('still reports unusable annotations under deny', () => {
    const findings = suppress([], {
      objects: [annotated('legacy-a', { [`${PREFIX}nope`]: 'typo' })],
      policy: 'deny',
    });
    expect(findings.map((finding) => finding.checkId)).toEqual(['nodeclass-schema-valid']);
  });
});
