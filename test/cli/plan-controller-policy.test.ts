import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { IAM_ENGINE_PACKAGE, loadIamEngine } from '../../lambda/adapters/iam-engine/load.js';
import { loadControllerPolicy } from '../../lambda/cli/plan-controller-policy.js';
import { ConfigError, InputError } from '../../lambda/shared/errors.js';
import { useTempTrees } from './support/run-cli.js';

const POLICY = JSON.stringify({
  Version: '2012-10-17',
  Statement: [{ Effect: 'Allow', Action: 'ec2:Describe*', Resource: '*' }],
});

const tree = useTempTrees();

describe('loading --controller-policy documents', () => {
  it('names the package to install when the policy engine is missing', async () => {
    // Prepare
    const dir = tree({ 'p.json': POLICY });
    const missing = Object.assign(new Error(`Cannot find package '${IAM_ENGINE_PACKAGE}'`), {
      code: 'ERR_MODULE_NOT_FOUND',
    });

    // Act
    const loading = loadControllerPolicy({ policies: [join(dir, 'p.json')] }, () =>
      loadIamEngine(async () => {
        throw missing;
      })
    );

    // Assess
    await expect(loading).rejects.toBeInstanceOf(ConfigError);
    await expect(loading).rejects.toThrow(
      `--controller-policy evaluates the documents with the IAM policy engine ${IAM_ENGINE_PACKAGE}, an optional package that is not installed: npm install ${IAM_ENGINE_PACKAGE}`
    );
  });

  it('refuses a document the engine cannot evaluate, naming the file and its problem', async () => {
    // Prepare
    const dir = tree({ 'p.json': POLICY, 'boundary.json': POLICY });
    const refusing = async () => {
      throw new Error(
        'iam-simulate cannot evaluate ec2:DescribeImages: {"permissionBoundaryErrors":{"boundary.json":[{"path":"Statement[0]","message":"not evaluable"}]},"message":"policy.errors"}'
      );
    };

    // Act
    const loading = loadControllerPolicy(
      { policies: [join(dir, 'p.json')], boundary: join(dir, 'boundary.json') },
      async () => async (policies) =>
        policies.boundary === undefined ? { EvaluationResults: [], $metadata: {} } : refusing()
    );

    // Assess
    await expect(loading).rejects.toBeInstanceOf(InputError);
    await expect(loading).rejects.toThrow(
      '--permissions-boundary boundary.json: the policy engine refuses it: Statement[0]: not evaluable'
    );
  });

  it('returns the documents with the installed engine', async () => {
    // Prepare
    const dir = tree({ 'p.json': POLICY });

    // Act
    const policy = await loadControllerPolicy({ policies: [join(dir, 'p.json')] });

    // Assess
    expect(policy.documents).toEqual({
      identity: [{ name: 'p.json', type: 'managed', document: POLICY }],
    });
    const output = await policy.engine(policy.documents, {
      PolicySourceArn: 'arn:aws:iam::111122223333:role/KarpenterControllerRole-demo',
      ActionNames: ['ec2:DescribeSubnets'],
    });
    expect(output.EvaluationResults?.[0]?.EvalDecision).toBe('allowed');
  });
});
