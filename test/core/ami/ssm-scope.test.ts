import { describe, expect, it } from 'vitest';
import {
  isPublicParameter,
  outsideScopeMessage,
  parameterInScope,
  parameterResourcePath,
  shownParameterValue,
  ssmPrefixProblem,
} from '../../../lambda/core/ami/ssm-scope.js';

const SCOPE = { prefixes: ['/platform/ami/'], setting: 'ssmParameterPrefixes' };

describe('SSM parameter scope', () => {
  it.each([
    ['/team/ami', '/team/ami'],
    ['golden', '/golden'],
    ['arn:aws:ssm:us-east-1:111122223333:parameter/team/ami', '/team/ami'],
    ['arn:aws:ssm:us-east-1:111122223333:parameter/golden', '/golden'],
    ['arn:aws:ssm:us-east-1::parameter/aws/service/x', '/aws/service/x'],
  ])('matches %s as IAM does, by %s', (name, path) => {
    expect(parameterResourcePath(name)).toBe(path);
  });

  it('always allows public parameters, and only them without a prefix', () => {
    const none = { prefixes: [], setting: 'ssmParameterPrefixes' };
    expect(parameterInScope('/aws/service/eks/x/image_id', none)).toBe(true);
    expect(isPublicParameter('arn:aws:ssm:eu-west-1::parameter/aws/service/x')).toBe(true);
    expect(parameterInScope('/platform/ami/golden', none)).toBe(false);
    expect(parameterInScope('/AWS/service/x', none)).toBe(false);
  });

  it('allows parameters under a configured prefix (a string prefix, as IAM’s prefix*)', () => {
    expect(parameterInScope('/platform/ami/golden', SCOPE)).toBe(true);
    expect(parameterInScope('arn:aws:ssm:us-east-1:1:parameter/platform/ami/x', SCOPE)).toBe(true);
    expect(parameterInScope('/platform/amigo', SCOPE)).toBe(false);
    expect(parameterInScope('/prod/db/password', SCOPE)).toBe(false);
  });

  it('allows everything without a scope (the CLI, with the user’s own credentials)', () => {
    expect(parameterInScope('/prod/db/password', undefined)).toBe(true);
  });

  it('names the setting, what it allows and the path to add', () => {
    expect(outsideScopeMessage('/prod/db/password', SCOPE)).toBe(
      'the scanner reads only SSM parameters under /aws/service/ and the prefixes of ssmParameterPrefixes (it allows /platform/ami/); add a prefix of /prod/db/password to ssmParameterPrefixes to check this term'
    );
    expect(outsideScopeMessage('x', { prefixes: [], setting: 'S' })).toContain(
      'none is configured'
    );
  });

  it.each([
    ['/platform/ami/', undefined],
    ['/a', undefined],
    ['platform/', 'must start with /'],
    ['/', 'must name a path'],
    ['/platform/*', 'may contain only'],
    ['/plat form/', 'may contain only'],
    ['/aws/service/', 'reserved by AWS'],
    ['/SSM/x', 'reserved by AWS'],
    [`/${'a'.repeat(300)}`, 'must name a path'],
  ])('validates the prefix %s', (prefix, problem) => {
    const found = ssmPrefixProblem(prefix);
    if (problem === undefined) expect(found).toBeUndefined();
    else expect(found).toContain(problem);
  });

  it('shows a value only when it is a visible image, or an image id of a public parameter', () => {
    const visible = new Set(['ami-0123456789abcdef0']);
    expect(shownParameterValue('/team/ami', 'ami-0123456789abcdef0', visible)).toBe(
      'ami-0123456789abcdef0'
    );
    expect(shownParameterValue('/team/ami', 'ami-0fedcba9876543210', visible)).toBeUndefined();
    expect(shownParameterValue('/team/ami', 'ami-0fedcba9876543210', undefined)).toBeUndefined();
    expect(shownParameterValue('/aws/service/x', 'ami-0fedcba9876543210', visible)).toBe(
      'ami-0fedcba9876543210'
    );
    expect(shownParameterValue('/aws/service/x', 'us-east-1,eu-west-1', visible)).toBeUndefined();
  });
});
