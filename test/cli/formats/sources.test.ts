import { describe, expect, it } from 'vitest';
import {
  parentPath,
  positionOf,
  sourceIndexOf,
  sourceOf,
} from '../../../lambda/cli/formats/sources.js';
import { aFinding, inventoryFrom, nodeClass, TWO_NODECLASSES } from './fixtures.js';

describe('parentPath', () => {
  it('walks up dotted and indexed paths to the object itself', () => {
    const chain: string[] = [];
    for (
      let path: string | undefined = 'spec.a[0].b';
      path !== undefined;
      path = parentPath(path)
    ) {
      chain.push(path);
    }
    expect(chain).toEqual(['spec.a[0].b', 'spec.a[0]', 'spec.a', 'spec', '']);
  });
});

describe('sourceIndexOf / positionOf', () => {
  const inventory = inventoryFrom('nc.yaml', TWO_NODECLASSES);
  const sources = sourceIndexOf(inventory);

  it('finds the source of a finding by cluster, kind and name', () => {
    const source = sourceOf(sources, aFinding({ checkId: 'x', resource: nodeClass('tagged') }));
    expect(source).toMatchObject({ file: 'nc.yaml', document: 1 });
    expect(
      sourceOf(sources, aFinding({ checkId: 'x', resource: nodeClass('tagged', 'other') }))
    ).toBeUndefined();
  });

  it('returns the exact position, else the nearest parent, else the object start', () => {
    const source = sourceOf(
      sources,
      aFinding({ checkId: 'x', resource: nodeClass('arn-profile') })
    );
    if (!source) throw new Error('no source');
    expect(positionOf(source, 'spec.instanceProfile')).toEqual({ line: 8, column: 3 });
    expect(positionOf(source, 'spec.metadataOptions.httpTokens')).toEqual({ line: 5, column: 1 });
    expect(positionOf(source, 'status.conditions[0]')).toEqual({ line: 1, column: 1 });
    expect(positionOf(source, undefined)).toEqual({ line: 1, column: 1 });
  });

  it('has no position for an object read without positions', () => {
    expect(positionOf({ file: 'x', document: 0 }, 'spec')).toBeUndefined();
  });
});
