import { describe, expect, it } from 'vitest';
import { amiAllowed } from '../../../lambda/core/checks/ami-allowed.js';
import { ok, unavailable } from '../../../lambda/core/facts/slice.js';
import {
  anAmiFacts,
  anAwsInventory,
  anImage,
  awsFactsWithImages,
  SCAN_TIME,
  someAwsFacts,
} from '../../support/aws-builders.js';
import { aNodeClassObject } from '../../support/builders.js';

const now = SCAN_TIME;
const nodeClass = aNodeClassObject();

function evaluateWith(imageAllowed: boolean | undefined) {
  const image = anImage(imageAllowed === undefined ? {} : { imageAllowed });
  const facts = awsFactsWithImages([image]);
  return amiAllowed.evaluate(anAwsInventory([nodeClass], facts), { now });
}

describe('ami-allowed', () => {
  it('passes when the image is allowed or the setting is not reported', () => {
    expect(evaluateWith(true)[0]?.status).toBe('pass');
    expect(evaluateWith(undefined)[0]?.status).toBe('pass');
  });

  it('fails when a selected image has ImageAllowed=false', () => {
    const [finding] = evaluateWith(false);
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('ImageAllowed=false');
  });

  it('reports an error when images could not be read', () => {
    const facts = someAwsFacts({
      amis: ok({
        ...anAmiFacts(),
        available: unavailable('access-denied', 'ec2:DescribeImages denied'),
      }),
    });
    const [finding] = amiAllowed.evaluate(anAwsInventory([nodeClass], facts), { now });
    expect(finding?.status).toBe('error');
    expect(finding?.message).toContain('access-denied');
  });
});
