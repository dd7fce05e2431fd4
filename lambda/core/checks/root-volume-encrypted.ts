import { defaultRootDevices, effectiveAmiFamily } from '../ami-family.js';
import { defineCheck, type FindingDraft, forEachNodeClass } from '../check.js';
import type { BlockDeviceMapping, EC2NodeClassSpec } from '../schema.js';

/**
 * The mappings that hold the node's root data: those marked `rootVolume: true`; otherwise those
 * on the family's default root device(s); otherwise the only mapping, which replaces the defaults.
 */
function rootMappings(spec: EC2NodeClassSpec): { mapping: BlockDeviceMapping; index: number }[] {
  const indexed = (spec.blockDeviceMappings ?? []).map((mapping, index) => ({ mapping, index }));
  const flagged = indexed.filter(({ mapping }) => mapping.rootVolume === true);
  if (flagged.length > 0) return flagged;
  const devices = defaultRootDevices(effectiveAmiFamily(spec));
  const onRootDevice = indexed.filter(
    ({ mapping }) => mapping.deviceName !== undefined && devices.includes(mapping.deviceName)
  );
  if (onRootDevice.length > 0) return onRootDevice;
  return indexed.length === 1 ? indexed : [];
}

/**
 * The root volume is not explicitly unencrypted. Fails when a root mapping (see `rootMappings`)
 * sets `ebs.encrypted: false`. When `encrypted` is omitted, EC2 applies the account's EBS
 * encryption-by-default setting (or the snapshot's encryption); an offline scan cannot see that
 * setting, so the check passes and says so in its evidence rather than guessing. Without
 * blockDeviceMappings, Karpenter's family defaults are encrypted (`DefaultEBS.Encrypted = true`),
 * except for Custom, which uses the AMI's own mappings.
 */
export const rootVolumeEncrypted = defineCheck({
  id: 'root-volume-encrypted',
  title: 'Root volume is not explicitly unencrypted',
  group: 'spec',
  severity: 'medium',
  inputs: ['spec'],
  rationale:
    'An unencrypted root volume keeps container images, logs and pod ephemeral storage in clear on EBS. Many organizations deny unencrypted volumes with an SCP; EC2 then refuses every launch of the class, which Karpenter reports as RunInstancesAuthCheckFailed.',
  remediation:
    'Set ebs.encrypted: true on the root blockDeviceMappings entry (optionally with kmsKeyID).',
  references: [
    '#7927',
    'https://karpenter.sh/docs/concepts/nodeclasses/#specblockdevicemappings',
    'https://karpenter.sh/docs/troubleshooting/#node-terminates-before-ready-on-failed-encrypted-ebs-volume',
  ],
  material: ['deviceName'],
  evaluate: (inventory) =>
    forEachNodeClass(inventory, (nodeClass, { resource }) => {
      const { spec } = nodeClass;
      if ((spec.blockDeviceMappings ?? []).length === 0) {
        const family = effectiveAmiFamily(spec);
        return [
          {
            status: 'pass',
            resource,
            message:
              family === 'Custom'
                ? "No blockDeviceMappings: EC2 uses the custom AMI's own mappings, whose encryption an offline scan cannot see."
                : "No blockDeviceMappings: Karpenter's default root volume is encrypted.",
          },
        ];
      }
      const roots = rootMappings(spec);
      if (roots.length === 0) {
        return [
          {
            status: 'not-applicable',
            resource,
            message:
              'No blockDeviceMappings entry is identifiable as the root volume; mark it with rootVolume: true.',
          },
        ];
      }
      const drafts: FindingDraft[] = [];
      const deferred: string[] = [];
      for (const { mapping, index } of roots) {
        const path = `spec.blockDeviceMappings[${index}].ebs.encrypted`;
        const device = mapping.deviceName ?? `blockDeviceMappings[${index}]`;
        if (mapping.ebs?.encrypted === false) {
          drafts.push({
            status: 'fail',
            resource,
            message: `Root volume ${device} sets encrypted: false. SCPs commonly deny unencrypted volumes, which Karpenter reports as RunInstancesAuthCheckFailed.`,
            remediation: `Set spec.blockDeviceMappings[${index}].ebs.encrypted: true`,
            evidence: { deviceName: mapping.deviceName, encrypted: false },
            discriminator: path,
            location: { path },
          });
        } else if (mapping.ebs?.encrypted === undefined) {
          deferred.push(device);
        }
      }
      if (drafts.length > 0) return drafts;
      return [
        {
          status: 'pass',
          resource,
          message:
            deferred.length === 0
              ? 'The root volume is encrypted.'
              : `Root volume ${deferred.join(', ')} does not set encrypted; it follows the account's EBS encryption-by-default setting.`,
          ...(deferred.length === 0
            ? {}
            : {
                evidence: {
                  note: "encrypted is omitted: EC2 applies the account's EBS encryption-by-default (or the snapshot's encryption), which this scan does not read. Set encrypted: true to make it explicit.",
                  devices: deferred,
                },
              }),
        },
      ];
    }),
});
