// Where the package says it lives (package.json repository, homepage, bugs) is where README sends
// people: the install commands, the GitHub Action and the pre-commit hook.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { REPO_ROOT } from './pack.js';

const manifest = z
  .object({
    name: z.string(),
    version: z.string(),
    homepage: z.string(),
    bugs: z.object({ url: z.string() }),
    repository: z.object({ type: z.literal('git'), url: z.string() }),
  })
  .parse(JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')));
const README = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
const repository = /^git\+(https:\/\/github\.com\/[\w.-]+\/[\w.-]+)\.git$/.exec(
  manifest.repository.url
)?.[1];

describe('package metadata', () => {
  it('names one GitHub repository: its home page and issue tracker', () => {
    expect(repository).toBeDefined();
    expect(manifest.homepage).toBe(`${repository}#readme`);
    expect(manifest.bugs.url).toBe(`${repository}/issues`);
  });

  it('is the repository README installs from, whose Action and pre-commit hook it shows', () => {
    const owner = repository?.replace('https://github.com/', '');
    // Every link to this project on GitHub, and no placeholder owner
    const links = [...README.matchAll(/github\.com\/([\w.-]+\/nodeclass-scanner)\b/g)].map(
      ([, path]) => path
    );
    expect(links.length).toBeGreaterThan(3);
    expect(new Set(links)).toEqual(new Set([owner]));
    expect(README).not.toMatch(/\bOWNER\//);
    expect(README).toMatch(new RegExp(`^\\s+- uses: ${owner}@`, 'm'));
    expect(README).toMatch(new RegExp(`^\\s+- repo: ${repository}$`, 'm'));
    expect(README).toContain(`git clone ${repository}.git`);
    expect(README).toContain(
      `${repository}/releases/download/v${manifest.version}/${manifest.name}-${manifest.version}.tgz`
    );
  });
});
