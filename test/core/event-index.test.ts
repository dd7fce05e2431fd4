import { describe, expect, it } from 'vitest';
import { imageMatchesTerm } from '../../lambda/core/ami/queries.js';
import {
  affectedByIam,
  affectedByImage,
  iamNameKey,
  indexEntriesOf,
  type NodeClassIndexEntry,
} from '../../lambda/core/event-index.js';
import type { Image } from '../../lambda/core/facts/aws.js';
import { aNodeClassObject, anInventory } from '../support/builders.js';

const image: Image = {
  id: 'ami-0123456789abcdef0',
  name: 'eks-node-al2023-2026-11-01',
  ownerId: '111122223333',
  state: 'deregistered',
  tags: { team: 'platform' },
};

function entry(overrides: Partial<NodeClassIndexEntry>): NodeClassIndexEntry {
  return {
    cluster: 'prod',
    name: 'default',
    amiSelectorTerms: [],
    resolvedAmiIds: [],
    ...overrides,
  };
}

describe('indexEntriesOf', () => {
  it('indexes selector terms, resolved AMIs, node role and controller role of each parsed NodeClass', () => {
    // Prepare
    const inventory = anInventory(
      [
        aNodeClassObject({
          name: 'default',
          spec: { amiSelectorTerms: [{ name: 'eks-node-*', owner: 'self' }] },
          status: { amis: [{ id: 'ami-0aaaaaaaaaaaaaaaa', name: 'a' }] },
        }),
        aNodeClassObject({
          name: 'profile',
          spec: { role: undefined, instanceProfile: 'NodeProfile' },
        }),
        {
          apiVersion: 'karpenter.k8s.aws/v1',
          kind: 'EC2NodeClass',
          metadata: { name: 'broken' },
          spec: 7,
        },
      ],
      {
        cluster: {
          name: 'prod',
          region: 'eu-west-1',
          state: {
            read: { status: 'ok', value: { nodeClassCount: 3 } },
            controller: {
              status: 'ok',
              value: {
                namespace: 'kube-system',
                serviceAccount: 'karpenter',
                irsaRoleArn: 'arn:aws:iam::111122223333:role/KarpenterController-prod',
              },
            },
          },
        },
      }
    );
    // Act
    const entries = indexEntriesOf(inventory);
    // Assess
    expect(entries).toEqual([
      {
        cluster: 'prod',
        region: 'eu-west-1',
        name: 'default',
        amiSelectorTerms: [{ name: 'eks-node-*', owner: 'self' }],
        resolvedAmiIds: ['ami-0aaaaaaaaaaaaaaaa'],
        nodeRole: 'KarpenterNodeRole-demo',
        controllerRoleArn: 'arn:aws:iam::111122223333:role/KarpenterController-prod',
      },
      {
        cluster: 'prod',
        region: 'eu-west-1',
        name: 'profile',
        amiSelectorTerms: [{ alias: 'al2023@v20251001' }],
        resolvedAmiIds: [],
        instanceProfile: 'NodeProfile',
        controllerRoleArn: 'arn:aws:iam::111122223333:role/KarpenterController-prod',
      },
    ]);
  });
});

describe('affectedByImage', () => {
  const entries = [
    entry({ name: 'by-name', amiSelectorTerms: [{ name: 'eks-node-*', owner: '111122223333' }] }),
    entry({ name: 'by-tag', amiSelectorTerms: [{ tags: { team: 'platform' } }] }),
    entry({ name: 'by-id', amiSelectorTerms: [{ id: 'ami-0123456789abcdef0' }] }),
    entry({
      name: 'by-status',
      amiSelectorTerms: [{ alias: 'al2023@latest' }],
      resolvedAmiIds: ['ami-0123456789abcdef0'],
    }),
    entry({
      name: 'other',
      amiSelectorTerms: [{ name: 'bottlerocket-*' }, { id: 'ami-0fffffffffffffff0' }],
    }),
  ];

  it('matches name, tag and id terms and resolved AMIs when the image is listed', () => {
    const names = affectedByImage(entries, image.id, image, imageMatchesTerm).map((e) => e.name);
    expect(names).toEqual(['by-name', 'by-tag', 'by-id', 'by-status']);
  });

  it('matches only id terms and resolved AMIs when the image is no longer listed', () => {
    const names = affectedByImage(entries, image.id, undefined, imageMatchesTerm).map(
      (e) => e.name
    );
    expect(names).toEqual(['by-id', 'by-status']);
  });
});

describe('affectedByIam', () => {
  const entries = [
    entry({ name: 'node-role', nodeRole: 'KarpenterNodeRole-prod' }),
    entry({
      name: 'profile',
      instanceProfile: 'arn:aws:iam::111122223333:instance-profile/path/NodeProfile',
    }),
    entry({
      name: 'controller',
      controllerRoleArn: 'arn:aws:iam::111122223333:role/path/KarpenterController',
    }),
    entry({ name: 'untouched', nodeRole: 'OtherRole' }),
  ];

  it('matches node roles, instance profiles and controller roles, case-insensitively', () => {
    expect(
      affectedByIam(entries, {
        roleNames: ['karpenternoderole-prod'],
        instanceProfileNames: [],
      }).map((e) => e.name)
    ).toEqual(['node-role']);
    expect(
      affectedByIam(entries, { roleNames: [], instanceProfileNames: ['NodeProfile'] }).map(
        (e) => e.name
      )
    ).toEqual(['profile']);
    expect(
      affectedByIam(entries, { roleNames: ['KarpenterController'], instanceProfileNames: [] }).map(
        (e) => e.name
      )
    ).toEqual(['controller']);
  });
});

describe('helpers', () => {
  it('reduces IAM names, paths and ARNs to a lower-case name', () => {
    expect(iamNameKey('arn:aws:iam::1:role/a/B')).toBe('b');
    expect(iamNameKey('Role')).toBe('role');
  });
});
