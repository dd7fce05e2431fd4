import { describe, expect, it } from 'vitest';
import { amiNotDeprecated } from '../../../lambda/core/checks/ami-not-deprecated.js';
import { ok } from '../../../lambda/core/facts/slice.js';
import {
  anAmiFacts,
  anAwsInventory,
  anImage,
  awsFactsWithImages,
  SCAN_TIME,
  someAwsFacts,
  throttled,
} from '../../support/aws-builders.js';
import { aNodeClassObject } from '../../support/builders.js';

const now = SCAN_TIME;
const nodeClass = aNodeClassObject();

function evaluateWith(deprecationTime: string | undefined) {
  const image = anImage(deprecationTime ? { deprecationTime } : {});
  const facts = awsFactsWithImages([image]);
  return amiNotDeprecated.evaluate(anAwsInventory([nodeClass], facts), { now });
}

describe('ami-not-deprecated', () => {
  it('passes without a deprecation time or beyond 30 days', () => {
    expect(evaluateWith(undefined)[0]?.status).toBe('pass');
    expect(evaluateWith('2026-12-15T00:00:00Z')[0]?.status).toBe('pass');
  });

  it('fails for a selected image that is already deprecated', () => {
    const [finding] = evaluateWith('2026-10-15T00:00:00Z');
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('was deprecated');
  });

  it('fails for an image deprecated within 30 days', () => {
    const [finding] = evaluateWith('2026-11-20T00:00:00Z');
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('will be deprecated on 2026-11-20');
  });

  it('is not applicable when nothing is selected', () => {
    const facts = awsFactsWithImages([]);
    expect(amiNotDeprecated.evaluate(anAwsInventory([nodeClass], facts), { now })[0]?.status).toBe(
      'not-applicable'
    );
  });

  it('reports an error when images could not be read', () => {
    const facts = someAwsFacts({ amis: ok({ ...anAmiFacts(), available: throttled() }) });
    const [finding] = amiNotDeprecated.evaluate(anAwsInventory([nodeClass], facts), { now });
    expect(finding?.status).toBe('error');
    expect(finding?.evidence).toMatchObject({ reason: 'throttled' });
  });
});
