// The annotationSuppression setting: context key (or construct prop) → ANNOTATION_SUPPRESSION on
// the three scanning functions, validated at synth against the check catalog.
import { describe, expect, it } from 'vitest';
import { parseScannerConfig } from '../../infra/config.js';
import { annotationSuppressionValue } from '../../infra/constructs/node-class-scanner.js';
import { handlerResources } from '../../infra/handler-roles.js';
import { SCANNING_HANDLERS } from '../../lambda/adapters/aws/declared-actions.js';
import { buildApp, CDK_JSON_CONTEXT } from './support.js';

const BASE = { homeRegion: 'eu-west-1', clusters: ['prod'] };

describe('scanner configuration: annotationSuppression', () => {
  it('allows annotations by default', () => {
    expect(CDK_JSON_CONTEXT.annotationSuppression).toBe('allow');
    expect(parseScannerConfig(BASE).annotationSuppression).toBe('allow');
  });

  it('takes deny, a cdk.json list, or a -c list as a,b or JSON', () => {
    expect(
      parseScannerConfig({ ...BASE, annotationSuppression: 'deny' }).annotationSuppression
    ).toBe('deny');
    for (const value of [
      ['imds-*', 'ami-selector-pinned'],
      'imds-*,ami-selector-pinned',
      '["imds-*","ami-selector-pinned"]',
    ]) {
      expect(
        parseScannerConfig({ ...BASE, annotationSuppression: value }).annotationSuppression
      ).toEqual(['imds-*', 'ami-selector-pinned']);
    }
  });

  it('fails synth naming the key of a check id that names no check, or a value that is none', () => {
    expect(() =>
      parseScannerConfig({ ...BASE, annotationSuppression: ['imds-*', 'node-role-policy'] })
    ).toThrow(
      /context key "annotationSuppression\.1": unknown check id "node-role-policy" \(did you mean "node-role-policies"\?\) \(see `nodeclass-scan checks`\)/
    );
    expect(() => parseScannerConfig({ ...BASE, annotationSuppression: 'Deny' })).toThrow(
      /context key "annotationSuppression": expected allow, deny or check ids/
    );
    expect(() =>
      parseScannerConfig({
        ...BASE,
        annotationSuppression: Array.from({ length: 20 }, () => 'controller-can-pass-node-role'),
      })
    ).toThrow(/context key "annotationSuppression": the check list takes \d+ characters/);
    expect(() => parseScannerConfig({ ...BASE, annotationSuppression: [] })).toThrow(
      /context key "annotationSuppression": an empty list allows no annotation: write deny/
    );
  });

  it('gives the three scanning functions ANNOTATION_SUPPRESSION, and the dispatcher nothing', () => {
    // Act
    const { template } = buildApp({ ...CDK_JSON_CONTEXT, annotationSuppression: 'imds-*,ami-*' });
    const handlers = handlerResources(template.toJSON() as never);
    // Assess
    for (const handler of SCANNING_HANDLERS) {
      expect(handlers[handler].environment.ANNOTATION_SUPPRESSION, handler).toBe('imds-*,ami-*');
    }
    expect(handlers.dispatch.environment.ANNOTATION_SUPPRESSION).toBeUndefined();
    const defaults = handlerResources(buildApp(CDK_JSON_CONTEXT).template.toJSON() as never);
    expect(defaults['scan-cluster'].environment.ANNOTATION_SUPPRESSION).toBe('allow');
  });

  it('validates the construct prop as the context key', () => {
    expect(annotationSuppressionValue('deny')).toBe('deny');
    expect(annotationSuppressionValue(['imds-v2-required'])).toBe('imds-v2-required');
    expect(() => annotationSuppressionValue(['imds-v2'])).toThrow(
      /NodeClassScanner: annotationSuppression\[0\]: unknown check id "imds-v2"/
    );
    expect(() =>
      annotationSuppressionValue(Array.from({ length: 60 }, () => 'imds-v2-required'))
    ).toThrow(/keep it under 256/);
  });
});
