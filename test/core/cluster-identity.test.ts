import { describe, expect, it } from 'vitest';
import {
  clusterKey,
  clusterLabel,
  clusterNameOf,
  identityOf,
} from '../../lambda/core/cluster-identity.js';

describe('cluster identity', () => {
  const home = { account: '111122223333', region: 'eu-west-1' };

  it('keys a cluster by account, region and name, never like a bare name', () => {
    const prod = identityOf({ cluster: 'prod' }, home);
    const west = identityOf({ cluster: 'prod', region: 'us-west-2' }, home);
    expect(prod).toEqual({ account: '111122223333', region: 'eu-west-1', name: 'prod' });
    expect(clusterKey(prod)).toBe('111122223333/eu-west-1/prod');
    expect(clusterKey(west)).toBe('111122223333/us-west-2/prod');
    // An unknown account or region stays empty: still not a bare name.
    expect(clusterKey(identityOf({ cluster: 'prod' }, {}))).toBe('//prod');
  });

  it('shows a home-region cluster by name, any other as name@region', () => {
    expect(clusterLabel({ name: 'prod', region: 'eu-west-1' }, 'eu-west-1')).toBe('prod');
    expect(clusterLabel({ name: 'prod', region: 'us-west-2' }, 'eu-west-1')).toBe('prod@us-west-2');
    // Without a home region (or a region), nothing to compare: the name.
    expect(clusterLabel({ name: 'prod', region: 'us-west-2' }, undefined)).toBe('prod');
    expect(clusterLabel({ name: 'prod', region: '' }, 'eu-west-1')).toBe('prod');
  });

  it('reads the name back from a label or a clusters target', () => {
    expect(clusterNameOf('prod@us-west-2')).toBe('prod');
    expect(clusterNameOf('prod')).toBe('prod');
  });
});
