// The account's EBS encryption settings of a region: whether new volumes are encrypted by default,
// and the KMS key EC2 uses for a volume encrypted without one
// (https://docs.aws.amazon.com/ebs/latest/userguide/encryption-by-default.html). One descriptor
// like the region-wide lists' (fact-descriptors.ts): the live read, its IAM actions, what a
// snapshot records (`kms.ebsEncryptionDefaults.<region>`), the replay and the bench's answers.
import {
  GetEbsDefaultKmsKeyIdCommand,
  type GetEbsDefaultKmsKeyIdCommandOutput,
  GetEbsEncryptionByDefaultCommand,
  type GetEbsEncryptionByDefaultCommandOutput,
} from '@aws-sdk/client-ec2';
import * as z from 'zod';
import type { EbsEncryptionDefaults } from '../../core/facts/aws.js';
import { toSourceUnavailable } from './aws-errors.js';

type Send = (command: object) => Promise<unknown>;

/** `kms.ebsEncryptionDefaults.<region>`, in the two calls' own field names. */
const WorldEbsDefaultsSchema = z.looseObject({
  EbsEncryptionByDefault: z.boolean(),
  /** GetEbsDefaultKmsKeyId's `KmsKeyId`: an ARN, `alias/aws/ebs` unless the account changed it. */
  KmsKeyId: z.string().min(1),
});

type WorldEbsDefaults = z.output<typeof WorldEbsDefaultsSchema>;

/** An account that never changed them: no encryption by default, the AWS managed key. */
const ACCOUNT_DEFAULTS: WorldEbsDefaults = {
  EbsEncryptionByDefault: false,
  KmsKeyId: 'alias/aws/ebs',
};

export const EBS_ENCRYPTION_DEFAULTS = {
  method: 'getEbsEncryptionDefaults',
  actions: ['ec2:GetEbsEncryptionByDefault', 'ec2:GetEbsDefaultKmsKeyId'],
  /** The world file's `kms.ebsEncryptionDefaults`: region → settings (absent: the account's defaults). */
  worldField: z.record(z.string(), WorldEbsDefaultsSchema).optional(),

  /** Both calls, in the client's region. */
  async read(send: Send): Promise<EbsEncryptionDefaults> {
    const call = async <T>(action: string, command: object): Promise<T> => {
      try {
        return (await send(command)) as T;
      } catch (error) {
        throw toSourceUnavailable(action, error);
      }
    };
    const [byDefault, key] = await Promise.all([
      call<GetEbsEncryptionByDefaultCommandOutput | undefined>(
        'ec2:GetEbsEncryptionByDefault',
        new GetEbsEncryptionByDefaultCommand({})
      ),
      call<GetEbsDefaultKmsKeyIdCommandOutput | undefined>(
        'ec2:GetEbsDefaultKmsKeyId',
        new GetEbsDefaultKmsKeyIdCommand({})
      ),
    ]);
    // Unset fields are AWS's account defaults: no encryption by default, the AWS managed key.
    return EBS_ENCRYPTION_DEFAULTS.fromWorld({
      EbsEncryptionByDefault: byDefault?.EbsEncryptionByDefault ?? false,
      KmsKeyId: key?.KmsKeyId ?? 'alias/aws/ebs',
    });
  },

  isCommand: (command: unknown): boolean =>
    command instanceof GetEbsEncryptionByDefaultCommand ||
    command instanceof GetEbsDefaultKmsKeyIdCommand,

  /** A world's settings for a region; none recorded stands for an account's defaults, as AWS answers. */
  fromWorld: (recorded: WorldEbsDefaults | undefined): EbsEncryptionDefaults => ({
    encryptedByDefault: (recorded ?? ACCOUNT_DEFAULTS).EbsEncryptionByDefault,
    defaultKmsKeyId: (recorded ?? ACCOUNT_DEFAULTS).KmsKeyId,
  }),

  /** What a snapshot keeps: both answers, or nothing when either was not read. */
  recording() {
    let byDefault: boolean | undefined;
    let keyId: string | undefined;
    return {
      // As the live read takes them: an unset field is AWS's account default.
      record(command: unknown, output: unknown): void {
        if (command instanceof GetEbsEncryptionByDefaultCommand) {
          byDefault =
            (output as GetEbsEncryptionByDefaultCommandOutput | undefined)
              ?.EbsEncryptionByDefault ?? false;
        } else if (command instanceof GetEbsDefaultKmsKeyIdCommand) {
          keyId =
            (output as GetEbsDefaultKmsKeyIdCommandOutput | undefined)?.KmsKeyId ?? 'alias/aws/ebs';
        }
      },
      recorded: (): WorldEbsDefaults | undefined =>
        byDefault === undefined || keyId === undefined
          ? undefined
          : { EbsEncryptionByDefault: byDefault, KmsKeyId: keyId },
    };
  },

  /** The SDK output of one of the two commands for the recorded settings (the bench's answer). */
  answer(command: unknown, recorded: WorldEbsDefaults | undefined): object {
    // AWS always answers; a world that records nothing stands for an account's defaults.
    const settings = recorded ?? ACCOUNT_DEFAULTS;
    return command instanceof GetEbsEncryptionByDefaultCommand
      ? { EbsEncryptionByDefault: settings.EbsEncryptionByDefault }
      : { KmsKeyId: settings.KmsKeyId };
  },

  /** The action a command of this fact is reported under. */
  actionOf: (command: unknown): string =>
    command instanceof GetEbsEncryptionByDefaultCommand
      ? 'ec2:GetEbsEncryptionByDefault'
      : 'ec2:GetEbsDefaultKmsKeyId',
} as const;
