// Before a live scan reports anything: the region is a region and the credentials work. Either
// failing is the user's setup, not a finding about a NodeClass: one stderr line and exit 2.
import { GetCallerIdentityCommand, type STSClient } from '@aws-sdk/client-sts';
import {
  awsErrorCode,
  type CredentialProblem,
  classifyCredentialError,
} from '../adapters/aws/aws-errors.js';
import type { AwsClients } from '../adapters/aws/clients.js';
import { regionProblem } from '../core/region.js';
import { ConfigError } from '../shared/errors.js';

export interface CallerIdentity {
  readonly account: string;
  readonly arn: string;
}

/** `--region`, else the SDK's default chain (AWS_REGION, profile); a usage error when neither. */
export async function resolveRegion(clients: AwsClients, flag?: string): Promise<string> {
  let region = flag;
  if (region === undefined) {
    try {
      region = await clients.ec2().config.region();
    } catch {
      // Falls through to the usage error below.
    }
  }
  if (!region) {
    throw new ConfigError('no AWS region: pass --region or set AWS_REGION / a profile region');
  }
  const problem = regionProblem(region);
  if (problem !== undefined) throw new ConfigError(problem);
  return region;
}

/** SDK messages can span lines and quote whole responses: one short line for stderr. */
function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

const ADVICE: Readonly<Record<CredentialProblem, (region: string) => string>> = {
  'no-credentials': () =>
    'no usable AWS credentials: set AWS_PROFILE or pass --profile, run `aws sso login`, or export AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY',
  expired: () =>
    'the AWS credentials have expired: refresh them (`aws sso login`, new session keys)',
  invalid: () => 'AWS does not accept these credentials: check the access key, profile or session',
  'region-disabled': (region) =>
    `region ${region} is not enabled for this account: enable it or pass another --region`,
  unreachable: (region) =>
    `cannot reach AWS STS in region ${region}: check --region and network access (proxy, VPC endpoints)`,
  refused: (region) => `AWS refused sts:GetCallerIdentity in region ${region}`,
};

/**
 * Calls sts:GetCallerIdentity with the scan's credentials in its region. It needs no IAM
 * permission (it cannot be denied), so it is declared by no role: any failure is the setup.
 */
export async function verifyAwsAccess(
  sts: Pick<STSClient, 'send'>,
  region: string
): Promise<CallerIdentity> {
  let identity: { Account?: string | undefined; Arn?: string | undefined };
  try {
    identity = await sts.send(new GetCallerIdentityCommand({}));
  } catch (error) {
    const detail = oneLine(error instanceof Error ? error.message : String(error));
    throw new ConfigError(
      `${ADVICE[classifyCredentialError(error)](region)} (${awsErrorCode(error)}${detail === '' ? '' : `: ${detail}`})`,
      { cause: error }
    );
  }
  if (!identity.Account) {
    throw new ConfigError('sts:GetCallerIdentity returned no account');
  }
  return { account: identity.Account, arn: identity.Arn ?? '' };
}
