import { defaultBlockDeviceMappings, effectiveAmiFamily } from '../ami-family.js';
import { defineCheck, forEachNodeClass } from '../check.js';
import type { EC2NodeClassSpec } from '../schema.js';
import { withAvailableImages } from './support/aws-facts.js';

const BINARY_SUFFIXES: Readonly<Record<string, number>> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};
const DECIMAL_SUFFIXES: Readonly<Record<string, number>> = {
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
};

/**
 * A Kubernetes quantity as Karpenter sends it to EC2: bytes / 2^30, rounded up (`200G` → 187 GiB).
 * Undefined when it is not a quantity.
 */
export function volumeSizeGiB(size: string | number): number | undefined {
  const text = String(size).trim();
  const match = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$/.exec(text);
  if (!match) return undefined;
  const [, amount, suffix = ''] = match;
  const multiplier = BINARY_SUFFIXES[suffix] ?? DECIMAL_SUFFIXES[suffix] ?? 1;
  return Math.ceil((Number(amount) * multiplier) / 2 ** 30);
}

interface Mapping {
  readonly deviceName?: string;
  readonly volumeSize?: string | number;
}

function mappingsOf(spec: EC2NodeClassSpec): { mappings: readonly Mapping[]; defaults: boolean } {
  const explicit = spec.blockDeviceMappings ?? [];
  if (explicit.length > 0) {
    return {
      mappings: explicit.map((mapping) => ({
        ...(mapping.deviceName === undefined ? {} : { deviceName: mapping.deviceName }),
        ...(mapping.ebs?.volumeSize === undefined ? {} : { volumeSize: mapping.ebs.volumeSize }),
      })),
      defaults: false,
    };
  }
  // Karpenter picks the defaults of spec.amiFamily when set (Custom: none), else the alias' family.
  return { mappings: defaultBlockDeviceMappings(effectiveAmiFamily(spec)), defaults: true };
}

/** The volume EC2 creates for the image's root device is at least as large as its snapshot. */
export const rootVolumeFitsAmi = defineCheck({
  id: 'root-volume-fits-ami',
  title: "Root volume is at least as large as the image's root snapshot",
  group: 'aws',
  severity: 'high',
  inputs: ['aws'],
  rationale:
    "EC2 rejects a launch whose volume for the image's root device is smaller than the root snapshot (InvalidBlockDeviceMapping). Karpenter's validation shows this only as ValidationSucceeded=Unknown, while every node of the class fails to launch.",
  remediation:
    "Raise ebs.volumeSize of the block device mapping for the image's root device to at least the snapshot size.",
  references: ['#7928', '#8148'],
  material: ['images[].id', 'reason'],
  evaluate: (inventory) =>
    forEachNodeClass(inventory, ({ spec }, target) => {
      const { resource } = target;
      return withAvailableImages(target, (selection) => {
        const { mappings, defaults } = mappingsOf(spec);
        const compared = selection.selected.flatMap((item) => {
          const { rootDeviceName, rootVolumeSizeGiB } = item.image;
          if (rootDeviceName === undefined || rootVolumeSizeGiB === undefined) return [];
          const index = mappings.findIndex((mapping) => mapping.deviceName === rootDeviceName);
          const mapping = mappings[index];
          if (mapping?.volumeSize === undefined) return [];
          const requested = volumeSizeGiB(mapping.volumeSize);
          if (requested === undefined) return [];
          return [
            {
              item,
              index,
              requested,
              snapshot: rootVolumeSizeGiB,
              volumeSize: mapping.volumeSize,
            },
          ];
        });
        if (compared.length === 0) {
          return [
            {
              status: 'not-applicable',
              resource,
              message:
                selection.selected.length === 0
                  ? 'No image is selected (see ami-selector-resolves).'
                  : "No block device mapping overrides the selected images' root device (EC2 uses the snapshot size).",
            },
          ];
        }
        const small = compared.filter((entry) => entry.requested < entry.snapshot);
        if (small.length === 0) {
          return [
            {
              status: 'pass',
              resource,
              message: `Root volumes fit: ${compared.map((entry) => `${entry.item.image.id} ${entry.snapshot} GiB ≤ ${entry.requested} GiB`).join('; ')}.`,
            },
          ];
        }
        const first = small[0];
        return [
          {
            status: 'fail',
            resource,
            message: `Root volume too small: ${small.map((entry) => `${entry.item.image.id} has a ${entry.snapshot} GiB root snapshot on ${entry.item.image.rootDeviceName}, the NodeClass asks for ${entry.volumeSize} (${entry.requested} GiB)${defaults ? " (Karpenter's default mapping)" : ''}`).join('; ')}. EC2 rejects the launch with InvalidBlockDeviceMapping.`,
            evidence: {
              images: small.map((entry) => ({
                id: entry.item.image.id,
                rootDeviceName: entry.item.image.rootDeviceName,
                snapshotGiB: entry.snapshot,
                requestedGiB: entry.requested,
              })),
              defaultMappings: defaults,
            },
            ...(first && !defaults
              ? { location: { path: `spec.blockDeviceMappings[${first.index}].ebs.volumeSize` } }
              : {}),
          },
        ];
      });
    }),
});
