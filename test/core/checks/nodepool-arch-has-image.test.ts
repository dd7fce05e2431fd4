import { describe, expect, it } from 'vitest';
import { nodePoolArchHasImage } from '../../../lambda/core/checks/nodepool-arch-has-image.js';
import { ok } from '../../../lambda/core/facts/slice.js';
import {
  anAmiFacts,
  anAwsInventory,
  anImage,
  SCAN_TIME,
  someAwsFacts,
  throttled,
} from '../../support/aws-builders.js';
import { aNodeClassObject } from '../../support/builders.js';
import { aNodePoolObject, requirement, withNodePools } from '../../support/nodepool-builders.js';

const now = SCAN_TIME;
const x86 = anImage();
const arm = anImage({ id: 'ami-0a1b2c3d4e5f00002', architecture: 'arm64' });

function evaluate(images: (typeof x86)[], requirements: unknown[]) {
  const facts = someAwsFacts({ amis: ok(anAmiFacts({ images })) });
  const inventory = withNodePools(anAwsInventory([aNodeClassObject()], facts), [
    aNodePoolObject({ requirements }),
  ]);
  return nodePoolArchHasImage.evaluate(inventory, { now });
}

describe('nodepool-arch-has-image', () => {
  it('fails critical when the only allowed architecture has no image, naming both sides', () => {
    const [finding] = evaluate([x86], [requirement('kubernetes.io/arch', 'In', ['arm64'])]);
    expect(finding?.status).toBe('fail');
    expect(finding?.severity).toBeUndefined();
    expect(finding?.message).toContain('allows arm64');
    expect(finding?.message).toContain('resolves x86_64 images');
    expect(finding?.evidence).toMatchObject({
      uncovered: ['arm64'],
      imageArchitectures: ['x86_64'],
    });
    expect(finding?.location).toEqual({ path: 'spec.template.spec.requirements[0]' });
  });

  it('treats NotIn as excluding the architecture', () => {
    const [finding] = evaluate([arm], [requirement('kubernetes.io/arch', 'NotIn', ['arm64'])]);
    expect(finding?.status).toBe('fail');
    expect(finding?.evidence).toMatchObject({ allowed: ['amd64'] });
  });

  it('treats Gt on the architecture label as admitting no architecture (values are not integers)', () => {
    const [finding] = evaluate([x86, arm], [requirement('kubernetes.io/arch', 'Gt', ['1'])]);
    expect(finding?.status).toBe('fail');
    expect(finding?.evidence).toMatchObject({ allowed: [] });
  });

  it('is low when an unconstrained NodePool (both architectures) has images for one', () => {
    const [finding] = evaluate([x86], []);
    expect(finding).toMatchObject({ status: 'fail', severity: 'low' });
    expect(finding?.message).toContain('no kubernetes.io/arch requirement');
    expect(finding?.evidence).toMatchObject({ uncovered: ['arm64'] });
  });

  it('passes when every allowed architecture has an image', () => {
    expect(evaluate([x86, arm], [])[0]?.status).toBe('pass');
    expect(
      evaluate(
        [x86],
        [
          requirement('kubernetes.io/arch', 'Exists'),
          requirement('kubernetes.io/arch', 'In', ['amd64']),
        ]
      )[0]?.status
    ).toBe('pass');
  });

  it('is not applicable, a follow-on of ami-selector-resolves, when the class resolves no image', () => {
    const [finding] = evaluate([], [requirement('kubernetes.io/arch', 'In', ['arm64'])]);
    expect(finding).toMatchObject({
      status: 'not-applicable',
      causedBy: {
        checkId: 'ami-selector-resolves',
        resource: { kind: 'EC2NodeClass', name: 'default' },
      },
    });
  });

  it('is not applicable when the class does not exist', () => {
    const inventory = withNodePools(anAwsInventory([aNodeClassObject()], someAwsFacts()), [
      aNodePoolObject({ nodeClass: 'gone' }),
    ]);
    const [finding] = nodePoolArchHasImage.evaluate(inventory, { now });
    expect(finding).toMatchObject({
      status: 'not-applicable',
      causedBy: { checkId: 'nodepool-nodeclass-exists' },
    });
  });

  it('reports an error when the images could not be read', () => {
    const inventory = withNodePools(
      anAwsInventory([aNodeClassObject()], someAwsFacts({ amis: throttled() })),
      [aNodePoolObject()]
    );
    const [finding] = nodePoolArchHasImage.evaluate(inventory, { now });
    expect(finding?.status).toBe('error');
    expect(finding?.resource.kind).toBe('NodePool');
  });
});
