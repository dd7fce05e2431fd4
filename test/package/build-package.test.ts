// The parts of the package build that are not esbuild's or tsc's: the third-party notices and the
// self-contained declarations (scripts/build-package.ts), on small fixture trees. The packed
// package itself is checked in package.test.ts.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  BUILD_OUTPUTS,
  bundledPackages,
  codeMask,
  isBuilt,
  makeDeclarationsSelfContained,
  packageDirectoryOf,
  sourceMapInputs,
  thirdPartyNotices,
} from '../../scripts/build-package.js';
import { REPO_ROOT } from './pack.js';

const scratch: string[] = [];
afterAll(() => {
  for (const directory of scratch) rmSync(directory, { recursive: true, force: true });
});

/** A directory holding `files` (path → text). */
function tree(files: Readonly<Record<string, string>>): string {
  const root = mkdtempSync(join(tmpdir(), 'build-package-'));
  scratch.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

const manifest = (fields: Record<string, unknown>) => JSON.stringify(fields);

describe('third-party notices', () => {
  it('finds the package of a bundled file: the innermost node_modules entry, scoped or not', () => {
    expect(packageDirectoryOf('/r/node_modules/zod/v4/core/core.js')).toBe('/r/node_modules/zod');
    expect(packageDirectoryOf('/r/node_modules/@aws-sdk/client-ec2/dist-es/index.js')).toBe(
      '/r/node_modules/@aws-sdk/client-ec2'
    );
    expect(
      packageDirectoryOf('/r/node_modules/@aws-sdk/core/node_modules/@smithy/core/dist/x.js')
    ).toBe('/r/node_modules/@aws-sdk/core/node_modules/@smithy/core');
    expect(packageDirectoryOf('/r/lambda/core/model.ts')).toBeUndefined();
  });

  it('lists each bundled package once, with its license files, or the standard text when it ships none', () => {
    // Prepare
    const root = tree({
      'node_modules/alpha/package.json': manifest({
        name: 'alpha',
        version: '1.0.0',
        license: 'MIT',
      }),
      'node_modules/alpha/LICENSE': 'MIT License\n\nCopyright (c) Alpha\n',
      'node_modules/alpha/lib/a.js': '',
      'node_modules/alpha/lib/b.js': '',
      'node_modules/@scope/beta/package.json': manifest({
        name: '@scope/beta',
        version: '2.0.0',
        license: 'MIT-0',
        author: { name: 'Beta Corp' },
      }),
      'node_modules/@scope/beta/index.js': '',
      'node_modules/gamma/package.json': manifest({
        name: 'gamma',
        version: '3.0.0',
        licenses: [{ type: 'ISC' }],
      }),
      'node_modules/gamma/LICENCE.txt': 'ISC text\r\n',
      'node_modules/gamma/NOTICE': 'Gamma notice\n',
      'node_modules/gamma/index.js': '',
    });
    // Act
    const packages = bundledPackages([
      { file: join(root, 'node_modules/alpha/lib/a.js'), part: 'dist/lib' },
      { file: join(root, 'node_modules/alpha/lib/b.js'), part: 'dist/lambda' },
      { file: join(root, 'node_modules/@scope/beta/index.js'), part: 'dist/lib' },
      { file: join(root, 'node_modules/gamma/index.js'), part: 'dist/cdk' },
      { file: join(root, 'lambda/api.ts'), part: 'dist/lib' },
    ]);
    // Assess
    expect(
      packages.map(({ name, version, license, parts }) => ({ name, version, license, parts }))
    ).toEqual([
      { name: '@scope/beta', version: '2.0.0', license: 'MIT-0', parts: ['dist/lib'] },
      { name: 'alpha', version: '1.0.0', license: 'MIT', parts: ['dist/lambda', 'dist/lib'] },
      { name: 'gamma', version: '3.0.0', license: 'ISC', parts: ['dist/cdk'] },
    ]);
    expect(packages[1]?.licenseTexts).toEqual([
      { source: 'LICENSE', text: 'MIT License\n\nCopyright (c) Alpha\n' },
    ]);
    expect(packages[2]?.licenseTexts.map((text) => text.source)).toEqual(['LICENCE.txt', 'NOTICE']);
    const [beta] = packages[0]?.licenseTexts ?? [];
    expect(beta?.source).toMatch(/standard MIT-0 text/);
    expect(beta?.text).toMatch(/^MIT No Attribution\n\nCopyright Beta Corp\n/);
  });

  it('fails the build for a bundled package with no license file and no known license text', () => {
    const root = tree({
      'node_modules/odd/package.json': manifest({
        name: 'odd',
        version: '1.0.0',
        license: 'WTFPL',
      }),
      'node_modules/odd/index.js': '',
    });
    expect(() =>
      bundledPackages([{ file: join(root, 'node_modules/odd/index.js'), part: 'dist/lib' }])
    ).toThrow(/odd@1\.0\.0 .* ships no license file/);
  });

  it('writes each distinct text once, naming every package it comes from', () => {
    // Prepare
    const apache = readFileSync(join(REPO_ROOT, 'LICENSE'), 'utf8');
    const packages = [
      {
        name: 'a',
        version: '1.0.0',
        license: 'Apache-2.0',
        parts: ['dist/lib'],
        licenseTexts: [{ source: 'LICENSE', text: apache }],
      },
      {
        name: 'b',
        version: '2.0.0',
        license: 'Apache-2.0',
        homepage: 'https://example.com/b',
        parts: ['dist/cdk', 'dist/lib'],
        licenseTexts: [{ source: 'LICENSE.txt', text: apache.replace(/\n/g, '\r\n') }],
      },
      {
        name: 'c',
        version: '3.0.0',
        license: 'MIT',
        parts: ['dist/lambda'],
        licenseTexts: [{ source: 'LICENSE', text: 'MIT text' }],
      },
    ];
    // Act
    const notices = thirdPartyNotices({ name: 'nodeclass-scanner', version: '9.9.9' }, packages);
    // Assess
    expect(notices).toMatch(/^Third-party software bundled in nodeclass-scanner 9\.9\.9\n=+\n/);
    expect(notices).toContain('a@1.0.0  Apache-2.0  [dist/lib]\n');
    expect(notices).toContain('b@2.0.0  Apache-2.0  [dist/cdk, dist/lib]  https://example.com/b\n');
    expect(notices).toContain('License and notice texts (2)');
    expect(notices).toContain('From: a@1.0.0 (LICENSE), b@2.0.0 (LICENSE.txt)\n');
    expect(notices).toContain('From: c@3.0.0 (LICENSE)\n\nMIT text\n');
    expect(notices.split('END OF TERMS AND CONDITIONS')).toHaveLength(2);
  });

  it('reads the files bundled into the Lambda bundles from their source maps', () => {
    const root = tree({
      'dist/lambda/dispatch/index.mjs.map': JSON.stringify({
        sources: ['../../../node_modules/zod/index.js', '../../../lambda/handlers/dispatch.ts'],
      }),
      'dist/lambda/dispatch/chunks/chunk-1.mjs.map': JSON.stringify({
        sources: ['../../../../node_modules/yaml/dist/index.js'],
      }),
      'dist/lambda/dispatch/index.mjs': '',
    });
    expect(sourceMapInputs(join(root, 'dist/lambda'))).toEqual(
      [
        join(root, 'lambda/handlers/dispatch.ts'),
        join(root, 'node_modules/yaml/dist/index.js'),
        join(root, 'node_modules/zod/index.js'),
      ].sort()
    );
  });
});

describe('self-contained declarations', () => {
  it('keeps what the entries reach, and vendors the declarations of a bundled package they import', () => {
    // Prepare: an entry importing a sibling and `dep`, an unreachable file, and dep's declarations
    const root = tree({
      'types/lambda/api.d.ts':
        "import { z } from 'dep';\nimport type { A } from './a.js';\nexport type B = A & z.Thing;\n",
      'types/lambda/a.d.ts': "export type A = import('aws-cdk-lib').Duration;\n",
      'types/lambda/unused.d.ts': "import type { X } from '@aws-sdk/client-ec2';\n",
      'types/infra/index.d.ts':
        "export * from '../lambda/a.js';\nimport { Construct } from 'constructs';\n",
      'node_modules/dep/package.json': manifest({
        name: 'dep',
        version: '1.0.0',
        type: 'module',
        exports: { '.': { types: './index.d.cts', import: './index.js' } },
      }),
      'node_modules/dep/index.d.ts':
        '/** Set by `import "dep/compile"`. */\nexport * as z from "./inner/z.js";\n',
      'node_modules/dep/inner/z.d.ts':
        "// import 'nothing'\nexport interface Thing { a: `import 'x'` }\n",
      'node_modules/dep/index.d.cts': 'export {};\n',
      'node_modules/dep/LICENSE': 'dep license\n',
    });
    const types = join(root, 'types');
    // Act
    const result = makeDeclarationsSelfContained(types, {
      packageDirectory: (name) => join(root, 'node_modules', name),
    });
    // Assess
    expect(result.vendored).toEqual(['dep']);
    expect(result.kept).toEqual([
      'infra/index.d.ts',
      'lambda/a.d.ts',
      'lambda/api.d.ts',
      'vendor/dep/LICENSE',
      'vendor/dep/index.d.ts',
      'vendor/dep/inner/z.d.ts',
      'vendor/dep/package.json',
    ]);
    expect(readdirSync(join(types, 'lambda')).sort()).toEqual(['a.d.ts', 'api.d.ts']);
    expect(readFileSync(join(types, 'lambda/api.d.ts'), 'utf8')).toBe(
      "import { z } from '../vendor/dep/index.js';\nimport type { A } from './a.js';\nexport type B = A & z.Thing;\n"
    );
    expect(JSON.parse(readFileSync(join(types, 'vendor/dep/package.json'), 'utf8'))).toEqual({
      type: 'module',
    });
  });

  it('refuses what it cannot make self-contained: a subpath, or a package whose declarations import another', () => {
    const subpath = tree({ 'types/lambda/api.d.ts': "import type { A } from 'dep/sub';\n" });
    expect(() =>
      makeDeclarationsSelfContained(join(subpath, 'types'), { entries: ['lambda/api.d.ts'] })
    ).toThrow(/subpath import "dep\/sub"/);
    const chained = tree({
      'types/lambda/api.d.ts': "import type { A } from 'dep';\n",
      'node_modules/dep/package.json': manifest({
        name: 'dep',
        version: '1.0.0',
        types: 'index.d.ts',
      }),
      'node_modules/dep/index.d.ts': "export type { A } from 'other';\n",
    });
    expect(() =>
      makeDeclarationsSelfContained(join(chained, 'types'), {
        entries: ['lambda/api.d.ts'],
        packageDirectory: (name) => join(chained, 'node_modules', name),
      })
    ).toThrow(/declarations of dep \(index\.d\.ts\) import "other"/);
  });

  it('looks for import specifiers in code only, not in comments or strings', () => {
    const text = "// import 'a'\nconst s = 'import \"b\"'; /* import 'c' */ import 'd';";
    const mask = codeMask(text);
    expect(mask).toHaveLength(text.length);
    expect(mask.match(/import/g)).toHaveLength(1);
    expect(mask.indexOf("import ' '")).toBe(text.indexOf("import 'd'"));
    expect(mask).toContain("const s = '          ';");
  });
});

describe('--unless-built (the prepare script)', () => {
  it('counts a build complete only when every output is there', () => {
    const complete = tree(Object.fromEntries(BUILD_OUTPUTS.map((file) => [file, ''])));
    const partial = tree({ 'lambda/scan-cluster/index.mjs': '' });
    expect(isBuilt(complete)).toBe(true);
    expect(isBuilt(partial)).toBe(false);
  });
});
