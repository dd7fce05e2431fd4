// Karpenter's choice among matching images (https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/providers/amifamily/ami.go, `amis()` + `compareAMI`):
// per architecture (per architecture and variant for aliases), a non-deprecated image over a
// deprecated one, then the newest CreationDate, then the greater Name. Times compare in seconds.
import type { AmiVariant, Image, ImageArchitecture, SelectedImage } from '../facts/aws.js';

const ARCHITECTURES: readonly string[] = ['x86_64', 'arm64'];

function seconds(text: string | undefined, fallback: number): number {
  if (text === undefined || text === '') return fallback;
  const time = Date.parse(text);
  return Number.isNaN(time) ? fallback : Math.floor(time / 1000);
}

/** Karpenter: deprecated when `DeprecationTime <= now`; no (or an unparsable) time never is. */
export function isDeprecated(image: Image, now: Date): boolean {
  return (
    seconds(image.deprecationTime, Number.POSITIVE_INFINITY) <= Math.floor(now.getTime() / 1000)
  );
}

/** Negative when `a` wins over `b`, 0 when Karpenter cannot tell them apart. */
function compareImages(a: SelectedImage, b: SelectedImage): number {
  if (a.deprecated !== b.deprecated) return a.deprecated ? 1 : -1;
  const aCreated = seconds(a.image.creationDate, Number.NEGATIVE_INFINITY);
  const bCreated = seconds(b.image.creationDate, Number.NEGATIVE_INFINITY);
  if (aCreated !== bCreated) return aCreated > bCreated ? -1 : 1;
  const aName = a.image.name ?? '';
  const bName = b.image.name ?? '';
  if (aName !== bName) return aName > bName ? -1 : 1;
  return 0;
}

/** Karpenter's status order: newest CreationDate first, then id. */
function statusOrder(a: SelectedImage, b: SelectedImage): number {
  const aCreated = seconds(a.image.creationDate, Number.NEGATIVE_INFINITY);
  const bCreated = seconds(b.image.creationDate, Number.NEGATIVE_INFINITY);
  if (aCreated !== bCreated) return aCreated > bCreated ? -1 : 1;
  return a.image.id < b.image.id ? -1 : a.image.id > b.image.id ? 1 : 0;
}

export interface ImageGroup {
  readonly images: readonly Image[];
  /** Alias queries: the variants each image id stands for. */
  readonly knownVariants?: Readonly<Record<string, readonly AmiVariant[]>>;
}

/**
 * The winners over the given query results, visited in order (on a tie the first seen stays, as
 * in Karpenter). Images of other architectures are ignored.
 */
export function selectImages(groups: readonly ImageGroup[], now: Date): SelectedImage[] {
  const winners = new Map<string, SelectedImage>();
  for (const { images, knownVariants } of groups) {
    for (const image of images) {
      if (image.architecture === undefined || !ARCHITECTURES.includes(image.architecture)) continue;
      const architecture = image.architecture as ImageArchitecture;
      const known = knownVariants?.[image.id] ?? [];
      const variants: readonly (AmiVariant | undefined)[] = known.length > 0 ? known : [undefined];
      for (const variant of variants) {
        const candidate: SelectedImage = {
          image,
          architecture,
          ...(variant === undefined ? {} : { variant }),
          deprecated: isDeprecated(image, now),
        };
        const key = `${architecture}/${variant ?? ''}`;
        const current = winners.get(key);
        if (current === undefined || compareImages(current, candidate) > 0) {
          winners.set(key, candidate);
        }
      }
    }
  }
  return [...winners.values()].sort(statusOrder);
}
