import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { SCANNER_KUBERNETES_GROUP, scannerRbacYaml } from '../../lambda/core/scanner-access.js';
import { REPO_ROOT } from './support.js';

interface RbacObject {
  kind: string;
  metadata: { name: string };
  rules?: { apiGroups: string[]; resources: string[]; resourceNames?: string[]; verbs: string[] }[];
  roleRef?: { kind: string; name: string };
  subjects?: { kind: string; name: string }[];
}

const objects = parseAllDocuments(
  readFileSync(join(REPO_ROOT, 'infra/cluster-rbac.yaml'), 'utf8')
).map((document) => document.toJS() as RbacObject);

describe('infra/cluster-rbac.yaml', () => {
  it('grants read-only verbs only', () => {
    // Act (the exact rules are asserted once, on scannerRbacYaml, in test/core/scanner-access.test.ts)
    const role = objects.find((object) => object.kind === 'ClusterRole');
    const verbs = new Set(role?.rules?.flatMap((rule) => rule.verbs));

    // Assess
    expect(role?.rules?.length).toBeGreaterThan(0);
    expect([...verbs].sort()).toEqual(['get', 'list', 'watch']);
  });

  it("reads CRDs only by name, only Karpenter's two, and only with get", () => {
    // Act
    const role = objects.find((object) => object.kind === 'ClusterRole');
    const crdRules = (role?.rules ?? []).filter((rule) =>
      rule.apiGroups.includes('apiextensions.k8s.io')
    );

    // Assess: list/watch would ignore resourceNames and expose every CRD in the cluster.
    expect(crdRules).toEqual([
      {
        apiGroups: ['apiextensions.k8s.io'],
        resources: ['customresourcedefinitions'],
        resourceNames: ['ec2nodeclasses.karpenter.k8s.aws', 'nodepools.karpenter.sh'],
        verbs: ['get'],
      },
    ]);
    expect(role?.rules?.filter((rule) => rule.resourceNames !== undefined)).toEqual(crdRules);
  });

  it('is the same RBAC the scanner-can-read-cluster finding tells users to apply', () => {
    // Act
    const printed = parseAllDocuments(scannerRbacYaml()).map((document) => document.toJS());

    // Assess
    expect(objects).toEqual(printed);
  });

  it('binds it to the group the access entry maps the scanner role to', () => {
    // Act
    const binding = objects.find((object) => object.kind === 'ClusterRoleBinding');
    const role = objects.find((object) => object.kind === 'ClusterRole');

    // Assess
    expect(objects).toHaveLength(2);
    expect(binding?.roleRef).toMatchObject({ kind: 'ClusterRole', name: role?.metadata.name });
    expect(binding?.subjects).toEqual([
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: SCANNER_KUBERNETES_GROUP },
    ]);
  });
});
