import { defineCheck, type FindingDraft, forEachNodeClass, readFaultOf } from '../check.js';
import type { EbsKeyReadout, KmsGrant, KmsKey } from '../facts/aws.js';
import type { PermissionFacts } from '../facts/permissions.js';
import { accountOfArn } from '../iam/arns.js';
import {
  describeDenial,
  describeInconclusive,
  interpretGroup,
  unsimulatedReadFault,
} from '../iam/interpret.js';
import { factsKeyOf } from '../inventory.js';
import { type EbsVolumeRef, ebsKeyUsesOf } from '../kms/ebs-key-uses.js';
import { evaluateKeyPolicy } from '../kms/key-policy.js';
import {
  awsManagedEbsAliasMismatch,
  EBS_LAUNCH_KMS_ACTIONS,
  isAwsManagedEbsAlias,
  type LaunchPlace,
  launchKmsContext,
} from '../kms/launch-access.js';
import type { ReadFault } from '../model.js';
import type { Partition } from '../region.js';

const GROUP = 'ebs-kms-key';
const TROUBLESHOOTING =
  'https://karpenter.sh/docs/troubleshooting/#node-terminates-before-ready-on-failed-encrypted-ebs-volume';

type Draft = Omit<FindingDraft, 'resource'>;

const FLEET_KEY_ACCESS =
  'https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/ec2-fleet-prerequisites.html#ec2-fleet-service-linked-roles-access-to-cmks';
const SERVICE_LINKED_ROLES_NOT_EVALUATED = `Not evaluated: whether the service-linked roles AWSServiceRoleForEC2Fleet and AWSServiceRoleForEC2Spot may use the key, which AWS asks for when a fleet launches an encrypted AMI or EBS snapshot with a customer managed key (${FLEET_KEY_ACCESS}).`;

/** Where the class's volumes use one key, for messages and evidence. */
interface KeyUse {
  readonly reference: string;
  readonly volumes: readonly EbsVolumeRef[];
  /** The account's default EBS key (no kmsKeyID). */
  readonly accountDefault: boolean;
}

function volumesText(use: KeyUse): string {
  const devices = use.volumes.map((volume) =>
    volume.deviceName === undefined ? volume.path : `${volume.deviceName} (${volume.path})`
  );
  const source = use.accountDefault
    ? `the account's default EBS key ${use.reference}`
    : `KMS key ${use.reference}`;
  return `${source}, used by ${devices.join(', ')}`;
}

function evidenceOf(use: KeyUse, key?: KmsKey): Record<string, unknown> {
  return {
    key: use.reference,
    ...(key === undefined ? {} : { keyArn: key.arn, keyState: key.state, keyManager: key.manager }),
    accountDefault: use.accountDefault,
    volumes: use.volumes.map((volume) => volume.deviceName ?? volume.path),
  };
}

/** A key EBS can encrypt with: enabled, symmetric, for encryption (https://docs.aws.amazon.com/ebs/latest/userguide/ebs-encryption.html). */
function unusableReason(key: KmsKey, region: string | undefined): string | undefined {
  if (key.state !== 'Enabled') {
    const deletion =
      key.state === 'PendingDeletion' && key.deletionDate !== undefined
        ? ` (scheduled for deletion on ${key.deletionDate})`
        : '';
    return `the key is ${key.state}${deletion}, not Enabled`;
  }
  if (key.usage !== undefined && key.usage !== 'ENCRYPT_DECRYPT')
    return `the key's usage is ${key.usage}, and EBS needs an ENCRYPT_DECRYPT key`;
  if (key.spec !== undefined && key.spec !== 'SYMMETRIC_DEFAULT')
    return `the key is ${key.spec}, and EBS needs a symmetric (SYMMETRIC_DEFAULT) key`;
  const keyRegion = key.arn.split(':')[3];
  if (region !== undefined && keyRegion !== undefined && keyRegion !== '' && keyRegion !== region)
    return `the key is in ${keyRegion}, and EBS needs a key of the volume's region ${region}`;
  return undefined;
}

/**
 * The role's grant for an action (`kms:ReEncryptFrom` → operation `ReEncryptFrom`): an
 * unconstrained one allows it; one constrained to an encryption context allows only requests that
 * carry that context, which the scanner cannot know of EC2's requests.
 */
function grantFor(
  grants: readonly KmsGrant[],
  principalArn: string,
  action: string
): { readonly constrained: boolean; readonly grant: KmsGrant } | undefined {
  const operation = action.slice('kms:'.length);
  const covering = grants.filter(
    (grant) => grant.granteePrincipal === principalArn && grant.operations.includes(operation)
  );
  const open = covering.find((grant) => !grant.constrained);
  if (open !== undefined) return { constrained: false, grant: open };
  const constrained = covering[0];
  return constrained === undefined ? undefined : { constrained: true, grant: constrained };
}

function constrainedGrantText(grant: KmsGrant): string {
  return `grant ${grant.grantId ?? '(no id)'} to the role allows it only with the encryption context ${grant.constraints ?? 'its constraint names'}, and whether EC2's requests carry that context cannot be known`;
}

interface AccessProblem {
  readonly status: 'fail' | 'error';
  readonly action: string;
  readonly why: string;
  /** Set on an `error` that is one because an input could not be read (not a conclusion). */
  readonly readFault?: ReadFault | undefined;
}

/** The controller role's access to one enabled customer key, action by action. */
function accessProblems(
  key: KmsKey,
  policy: string,
  grants: readonly KmsGrant[] | undefined,
  facts: PermissionFacts,
  principalArn: string,
  scope: { readonly region: string; readonly accountId: string; readonly partition: Partition }
): AccessProblem[] {
  const verdict = interpretGroup(
    { ...facts, simulations: facts.simulations.filter((item) => item.request.group === GROUP) },
    GROUP
  );
  const problems: AccessProblem[] = [];
  for (const action of EBS_LAUNCH_KMS_ACTIONS) {
    const byPolicy = evaluateKeyPolicy(policy, {
      principalArn,
      accountId: scope.accountId,
      partition: scope.partition,
      keyArn: key.arn,
      action,
      context: launchKmsContext(scope, action),
    });
    if (byPolicy === undefined) {
      problems.push({
        status: 'error',
        action,
        why: 'the key policy is not a JSON policy document',
      });
      break;
    }
    const grant = grants === undefined ? undefined : grantFor(grants, principalArn, action);
    const granted = grant !== undefined && !grant.constrained;
    const onlyConstrained = grant?.constrained === true ? grant.grant : undefined;
    const denial = verdict.denials.find(
      (item) => item.action.toLowerCase() === action.toLowerCase() && item.resource === key.arn
    );
    const open = verdict.inconclusive.find(
      (item) => item.action.toLowerCase() === action.toLowerCase() && item.resource === key.arn
    );
    const simulated =
      verdict.evaluated > 0 &&
      facts.simulations.some(
        (item) =>
          item.request.group === GROUP &&
          item.results.status === 'ok' &&
          item.results.value.some(
            (result) =>
              result.action.toLowerCase() === action.toLowerCase() && result.resource === key.arn
          )
      );
    const hardDeny =
      denial !== undefined && (denial.decision === 'explicitDeny' || denial.deniedBy === 'scp');
    switch (byPolicy.outcome) {
      case 'denied':
        problems.push({
          status: 'fail',
          action,
          why: `the key policy denies it (statement ${byPolicy.statement})`,
        });
        break;
      case 'unknown':
        if (!granted)
          problems.push({
            status: 'error',
            action,
            why: `the key policy's answer depends on what the scanner cannot evaluate (${byPolicy.open.join('; ')})`,
          });
        break;
      case 'not-granted':
        if (onlyConstrained !== undefined)
          problems.push({
            status: 'error',
            action,
            why: `no key policy statement allows the role or the account, and ${constrainedGrantText(onlyConstrained)}`,
          });
        else if (!granted)
          problems.push({
            status: 'fail',
            action,
            why: 'no key policy statement allows the role or the account (IAM policies cannot grant it then)',
          });
        break;
      case 'allows-principal':
        if (hardDeny) problems.push({ status: 'fail', action, why: describeDenial(denial) });
        break;
      case 'delegates-to-iam':
        if (hardDeny) problems.push({ status: 'fail', action, why: describeDenial(denial) });
        else if (granted) break;
        else if (denial !== undefined && onlyConstrained !== undefined)
          problems.push({
            status: 'error',
            action,
            why: `the key policy leaves it to IAM (statement ${byPolicy.statement}), ${describeDenial(denial)}, and ${constrainedGrantText(onlyConstrained)}`,
          });
        else if (denial !== undefined)
          problems.push({
            status: 'fail',
            action,
            why: `the key policy leaves it to IAM (statement ${byPolicy.statement}), and ${describeDenial(denial)}`,
          });
        else if (open !== undefined)
          problems.push({ status: 'error', action, why: describeInconclusive(open) });
        else if (!simulated) {
          const reason = verdict.unsimulated[0]?.message ?? 'not simulated';
          problems.push({
            status: 'error',
            action,
            why: `the key policy leaves it to IAM (statement ${byPolicy.statement}), and the role's IAM policies could not be simulated: ${reason}`,
            readFault: unsimulatedReadFault(verdict.unsimulated),
          });
        }
        break;
    }
  }
  return problems;
}

function customerKeyDraft(
  use: KeyUse,
  readout: EbsKeyReadout,
  key: KmsKey,
  inventoryFacts: PermissionFacts | undefined,
  scope: { readonly region: string; readonly partition: Partition; readonly cluster: string }
): Draft {
  const evidence = evidenceOf(use, key);
  const lookup = readout.lookup.status === 'ok' ? readout.lookup.value : undefined;
  const what = volumesText(use);
  if (inventoryFacts === undefined) {
    return {
      status: 'notice',
      message: `${what}, is enabled; whether Karpenter's controller role may use it was not evaluated: this scan has no controller role (scan the cluster, or give --controller-role with --controller-policy).`,
      evidence: { ...evidence, reason: 'access-not-evaluated' },
    };
  }
  const role = inventoryFacts.controllerRole;
  if (role.status !== 'found') {
    return {
      status: 'error',
      message: `${what}, is enabled; whether Karpenter's controller may use it is unknown: its role is unknown (see controller-role-found).`,
      evidence: { ...evidence, reason: 'controller-role-unknown' },
      ...(role.status === 'unavailable'
        ? { readFault: readFaultOf("Karpenter's controller role", role) }
        : {}),
      causedBy: {
        checkId: 'controller-role-found',
        resource: { cluster: scope.cluster, kind: 'Cluster', name: scope.cluster },
      },
    };
  }
  const accountId = accountOfArn(role.roleArn) ?? '';
  const keyAccount = accountOfArn(key.arn);
  const grants = lookup?.grants?.status === 'ok' ? lookup.grants.value : undefined;
  const grantsNote =
    lookup?.grants?.status === 'unavailable'
      ? ` Its grants could not be read (${lookup.grants.message}); a grant to the role would make the key usable whatever the policies say (grant the scanner kms:ListGrants on the key to know).`
      : '';
  const policy = lookup?.policy;
  if (policy === undefined || policy.status === 'unavailable') {
    const crossAccount = keyAccount !== undefined && keyAccount !== accountId;
    return crossAccount
      ? {
          status: 'notice',
          message: `${what}, is enabled and belongs to account ${keyAccount}: KMS lets no other account read a key policy (GetKeyPolicy is not cross-account), so whether it allows controller role ${role.roleArn} cannot be known from account ${accountId}. Check in account ${keyAccount} that the key policy allows the role (or account ${accountId}) ${EBS_LAUNCH_KMS_ACTIONS.join(', ')}.${grantsNote}`,
          evidence: { ...evidence, controllerRole: role.roleArn, reason: 'cross-account-policy' },
        }
      : {
          status: 'error',
          message: `${what}, is enabled, but its key policy could not be read (${policy?.status === 'unavailable' ? policy.message : 'not read'}), so whether controller role ${role.roleArn} may use it is unknown. Allow the scanner kms:GetKeyPolicy on ${key.arn} (in its IAM policy and, unless the key policy defers to IAM, in the key policy).${grantsNote}`,
          evidence: { ...evidence, controllerRole: role.roleArn, reason: 'policy-unreadable' },
          readFault: readFaultOf(`the key policy of ${key.arn} (kms:GetKeyPolicy)`, policy),
        };
  }
  const problems = accessProblems(key, policy.value, grants, inventoryFacts, role.roleArn, {
    region: scope.region,
    partition: scope.partition,
    accountId,
  });
  const failures = problems.filter((problem) => problem.status === 'fail');
  if (failures.length > 0) {
    return {
      status: 'fail',
      message: `Controller role ${role.roleArn} may not use ${what}: ${failures.map((item) => `${item.action}: ${item.why}`).join('; ')}. EC2 then launches each instance and terminates it before it is ready (Client.InternalError), again and again.${grantsNote}`,
      remediation: `Allow the role ${EBS_LAUNCH_KMS_ACTIONS.join(', ')} on the key (kms:CreateGrant with the condition Bool kms:GrantIsForAWSResource=true): in the key policy, or in the role's IAM policy where the key policy allows the account (arn:${scope.partition}:iam::${accountId}:root). See ${TROUBLESHOOTING}.`,
      evidence: {
        ...evidence,
        controllerRole: role.roleArn,
        reason: 'access-denied',
        deniedActions: failures.map((item) => item.action),
      },
    };
  }
  if (problems.length > 0) {
    // A conclusion among the problems (an inconclusive key, a constrained grant) stays one.
    const faults = problems.map((problem) => problem.readFault);
    const readFault = faults.every((fault) => fault !== undefined) ? faults[0] : undefined;
    return {
      status: 'error',
      message: `Whether controller role ${role.roleArn} may use ${what}, could not be verified: ${problems.map((item) => `${item.action}: ${item.why}`).join('; ')}.${grantsNote}`,
      evidence: { ...evidence, controllerRole: role.roleArn, reason: 'access-unknown' },
      ...(readFault === undefined ? {} : { readFault }),
    };
  }
  return {
    status: 'pass',
    message: `${what}, is enabled, and controller role ${role.roleArn} may use it (${EBS_LAUNCH_KMS_ACTIONS.join(', ')}). ${SERVICE_LINKED_ROLES_NOT_EVALUATED}`,
    evidence: { ...evidence, controllerRole: role.roleArn, reason: 'usable' },
  };
}

/** The finding for one key the class's volumes use. */
function keyDraft(
  use: KeyUse,
  readout: EbsKeyReadout | undefined,
  permissions: PermissionFacts | undefined,
  scope: {
    readonly region?: string;
    readonly accountId?: string;
    readonly partition: Partition;
    readonly cluster: string;
  }
): Draft {
  const what = volumesText(use);
  const evidence = evidenceOf(use);
  const place: LaunchPlace = {
    ...(scope.region === undefined ? {} : { region: scope.region }),
    ...(scope.accountId === undefined ? {} : { accountId: scope.accountId }),
  };
  const mismatch = awsManagedEbsAliasMismatch(use.reference, place);
  if (mismatch !== undefined) {
    return {
      status: 'fail',
      message: `${what}, is the AWS managed EBS key of another place: ${mismatch}. EC2 cannot encrypt the volumes with it, so every launch of the class fails.`,
      remediation: `Use alias/aws/ebs without an ARN (the launch's own account and region), or a key of ${[scope.region, scope.accountId === undefined ? undefined : `account ${scope.accountId}`].filter((part) => part !== undefined).join(', ')} that the controller role may use.`,
      evidence: { ...evidence, reason: 'aws-managed-elsewhere' },
    };
  }
  if (isAwsManagedEbsAlias(use.reference, place)) {
    return {
      status: 'pass',
      message: `${what}, is the AWS managed key for EBS: every principal of the account may use it through EC2.`,
      evidence: { ...evidence, reason: 'aws-managed' },
    };
  }
  if (readout === undefined) {
    return {
      status: 'error',
      message: `Not evaluated: ${what}, was not read.`,
      evidence: { ...evidence, reason: 'not-read' },
      readFault: readFaultOf('the KMS key (kms:DescribeKey)', undefined),
    };
  }
  if (readout.lookup.status === 'unavailable') {
    return {
      status: 'error',
      message: `${what}: the key could not be described (${readout.lookup.message}). Allow the scanner kms:DescribeKey on the key (its key policy must allow it too, or defer to IAM).`,
      evidence: { ...evidence, reason: readout.lookup.reason },
      readFault: readFaultOf('the KMS key (kms:DescribeKey)', readout.lookup),
    };
  }
  const lookup = readout.lookup.value;
  if (lookup === undefined) {
    return {
      status: 'fail',
      message: `${what}: no such key in ${scope.region ?? 'the region'} (KMS NotFoundException). Every launch of the class fails to create its volume.`,
      remediation:
        "Name an existing key (key id, key ARN, alias/NAME or alias ARN) of the cluster's region in kmsKeyID, or create the key.",
      evidence: { ...evidence, reason: 'not-found' },
    };
  }
  const { key } = lookup;
  const unusable = unusableReason(key, scope.region);
  if (unusable !== undefined) {
    return {
      status: 'fail',
      message: `${what}: ${unusable}. EC2 launches each instance and terminates it before it is ready (Client.InternalError), so the class never gets a node.`,
      remediation:
        key.state === 'PendingDeletion'
          ? `Cancel the key's deletion (aws kms cancel-key-deletion --key-id ${key.arn}, then enable it), or point kmsKeyID at another key.`
          : key.state === 'Disabled'
            ? `Enable the key (aws kms enable-key --key-id ${key.arn}), or point kmsKeyID at another key.`
            : 'Point kmsKeyID (or the account default, aws ec2 modify-ebs-default-kms-key-id) at an enabled symmetric encryption key of the region.',
      evidence: { ...evidence, ...evidenceOf(use, key), reason: 'key-unusable' },
    };
  }
  const keyAccount = accountOfArn(key.arn);
  if (
    key.manager !== 'CUSTOMER' &&
    scope.accountId !== undefined &&
    keyAccount !== undefined &&
    keyAccount !== scope.accountId
  ) {
    return {
      status: 'fail',
      message: `${what}: the key is an AWS managed key of account ${keyAccount}, and an AWS managed key serves only its own account (${scope.accountId} launches here). EC2 cannot encrypt the volumes with it, so every launch of the class fails.`,
      remediation: `Point kmsKeyID at a key of account ${scope.accountId} (alias/aws/ebs, or a customer managed key the controller role may use).`,
      evidence: { ...evidenceOf(use, key), reason: 'aws-managed-elsewhere' },
    };
  }
  if (key.manager !== 'CUSTOMER') {
    return {
      status: 'pass',
      message: `${what}, is an enabled AWS managed key: every principal of the account may use it through EC2.`,
      evidence: { ...evidenceOf(use, key), reason: 'aws-managed' },
    };
  }
  return customerKeyDraft(use, readout, key, permissions, {
    region: scope.region ?? key.arn.split(':')[3] ?? '',
    partition: scope.partition,
    cluster: scope.cluster,
  });
}

/**
 * The KMS keys of the class's EBS volumes are usable at launch: each key (kmsKeyID, or the
 * account's default EBS key for volumes encrypted without one) exists, is enabled and symmetric,
 * and the key policy (with the controller role's IAM policies where it defers to them, and grants)
 * lets Karpenter's controller role use it.
 */
export const ebsKmsKeyUsable = defineCheck({
  id: 'ebs-kms-key-usable',
  title: 'KMS keys of the EBS volumes are usable by the launch',
  group: 'aws',
  severity: 'critical',
  inputs: ['aws'],
  uses: ['permissions'],
  rationale:
    "EC2 creates each encrypted volume with the caller's KMS permissions. When the key is disabled, pending deletion or missing, or its policy does not let the controller role create grants and generate data keys, the instance starts and is terminated before it is ready with Client.InternalError; Karpenter launches again, and the NodePool never gets a node.",
  remediation:
    'Use an enabled symmetric key of the region, and let the controller role use it: kms:CreateGrant (kms:GrantIsForAWSResource=true), kms:Decrypt, kms:DescribeKey, kms:GenerateDataKeyWithoutPlaintext and kms:ReEncrypt* in the key policy, or in its IAM policy where the key policy allows the account.',
  references: [
    '#1407',
    '#3767',
    '#933',
    TROUBLESHOOTING,
    'https://docs.aws.amazon.com/ebs/latest/userguide/ebs-encryption-requirements.html',
    'https://docs.aws.amazon.com/ebs/latest/userguide/encryption-by-default.html',
    'https://docs.aws.amazon.com/kms/latest/developerguide/key-policy-default.html',
    'https://docs.aws.amazon.com/kms/latest/developerguide/key-state.html',
    'https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/ec2-fleet-prerequisites.html',
  ],
  material: ['key', 'reason', 'deniedActions'],
  evaluate: (inventory) =>
    forEachNodeClass(inventory, (nodeClass, { entry, resource, cluster }) => {
      const key = factsKeyOf(entry);
      const read = inventory.awsFacts.get(key)?.ebsKeys;
      if (read?.status === 'unavailable') {
        return [
          {
            status: 'error',
            resource,
            message: `Not evaluated: the KMS keys of the class's EBS volumes could not be read (${read.message}).`,
            evidence: { reason: read.reason },
            readFault: readFaultOf("the KMS keys of the class's EBS volumes", read),
          },
        ];
      }
      const facts = read?.value;
      if (facts === undefined) {
        return [
          {
            status: 'error',
            resource,
            message:
              "Not evaluated: the KMS keys of the class's EBS volumes were not read (this scan's AWS source reads no EBS encryption facts).",
            evidence: { reason: 'not-read' },
          },
        ];
      }
      const uses = ebsKeyUsesOf(nodeClass.spec);
      const keyUses: KeyUse[] = [...uses.explicit].map(([reference, volumes]) => ({
        reference,
        volumes,
        accountDefault: false,
      }));
      const drafts: Draft[] = [];
      const defaultVolumes = [...uses.defaultKey, ...uses.defaultKeyIfEncryptedByDefault];
      if (defaultVolumes.length > 0) {
        const defaults = facts.defaults;
        if (defaults === undefined) {
          drafts.push({
            status: 'not-applicable',
            discriminator: 'account-default',
            message: `The account's EBS encryption settings for ${cluster.region ?? 'the region'} were not recorded by this scan's source, so the default key of ${defaultVolumes.map((volume) => volume.deviceName ?? volume.path).join(', ')} cannot be judged.`,
            evidence: { reason: 'defaults-not-recorded' },
          });
        } else if (defaults.status === 'unavailable') {
          drafts.push({
            status: 'error',
            discriminator: 'account-default',
            message: `The account's default EBS key could not be read (${defaults.message}). Allow the scanner ec2:GetEbsEncryptionByDefault and ec2:GetEbsDefaultKmsKeyId.`,
            evidence: { reason: defaults.reason },
            readFault: readFaultOf("the account's default EBS key", defaults),
          });
        } else {
          const volumes = defaults.value.encryptedByDefault ? defaultVolumes : uses.defaultKey;
          if (volumes.length > 0) {
            keyUses.push({
              reference: defaults.value.defaultKmsKeyId,
              volumes,
              accountDefault: true,
            });
          }
        }
      }
      const permissions = inventory.inputs.has('permissions')
        ? inventory.permissions.get(key)
        : undefined;
      const controllerRole = permissions?.controllerRole;
      const accountId =
        (cluster.aws?.status === 'ok' ? cluster.aws.value.accountId : undefined) ??
        (controllerRole?.status === 'found' ? accountOfArn(controllerRole.roleArn) : undefined);
      for (const use of keyUses) {
        const readout = facts.keys.find((item) => item.reference === use.reference);
        drafts.push({
          ...keyDraft(use, readout, permissions, {
            ...(cluster.region === undefined ? {} : { region: cluster.region }),
            ...(accountId === undefined ? {} : { accountId }),
            partition: cluster.partition,
            cluster: entry.cluster,
          }),
          discriminator: use.accountDefault ? 'account-default' : `kmsKeyID:${use.reference}`,
          ...(use.accountDefault || use.volumes[0] === undefined
            ? {}
            : { location: { path: `${use.volumes[0].path}.ebs.kmsKeyID` } }),
        });
      }
      if (drafts.length === 0) {
        drafts.push({
          status: 'pass',
          message:
            'No EBS volume of the class is encrypted with a KMS key (the account does not encrypt by default, and no mapping sets encrypted or kmsKeyID).',
          evidence: { reason: 'unencrypted' },
        });
      }
      return drafts.map((draft) => ({ ...draft, resource }));
    }),
});
