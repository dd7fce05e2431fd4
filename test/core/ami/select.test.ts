import { describe, expect, it } from 'vitest';
import { isDeprecated, selectImages } from '../../../lambda/core/ami/select.js';
import { anImage, SCAN_TIME } from '../../support/aws-builders.js';

const now = SCAN_TIME;

describe('selectImages', () => {
  it('picks the newest CreationDate per architecture and ignores other architectures', () => {
    const selected = selectImages(
      [
        {
          images: [
            anImage({ id: 'ami-old', creationDate: '2026-09-01T00:00:00Z' }),
            anImage({ id: 'ami-new', creationDate: '2026-10-01T00:00:00Z' }),
            anImage({ id: 'ami-arm', architecture: 'arm64', creationDate: '2026-08-01T00:00:00Z' }),
            anImage({ id: 'ami-i386', architecture: 'i386', creationDate: '2026-12-01T00:00:00Z' }),
          ],
        },
      ],
      now
    );
    expect(selected.map((item) => item.image.id)).toEqual(['ami-new', 'ami-arm']);
  });

  it('prefers a non-deprecated image over a newer deprecated one', () => {
    const selected = selectImages(
      [
        {
          images: [
            anImage({
              id: 'ami-dep',
              creationDate: '2026-10-01T00:00:00Z',
              deprecationTime: '2026-10-15T00:00:00Z',
            }),
            anImage({ id: 'ami-ok', creationDate: '2026-09-01T00:00:00Z' }),
          ],
        },
      ],
      now
    );
    expect(selected.map((item) => [item.image.id, item.deprecated])).toEqual([['ami-ok', false]]);
  });

  it('keeps a deprecated image when nothing else exists, flagged', () => {
    const [only] = selectImages(
      [{ images: [anImage({ deprecationTime: '2026-10-15T00:00:00Z' })] }],
      now
    );
    expect(only?.deprecated).toBe(true);
  });

  it('breaks CreationDate ties (to the second) by the greater name', () => {
    const selected = selectImages(
      [
        {
          images: [
            anImage({ id: 'ami-a', name: 'node-a', creationDate: '2026-10-01T00:00:00.100Z' }),
            anImage({ id: 'ami-b', name: 'node-b', creationDate: '2026-10-01T00:00:00.900Z' }),
          ],
        },
      ],
      now
    );
    expect(selected[0]?.image.id).toBe('ami-b');
  });

  it('selects one image per variant for alias queries', () => {
    const selected = selectImages(
      [
        {
          images: [anImage({ id: 'ami-std' }), anImage({ id: 'ami-gpu' })],
          knownVariants: { 'ami-std': ['standard'], 'ami-gpu': ['nvidia', 'neuron'] },
        },
      ],
      now
    );
    expect(selected.map((item) => `${item.image.id}/${item.variant}`).sort()).toEqual([
      'ami-gpu/neuron',
      'ami-gpu/nvidia',
      'ami-std/standard',
    ]);
  });

  it('treats DeprecationTime <= now as deprecated', () => {
    expect(isDeprecated(anImage({ deprecationTime: now.toISOString() }), now)).toBe(true);
    expect(isDeprecated(anImage({ deprecationTime: '2026-11-01T00:00:01Z' }), now)).toBe(false);
    expect(isDeprecated(anImage(), now)).toBe(false);
  });
});
