import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { accessEntryCommand, scannerRbacYaml } from '../../lambda/core/scanner-access.js';

describe('scanner-access', () => {
  it('renders a ClusterRole and binding that parse as Kubernetes YAML', () => {
    // Act
    const [role, binding] = scannerRbacYaml()
      .split('---\n')
      .map((document) => parse(document) as Record<string, unknown>);

    // Assess
    expect(role).toMatchObject({ kind: 'ClusterRole', metadata: { name: 'nodeclass-scanner' } });
    expect(role?.rules).toEqual([
      {
        apiGroups: ['karpenter.k8s.aws'],
        resources: ['ec2nodeclasses'],
        verbs: ['get', 'list', 'watch'],
      },
      { apiGroups: ['karpenter.sh'], resources: ['nodepools'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['serviceaccounts'], verbs: ['get', 'list', 'watch'] },
      {
        apiGroups: ['apiextensions.k8s.io'],
        resources: ['customresourcedefinitions'],
        resourceNames: ['ec2nodeclasses.karpenter.k8s.aws', 'nodepools.karpenter.sh'],
        verbs: ['get'],
      },
    ]);
    expect(binding).toMatchObject({
      kind: 'ClusterRoleBinding',
      roleRef: { kind: 'ClusterRole', name: 'nodeclass-scanner' },
      subjects: [{ kind: 'Group', name: 'nodeclass-scanner' }],
    });
  });

  it('is the YAML the README tells users to apply', () => {
    const readme = readFileSync(join(import.meta.dirname, '../../README.md'), 'utf8');
    expect(readme).toContain(scannerRbacYaml());
  });

  it('builds the access entry command, with a placeholder when the principal is unknown', () => {
    expect(accessEntryCommand({ cluster: 'prod' })).toBe(
      'aws eks create-access-entry --cluster-name prod --principal-arn <scanner-role-arn> --type STANDARD --kubernetes-groups nodeclass-scanner'
    );
    expect(
      accessEntryCommand({
        cluster: 'prod',
        region: 'eu-west-1',
        principalArn: 'arn:aws:iam::1:role/s',
      })
    ).toContain('--region eu-west-1 --principal-arn arn:aws:iam::1:role/s');
  });
});
