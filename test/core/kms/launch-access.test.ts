import { describe, expect, it } from 'vitest';
import { evaluateKeyPolicy } from '../../../lambda/core/kms/key-policy.js';
import {
  awsManagedEbsAliasMismatch,
  isAwsManagedEbsAlias,
  launchKmsContext,
  namesAwsManagedEbsAlias,
} from '../../../lambda/core/kms/launch-access.js';
import { type Partition, partitionOf } from '../../../lambda/core/region.js';

const ACCOUNT = '111122223333';
const ROLE = `arn:aws:iam::${ACCOUNT}:role/Karpenter`;

/** Karpenter's troubleshooting statement: anyone of the account, through EC2 of the region. */
function allowThroughEbs(viaService: string): string {
  return JSON.stringify({
    Statement: [
      {
        Sid: 'Allow access through EBS',
        Effect: 'Allow',
        Principal: { AWS: '*' },
        Action: ['kms:Decrypt', 'kms:GenerateDataKeyWithoutPlaintext', 'kms:CreateGrant'],
        Resource: '*',
        Condition: {
          StringEquals: { 'kms:ViaService': viaService, 'kms:CallerAccount': ACCOUNT },
        },
      },
    ],
  });
}

describe('launchKmsContext', () => {
  it.each([
    ['us-east-1', 'ec2.us-east-1.amazonaws.com'],
    ['cn-north-1', 'ec2.cn-north-1.amazonaws.com.cn'],
    ['eusc-de-east-1', 'ec2.eusc-de-east-1.amazonaws.eu'],
    ['us-iso-east-1', 'ec2.us-iso-east-1.c2s.ic.gov'],
    ['us-isob-east-1', 'ec2.us-isob-east-1.sc2s.sgov.gov'],
  ])('names EC2 of %s by its endpoint, %s', (region, viaService) => {
    // Arrange
    const partition: Partition = partitionOf(region);
    const scope = { region, accountId: ACCOUNT, partition };

    // Act
    const context = launchKmsContext(scope, 'kms:Decrypt');

    // Assess
    expect(context['kms:ViaService']).toBe(viaService);
  });

  it.each([
    ['eusc-de-east-1', 'amazonaws.eu'],
    ['us-iso-east-1', 'c2s.ic.gov'],
  ])('lets the "Allow access through EBS" statement of %s allow the launch', (region, suffix) => {
    // Arrange
    const partition = partitionOf(region);
    const scope = { region, accountId: ACCOUNT, partition };
    const policy = allowThroughEbs(`ec2.${region}.${suffix}`);
    const commercialSpelling = allowThroughEbs(`ec2.${region}.amazonaws.com`);
    const request = {
      principalArn: ROLE.replace('arn:aws:', `arn:${partition}:`),
      ...scope,
      keyArn: `arn:${partition}:kms:${region}:${ACCOUNT}:key/k-1`,
      action: 'kms:Decrypt',
      context: launchKmsContext(scope, 'kms:Decrypt'),
    };

    // Act
    const verdict = evaluateKeyPolicy(policy, request);
    const wrongSuffix = evaluateKeyPolicy(commercialSpelling, request);

    // Assess
    expect(verdict?.outcome).toBe('allows-principal');
    expect(wrongSuffix?.outcome).toBe('not-granted');
  });
});

describe('the AWS managed EBS key', () => {
  const HERE = { region: 'us-east-1', accountId: ACCOUNT };

  it('accepts the bare alias, and its ARN in the launch region and account', () => {
    expect(isAwsManagedEbsAlias('alias/aws/ebs', HERE)).toBe(true);
    expect(isAwsManagedEbsAlias(`arn:aws:kms:us-east-1:${ACCOUNT}:alias/aws/ebs`, HERE)).toBe(true);
    expect(isAwsManagedEbsAlias('alias/aws/ebs-other', HERE)).toBe(false);
  });

  it('rejects its ARN of another region or account, naming the mismatch', () => {
    // Arrange
    const foreign = 'arn:aws:kms:eu-west-1:999999999999:alias/aws/ebs';

    // Act
    const mismatch = awsManagedEbsAliasMismatch(foreign, HERE);

    // Assess
    expect(isAwsManagedEbsAlias(foreign, HERE)).toBe(false);
    expect(mismatch).toContain('it is in eu-west-1');
    expect(mismatch).toContain('us-east-1');
    expect(mismatch).toContain('account 999999999999');
    expect(namesAwsManagedEbsAlias(foreign)).toBe(true);
  });

  it('judges only what is known: the region alone when the account is unknown', () => {
    // Arrange
    const otherAccount = 'arn:aws:kms:us-east-1:999999999999:alias/aws/ebs';

    // Assess
    expect(isAwsManagedEbsAlias(otherAccount, { region: 'us-east-1' })).toBe(true);
    expect(awsManagedEbsAliasMismatch(otherAccount, { region: 'eu-west-1' })).toContain(
      'it is in us-east-1'
    );
    expect(awsManagedEbsAliasMismatch('alias/aws/ebs', HERE)).toBeUndefined();
  });
});
