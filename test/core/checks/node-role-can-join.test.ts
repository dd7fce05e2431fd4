import { describe, expect, it } from 'vitest';
import { nodeRoleCanJoin, roleIdentity } from '../../../lambda/core/checks/node-role-can-join.js';
import type { AwsClusterFacts } from '../../../lambda/core/facts/aws.js';
import { ok, unavailable } from '../../../lambda/core/facts/slice.js';
import {
  ACCOUNT,
  aClusterFacts,
  anAwsInventory,
  SCAN_TIME,
  someAwsFacts,
} from '../../support/aws-builders.js';
import { aNodeClassObject } from '../../support/builders.js';

const now = SCAN_TIME;
const roleArn = `arn:aws:iam::${ACCOUNT}:role/KarpenterNodeRole-demo`;

function evaluateWith(cluster: Partial<AwsClusterFacts>, spec: Record<string, unknown> = {}) {
  const inventory = anAwsInventory([aNodeClassObject({ spec })], someAwsFacts(), {
    aws: ok(aClusterFacts(cluster)),
  });
  return nodeRoleCanJoin.evaluate(inventory, { now });
}

describe('node-role-can-join', () => {
  it('passes with an EC2_LINUX access entry in API mode', () => {
    expect(evaluateWith({ authenticationMode: 'API' })[0]?.status).toBe('pass');
  });

  it('fails in API mode without an access entry', () => {
    const [finding] = evaluateWith({ authenticationMode: 'API', accessEntries: ok([]) });
    expect(finding?.status).toBe('fail');
    expect(finding?.remediation).toContain('--type EC2_LINUX');
  });

  it('fails when the entry has the wrong type (STANDARD)', () => {
    const [finding] = evaluateWith({
      authenticationMode: 'API',
      accessEntries: ok([{ principalArn: roleArn, type: 'STANDARD', kubernetesGroups: [] }]),
    });
    expect(finding?.message).toContain('type STANDARD, not EC2_LINUX');
    // An entry's type cannot be changed and a principal has one entry: create alone would fail.
    expect(finding?.remediation).toContain('aws eks delete-access-entry');
    expect(finding?.remediation).toContain('--type EC2_LINUX');
  });

  it('wants EC2_WINDOWS for Windows NodeClasses', () => {
    const [finding] = evaluateWith(
      { authenticationMode: 'API' },
      { amiSelectorTerms: [{ alias: 'windows2022@latest' }] }
    );
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('not EC2_WINDOWS');
  });

  it('passes in CONFIG_MAP mode with an aws-auth mapping to system:nodes', () => {
    const [finding] = evaluateWith({
      authenticationMode: 'CONFIG_MAP',
      awsAuthRoleMappings: ok([{ roleArn, groups: ['system:bootstrappers', 'system:nodes'] }]),
    });
    expect(finding?.status).toBe('pass');
  });

  it('fails in CONFIG_MAP mode without a mapping, even if an access entry exists', () => {
    const [finding] = evaluateWith({ authenticationMode: 'CONFIG_MAP' });
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('aws-auth does not map');
  });

  it('passes in API_AND_CONFIG_MAP mode with only an aws-auth mapping', () => {
    const [finding] = evaluateWith({
      accessEntries: ok([]),
      awsAuthRoleMappings: ok([{ roleArn, groups: ['system:nodes'] }]),
    });
    expect(finding?.status).toBe('pass');
  });

  it('reports an error when access entries could not be read and nothing else maps the role', () => {
    const [finding] = evaluateWith({
      authenticationMode: 'API',
      accessEntries: unavailable('access-denied', 'eks:ListAccessEntries denied'),
    });
    expect(finding?.status).toBe('error');
    expect(finding?.message).toContain('access-denied');
  });

  it('reports an error when the cluster facts could not be read', () => {
    const inventory = anAwsInventory([aNodeClassObject()], someAwsFacts(), {
      aws: unavailable('throttled', 'eks:DescribeCluster: Rate exceeded'),
    });
    expect(nodeRoleCanJoin.evaluate(inventory, { now })[0]?.status).toBe('error');
  });

  it('matches role ARNs by account and name, ignoring the path', () => {
    expect(roleIdentity('arn:aws-cn:iam::111122223333:role/team/nodes/R')).toEqual({
      account: '111122223333',
      name: 'R',
    });
    expect(roleIdentity('arn:aws:iam::111122223333:user/R')).toBeUndefined();
  });
});
