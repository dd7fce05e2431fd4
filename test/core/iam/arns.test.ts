import { describe, expect, it } from 'vitest';
import {
  arnResource,
  bareIamName,
  isIamPathOrArn,
  ssmParameterArn,
  ssmParameterPath,
} from '../../../lambda/core/iam/arns.js';

const scope = { partition: 'aws', region: 'us-east-1', accountId: '111122223333' } as const;

describe('iam/arns', () => {
  it('keeps an ssmParameter given as an ARN (Karpenter accepts a name or an ARN)', () => {
    const arn = 'arn:aws:ssm:us-east-1:111122223333:parameter/team/ami';
    expect(ssmParameterArn(scope, arn)).toBe(arn);
  });

  it('builds parameter ARNs from names, public ones without an account', () => {
    expect(ssmParameterArn(scope, '/team/ami')).toBe(
      'arn:aws:ssm:us-east-1:111122223333:parameter/team/ami'
    );
    expect(ssmParameterArn(scope, 'flat-name')).toBe(
      'arn:aws:ssm:us-east-1:111122223333:parameter/flat-name'
    );
    expect(ssmParameterArn(scope, '/aws/service/eks/x')).toBe(
      'arn:aws:ssm:us-east-1::parameter/aws/service/eks/x'
    );
  });

  it('gives the parameter path of a name or an ARN', () => {
    expect(ssmParameterPath('/aws/service/x')).toBe('/aws/service/x');
    expect(ssmParameterPath('arn:aws:ssm:us-east-1::parameter/aws/service/x')).toBe(
      '/aws/service/x'
    );
  });

  it('takes names and resource parts of ARNs and paths', () => {
    expect(arnResource('arn:aws:iam::1:role/a/b')).toBe('role/a/b');
    expect(arnResource('plain')).toBe('plain');
    expect(bareIamName('arn:aws:iam::1:instance-profile/a/b')).toBe('b');
    expect(bareIamName('/team/Role')).toBe('Role');
    expect(bareIamName('plain')).toBe('plain');
    expect(isIamPathOrArn('arn:aws:iam::1:role/x')).toBe(true);
    expect(isIamPathOrArn('team/x')).toBe(true);
    expect(isIamPathOrArn('x')).toBe(false);
  });
});
