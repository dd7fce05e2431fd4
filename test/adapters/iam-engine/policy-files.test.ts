import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  parsePolicyFile,
  readPolicyFiles,
} from '../../../lambda/adapters/iam-engine/policy-files.js';
import { InputError } from '../../../lambda/shared/errors.js';
import { useTempTrees } from '../../cli/support/run-cli.js';

const DOCUMENT = {
  Version: '2012-10-17',
  Statement: [
    {
      Sid: 'AllowPassingInstanceRole',
      Effect: 'Allow',
      Action: 'iam:PassRole',
      Resource: 'arn:aws:iam::111122223333:role/KarpenterNodeRole-demo',
      Condition: { StringEquals: { 'iam:PassedToService': 'ec2.amazonaws.com' } },
    },
  ],
};
const TEXT = JSON.stringify(DOCUMENT);

const tree = useTempTrees();

function refusal(text: string): string {
  try {
    parsePolicyFile(text, 'p.json');
  } catch (error) {
    expect(error).toBeInstanceOf(InputError);
    return (error as Error).message;
  }
  throw new Error('accepted');
}

describe('policy files', () => {
  it.each([
    ['a policy document', TEXT],
    ['YAML', `Version: "2012-10-17"\nStatement:\n  - ${JSON.stringify(DOCUMENT.Statement[0])}\n`],
    [
      'CloudFormation properties',
      JSON.stringify({ ManagedPolicyName: 'x', PolicyDocument: DOCUMENT }),
    ],
    [
      'a CloudFormation resource',
      JSON.stringify({ Type: 'AWS::IAM::ManagedPolicy', Properties: { PolicyDocument: DOCUMENT } }),
    ],
    [
      'aws iam get-policy-version output, URL-encoded',
      JSON.stringify({ PolicyVersion: { Document: encodeURIComponent(TEXT), VersionId: 'v3' } }),
    ],
    [
      'aws iam get-policy-version output, decoded',
      JSON.stringify({ PolicyVersion: { Document: DOCUMENT } }),
    ],
    [
      'aws iam get-role-policy output',
      JSON.stringify({ RoleName: 'r', PolicyName: 'p', PolicyDocument: TEXT }),
    ],
    ['a JSON string (terraform output -json)', JSON.stringify(TEXT)],
  ])('reads %s', (_shape, text) => {
    // Act
    const document = parsePolicyFile(text, 'p.json');

    // Assess
    expect(JSON.parse(document)).toEqual(DOCUMENT);
  });

  it('keeps IAM policy variables, which are no template placeholders', () => {
    // Prepare
    const text = TEXT.replace(
      'KarpenterNodeRole-demo',
      `KarpenterNodeRole-\${aws:PrincipalTag/team}`
    );

    // Act, Assess
    expect(parsePolicyFile(text, 'p.json')).toContain(`\${aws:PrincipalTag/team}`);
  });

  it.each([
    [
      `\${AWS::AccountId}`,
      TEXT.replace('111122223333', `\${AWS::AccountId}`),
      'Statement[0].Resource',
    ],
    [
      `\${ClusterName}`,
      TEXT.replace('iam:PassedToService', `aws:ResourceTag/kubernetes.io/cluster/\${ClusterName}`),
      `Statement[0].Condition.StringEquals.aws:ResourceTag/kubernetes.io/cluster/\${ClusterName}`,
    ],
    [`\${var.cluster_name}`, TEXT.replace('demo', `\${var.cluster_name}`), 'Statement[0].Resource'],
    [
      'Fn::Sub',
      JSON.stringify({
        PolicyDocument: {
          ...DOCUMENT,
          Statement: [{ ...DOCUMENT.Statement[0], Resource: { 'Fn::Sub': 'x' } }],
        },
      }),
      'PolicyDocument.Statement[0].Resource.Fn::Sub',
    ],
  ])('refuses a template placeholder %s, saying where and to render it', (what, text, where) => {
    // Act
    const message = refusal(text);

    // Assess
    expect(message).toContain(`p.json: template placeholder ${what}`);
    expect(message).toContain(`(first at ${where})`);
    expect(message).toContain('render the template first');
  });

  it('refuses CloudFormation YAML tags with their line', () => {
    // Act
    const message = refusal(
      `Statement:\n  - Effect: Allow\n    Action: ec2:RunInstances\n    Resource: !Sub "arn:\${AWS::Partition}:ec2:*:*:subnet/*"\n`
    );

    // Assess
    expect(message).toMatch(
      /^p\.json: CloudFormation function !Sub \(line 4\) left in the document;/
    );
  });

  it.each([
    ['not JSON or YAML', '{"Statement": [', 'not valid JSON or YAML (line 1)'],
    ['empty', '', 'holds no policy document'],
    [
      'two YAML documents',
      `${TEXT}\n---\n${TEXT}\n`,
      'holds 2 YAML documents; give one policy per file',
    ],
    [
      'another shape',
      '{"Policies": []}',
      'not an IAM policy document (no Statement, PolicyDocument or PolicyVersion.Document (keys: Policies))',
    ],
    ['a bad Effect', TEXT.replace('"Allow"', '"Permit"'), 'Statement[0].Effect: Invalid option'],
    [
      'no Action',
      TEXT.replace('"Action"', '"Actions"'),
      'Statement[0]: give exactly one of Action and NotAction',
    ],
    [
      'a malformed action',
      TEXT.replace('iam:PassRole', 'iamPassRole'),
      'Statement[0].Action: "iamPassRole" is not service:Action or *',
    ],
    [
      'a resource that is no ARN',
      TEXT.replace('arn:aws:iam::111122223333:role/', 'role/'),
      'is not an ARN or *',
    ],
    [
      'an unknown condition operator',
      TEXT.replace('StringEquals', 'StringEqualz'),
      'Statement[0].Condition.StringEqualz: "StringEqualz" is not an IAM condition operator',
    ],
    [
      'a trust policy',
      TEXT.replace('"Effect"', '"Principal":{"Service":"ec2.amazonaws.com"},"Effect"'),
      'Statement[0].Principal: an identity policy names no principal',
    ],
    [
      'no statement',
      '{"Version":"2012-10-17","Statement":[]}',
      'Statement: a policy needs a statement',
    ],
    ['deep nesting', `${'['.repeat(40)}${']'.repeat(40)}`, 'nested more than 32 levels'],
    [
      'an alias bomb',
      'a: &a [1,1,1,1,1,1,1,1,1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\n',
      'Excessive alias count',
    ],
  ])('refuses %s, naming the problem', (_case, text, problem) => {
    expect(refusal(text)).toContain(problem);
  });

  it('accepts case-insensitive operators with set prefixes and IfExists', () => {
    // Prepare
    const text = TEXT.replace('StringEquals', 'ForAnyValue:stringlikeIfExists');

    // Act, Assess
    expect(() => parsePolicyFile(text, 'p.json')).not.toThrow();
  });

  it('names each file by its base name, or by its path when two share one', async () => {
    // Prepare
    const dir = tree({
      'a/policy.json': TEXT,
      'b/policy.json': TEXT,
      'c/other.yaml': TEXT,
      'boundary.json': TEXT,
    });

    // Act
    const documents = await readPolicyFiles({
      policies: [join(dir, 'a/policy.json'), join(dir, 'b/policy.json'), join(dir, 'c/other.yaml')],
      boundary: join(dir, 'boundary.json'),
    });

    // Assess
    expect(documents.identity.map((policy) => policy.name)).toEqual([
      join(dir, 'a/policy.json'),
      join(dir, 'b/policy.json'),
      'other.yaml',
    ]);
    expect(documents.boundary).toEqual({ name: 'boundary.json', document: TEXT });
  });

  it('refuses a file it cannot read or that is too large, naming the flag and file', async () => {
    // Prepare
    const dir = tree({ 'big.json': ' '.repeat(300 * 1024) });

    // Act, Assess
    await expect(readPolicyFiles({ policies: [join(dir, 'missing.json')] })).rejects.toThrow(
      `--controller-policy ${join(dir, 'missing.json')}: cannot read (no such file)`
    );
    await expect(
      readPolicyFiles({ policies: [], boundary: join(dir, 'big.json') })
    ).rejects.toThrow(
      `--permissions-boundary ${join(dir, 'big.json')}: is 307200 bytes, too large (limit 256 KiB)`
    );
  });
});
