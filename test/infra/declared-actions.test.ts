import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  DECLARED_ACTIONS,
  HANDLER_ACTIONS,
  SCANNING_HANDLERS,
} from '../../lambda/adapters/aws/declared-actions.js';
import { eksReaderActions } from '../../lambda/adapters/aws/eks-reader.js';
import { HANDLER_NAMES } from '../../lambda/shared/config.js';
import { REPO_ROOT } from './support.js';

// Action lists that are deliberately no scanner role's: the DryRun role's own permissions,
// DryRun's sts:AssumeRole, which infra/permissions.ts grants only with a DryRun role configured,
// and the CLI's account directory (each Lambda scans one cluster, below its threshold).
const NOT_THE_SCANNER_ROLE = [
  'dryRunAssumedRoleActions',
  'dryRunActions',
  'iamAccountDirectoryActions',
];

describe('declared-actions registry', () => {
  it('registers every adapter action list, so the role policy cannot miss an adapter', async () => {
    // Prepare
    const dir = join(REPO_ROOT, 'lambda/adapters/aws');
    const exported = await Promise.all(
      readdirSync(dir)
        .filter((file) => file.endsWith('.ts'))
        .flatMap((file) =>
          [...readFileSync(join(dir, file), 'utf8').matchAll(/export const (\w+Actions) = /g)].map(
            async ([, name]) => {
              const module = (await import(join(dir, file))) as Record<string, readonly string[]>;
              return { name: name as string, actions: module[name as string] ?? [] };
            }
          )
        )
    );
    const registered = Object.values(DECLARED_ACTIONS);

    // Act
    const unregistered = exported
      .filter(({ name }) => !NOT_THE_SCANNER_ROLE.includes(name))
      .filter(({ actions }) => actions.some((action) => !registered.flat().includes(action)))
      .map(({ name }) => name);

    // Assess
    expect(exported.length).toBeGreaterThan(5);
    expect(unregistered).toEqual([]);
  });

  it('gives every function an entry, and the union is what DECLARED_ACTIONS lists', () => {
    // Act
    const union = new Set(Object.values(HANDLER_ACTIONS).flatMap((r) => Object.values(r).flat()));

    // Assess
    expect(Object.keys(HANDLER_ACTIONS).sort()).toEqual([...HANDLER_NAMES].sort());
    expect([...union].sort()).toEqual([...new Set(Object.values(DECLARED_ACTIONS).flat())].sort());
  });

  it('keeps the dispatcher to listing clusters and enqueueing (what listClusters calls)', () => {
    expect(Object.values(HANDLER_ACTIONS.dispatch).flat().sort()).toEqual([
      'eks:DescribeCluster',
      'eks:ListClusters',
      'sqs:SendMessage',
    ]);
  });

  it.each(SCANNING_HANDLERS)(
    '%s scans named clusters: EKS reads but no ListClusters, no enqueueing',
    (handler) => {
      // Act
      const actions = Object.values(HANDLER_ACTIONS[handler]).flat();

      // Assess
      expect(actions).toEqual(
        expect.arrayContaining(eksReaderActions.filter((a) => a !== 'eks:ListClusters'))
      );
      expect(actions).toEqual(
        expect.arrayContaining(['iam:SimulatePrincipalPolicy', 'sns:Publish', 'dynamodb:Query'])
      );
      expect(actions.filter((a) => a === 'eks:ListClusters' || a.startsWith('sqs:'))).toEqual([]);
    }
  );
});
