import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHECKS } from '../lambda/core/checks/index.js';

const root = join(import.meta.dirname, '..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

const IMPORT_PATTERN =
  /(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|require\(\s*['"]([^'"]+)['"]\s*\)/g;

function importsOf(text: string): string[] {
  return [...text.matchAll(IMPORT_PATTERN)].map((match) => match[1] ?? match[2] ?? match[3] ?? '');
}

describe('architecture', () => {
  const coreFiles = sourceFiles(join(root, 'lambda/core'));

  it('keeps lambda/core free of SDKs, Powertools, node I/O and outer layers', () => {
    // Pure parsers only: zod (schemas), yaml (NodeConfig userData, user-data-valid).
    const allowedPackages = ['zod', 'yaml'];
    const violations = coreFiles.flatMap((file) =>
      importsOf(readFileSync(file, 'utf8'))
        .filter((specifier) =>
          specifier.startsWith('.')
            ? /\/(adapters|app|handlers|cli|shared)\//.test(join(file, '..', specifier))
            : !allowedPackages.includes(specifier)
        )
        .map((specifier) => `${relative(root, file)} imports ${specifier}`)
    );
    expect(violations).toEqual([]);
  });

  it('keeps lambda/core free of env, clock and randomness', () => {
    const forbidden = /process\.env|Date\.now\(|new Date\(\s*\)|Math\.random\(|performance\.now\(/;
    const violations = coreFiles
      .filter((file) => forbidden.test(readFileSync(file, 'utf8')))
      .map((file) => relative(root, file));
    expect(violations).toEqual([]);
  });

  it('detects a forbidden import when one is present', () => {
    expect(importsOf("import { EC2Client } from '@aws-sdk/client-ec2';")).toEqual([
      '@aws-sdk/client-ec2',
    ]);
    expect(importsOf("const m = await import('node:fs');")).toEqual(['node:fs']);
  });

  it('has one file and one test per check, with unique kebab-case ids', () => {
    const ids = CHECKS.map((check) => check.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) {
      expect(id).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
      expect(statSync(join(root, 'lambda/core/checks', `${id}.ts`)).isFile()).toBe(true);
      expect(statSync(join(root, 'test/core/checks', `${id}.test.ts`)).isFile()).toBe(true);
    }
  });

  it('cites nothing outside the repository but public URLs: no internal notes in code, README or docs', () => {
    // Design notes kept outside the repository cannot be followed by a reader or a user.
    const internal =
      /§|karpenter-validations|aws-facts\.md|aws-facts §|scanner-anchors|style-anchors|CHECKS\.md|ARCHITECTURE\.md/;
    const files = [
      ...['lambda', 'infra', 'bench', 'scripts'].flatMap((dir) => sourceFiles(join(root, dir))),
      join(root, 'README.md'),
      ...readdirSync(join(root, 'docs/checks')).map((name) => join(root, 'docs/checks', name)),
    ];
    const cited = files
      .filter((file) => !file.endsWith('check-docs.ts'))
      .flatMap((file) =>
        readFileSync(file, 'utf8')
          .split('\n')
          .flatMap((line, index) =>
            internal.test(line) ? [`${relative(root, file)}:${index + 1}: ${line.trim()}`] : []
          )
      );
    expect(cited).toEqual([]);
  });
});
