import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DECLARED_ACTIONS } from '../../lambda/adapters/aws/declared-actions.js';
import { REPO_ROOT } from './support.js';

// Action lists that are deliberately not the scanner role's: the DryRun role's own permissions,
// and DryRun's sts:AssumeRole until DryRun mode is wired into the Lambdas (no variable for it in
// lambda/shared/config.ts yet); infra/permissions.ts grants it only with a DryRun role configured.
const NOT_THE_SCANNER_ROLE = ['dryRunAssumedRoleActions', 'dryRunActions'];

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
});
