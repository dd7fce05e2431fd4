// Builds what the npm package ships (`npm run build`, and `prepack` before every `npm pack`):
//   dist/lib/     the CLI (`cli.js`) and the programmatic API (`index.js`), bundled; the AWS SDK
//                 sits in split chunks that only live modes import
//   dist/cdk/     the construct (`nodeclass-scanner/cdk`), with aws-cdk-lib and constructs external
//   dist/lambda/  the prebuilt Lambda bundles the construct deploys (scripts/build-lambdas.ts)
//   dist/types/   declarations for both entries, self-contained: only the files the entries reach,
//                 and the declarations of bundled packages they name (zod) copied under vendor/
//   dist/THIRD-PARTY-NOTICES.txt  every package bundled into the above, with its license text
// Nothing here is loaded at run time by TypeScript: the installed package needs no tsx or esbuild.
// `--unless-built` (the `prepare` script: installs from git, such as pre-commit's) does nothing
// when every output is already there.
import { execFile } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type BuildOptions, build, type Metafile, type Plugin } from 'esbuild';
import { HANDLER_NAMES } from '../lambda/shared/env-config.js';
import { buildLambdaBundles } from './build-lambdas.js';
import { sdkSchemaTreeShaking } from './sdk-schema-tree-shaking.js';

const REPO_ROOT = fileURLToPath(new URL('../', import.meta.url));
const DEFAULT_OUT_DIRECTORY = join(REPO_ROOT, 'dist');

/** The oldest Node the package supports (package.json `engines`). */
const NODE_TARGET = 'node20.19';

// ESM bundles cannot `require`; a few CJS dependencies (and cdk-nag's require of aws-cdk-lib) do.
const CREATE_REQUIRE_BANNER =
  "import { createRequire as __scannerCreateRequire } from 'node:module';" +
  'const require = __scannerCreateRequire(import.meta.url);';

/**
 * `import packageJson from '…/package.json'` reads the package's identity (name, version, where it
 * lives: the links a report may make to its docs): bundle that, not the whole file.
 */
const packageIdentityOnly: Plugin = {
  name: 'package-identity-only',
  setup(pluginBuild) {
    pluginBuild.onLoad({ filter: /[\\/]package\.json$/ }, async ({ path }) => {
      if (path !== join(REPO_ROOT, 'package.json')) return undefined;
      const { name, version, homepage, repository } = JSON.parse(
        await readFile(path, 'utf8')
      ) as Record<string, unknown>;
      return {
        contents: JSON.stringify({ name, version, homepage, repository }),
        loader: 'json',
      };
    });
  },
};

const COMMON: BuildOptions = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: NODE_TARGET,
  // The SDK and friends ship ESM builds: smaller, and splittable.
  mainFields: ['module', 'main'],
  banner: { js: CREATE_REQUIRE_BANNER },
  logLevel: 'warning',
  plugins: [packageIdentityOnly, sdkSchemaTreeShaking],
};

/**
 * The IAM policy engine (AGPL-3.0) is an optional peer dependency, never bundled: loaded from the
 * user's node_modules by a dynamic import when a world file gives policy documents.
 */
const OPTIONAL_PEER_EXTERNALS = ['@cloud-copilot/*'];

/** CLI and API in one build: shared code in shared chunks, the SDK only behind dynamic imports. */
export function nodeEntriesBuildOptions(outDirectory: string): BuildOptions {
  return {
    ...COMMON,
    entryPoints: {
      cli: join(REPO_ROOT, 'lambda/cli/run.ts'),
      index: join(REPO_ROOT, 'lambda/api.ts'),
    },
    external: OPTIONAL_PEER_EXTERNALS,
    outdir: outDirectory,
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    minify: true,
  };
}

/** Builds the CLI and API; returns the files bundled into them (for the notices). */
export async function buildNodeEntries(outDirectory: string): Promise<string[]> {
  const result = await build({
    ...nodeEntriesBuildOptions(outDirectory),
    absWorkingDir: REPO_ROOT,
    metafile: true,
  });
  return bundledInputs(result.metafile, REPO_ROOT);
}

/** The construct for consumers' CDK apps: their aws-cdk-lib and constructs, not a copy. */
export async function buildCdkEntry(outDirectory: string): Promise<string[]> {
  const result = await build({
    ...COMMON,
    entryPoints: { index: join(REPO_ROOT, 'infra/index.ts') },
    outdir: outDirectory,
    external: ['aws-cdk-lib', 'aws-cdk-lib/*', 'constructs'],
    // Construct ids, class names and stack traces stay readable in a consumer's synth errors.
    minify: false,
    absWorkingDir: REPO_ROOT,
    metafile: true,
  });
  return bundledInputs(result.metafile, REPO_ROOT);
}

/** The files (absolute paths) that put code into at least one output of a build. */
export function bundledInputs(metafile: Metafile, workingDirectory: string): string[] {
  const files = new Set<string>();
  for (const output of Object.values(metafile.outputs)) {
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
      if (bytesInOutput > 0) files.add(resolve(workingDirectory, input));
    }
  }
  return [...files].sort();
}

/**
 * The files bundled into prebuilt Lambda bundles, read from their source maps (every `.map` under
 * `directory`): esbuild lists there each file that put code into the output.
 */
export function sourceMapInputs(directory: string): string[] {
  const files = new Set<string>();
  for (const file of filesUnder(directory)) {
    if (!file.endsWith('.map')) continue;
    const map = JSON.parse(readFileSync(file, 'utf8')) as {
      sources?: unknown;
      sourceRoot?: unknown;
    };
    const root = typeof map.sourceRoot === 'string' ? map.sourceRoot : '';
    for (const source of Array.isArray(map.sources) ? map.sources : []) {
      if (typeof source === 'string') files.add(resolve(dirname(file), root, source));
    }
  }
  return [...files].sort();
}

async function emitDeclarations(outDirectory: string): Promise<void> {
  try {
    await promisify(execFile)(
      process.execPath,
      [
        join(REPO_ROOT, 'node_modules/typescript/bin/tsc'),
        '-p',
        join(REPO_ROOT, 'tsconfig.build.json'),
        '--outDir',
        outDirectory,
      ],
      { cwd: REPO_ROOT, maxBuffer: 16 * 1024 * 1024 }
    );
  } catch (error) {
    const failed = error as { stdout?: string; message: string };
    throw new Error(`declarations: ${failed.message}\n${failed.stdout ?? ''}`);
  }
}

/** The notices file, beside the bundles it is about. */
export const NOTICES_FILE = 'THIRD-PARTY-NOTICES.txt';

/** What a complete build leaves in the output directory (`--unless-built` looks for these). */
export const BUILD_OUTPUTS: readonly string[] = [
  'lib/cli.js',
  'lib/index.js',
  'cdk/index.js',
  ...HANDLER_NAMES.map((handler) => `lambda/${handler}/index.mjs`),
  'types/lambda/api.d.ts',
  'types/infra/index.d.ts',
  NOTICES_FILE,
];

export async function buildPackage(outDirectory = DEFAULT_OUT_DIRECTORY): Promise<void> {
  rmSync(outDirectory, { recursive: true, force: true });
  const [libInputs, cdkInputs] = await Promise.all([
    buildNodeEntries(join(outDirectory, 'lib')),
    buildCdkEntry(join(outDirectory, 'cdk')),
    buildLambdaBundles(join(outDirectory, 'lambda')),
    emitDeclarations(join(outDirectory, 'types')).then(() =>
      makeDeclarationsSelfContained(join(outDirectory, 'types'))
    ),
  ]);
  const packages = bundledPackages([
    ...libInputs.map((file) => ({ file, part: 'dist/lib' })),
    ...cdkInputs.map((file) => ({ file, part: 'dist/cdk' })),
    ...sourceMapInputs(join(outDirectory, 'lambda')).map((file) => ({
      file,
      part: 'dist/lambda',
    })),
  ]);
  const self = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
    name: string;
    version: string;
  };
  writeFileSync(join(outDirectory, NOTICES_FILE), thirdPartyNotices(self, packages));
}

// ---------------------------------------------------------------------------------------------
// Third-party notices: every npm package whose code a bundle holds, its license and license text.

export interface BundledPackage {
  readonly name: string;
  readonly version: string;
  /** The package.json `license` (or legacy `licenses`) as written; `UNKNOWN` when absent. */
  readonly license: string;
  readonly homepage?: string;
  /**
   * The license and notice texts: the package's LICENSE, LICENCE, COPYING and NOTICE files, or,
   * when it ships none, the standard text of its license (`source` says which).
   */
  readonly licenseTexts: readonly { readonly source: string; readonly text: string }[];
  /** Which parts of dist/ hold its code. */
  readonly parts: readonly string[];
}

const NODE_MODULES = `${sep}node_modules${sep}`;

/** The package directory a bundled file belongs to (the innermost node_modules entry). */
export function packageDirectoryOf(file: string): string | undefined {
  const at = file.lastIndexOf(NODE_MODULES);
  if (at < 0) return undefined;
  const [first, second] = file.slice(at + NODE_MODULES.length).split(sep);
  if (first === undefined || second === undefined) return undefined;
  const name = first.startsWith('@') ? `${first}${sep}${second}` : first;
  return file.slice(0, at + NODE_MODULES.length) + name;
}

const LICENSE_FILE = /^(licen[cs]e|copying|notice)([.-].*)?$/i;

/** The license and notice files at a package's root (LICENSE, LICENCE.txt, COPYING, NOTICE…). */
function licenseFilesIn(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true })
    .filter((entry) => entry.isFile() && LICENSE_FILE.test(entry.name))
    .map((entry) => entry.name)
    .sort();
}

function licenseOf(manifest: Record<string, unknown>): string {
  const { license, licenses } = manifest;
  if (typeof license === 'string') return license;
  if (typeof license === 'object' && license !== null && 'type' in license) {
    return String(license.type);
  }
  if (Array.isArray(licenses)) {
    return licenses
      .map((entry: unknown) =>
        typeof entry === 'object' && entry !== null && 'type' in entry ? String(entry.type) : ''
      )
      .filter(Boolean)
      .join(' OR ');
  }
  return 'UNKNOWN';
}

/** Who a package's copyright belongs to, as its package.json says (author, else contributors). */
function holderOf(manifest: Record<string, unknown>): string {
  const nameOf = (person: unknown): string | undefined =>
    typeof person === 'string'
      ? person
      : typeof person === 'object' && person !== null && 'name' in person
        ? String(person.name)
        : undefined;
  return nameOf(manifest.author) ?? `the ${String(manifest.name)} authors`;
}

const MIT_PERMISSION = [
  'Permission is hereby granted, free of charge, to any person obtaining a copy',
  'of this software and associated documentation files (the "Software"), to deal',
  'in the Software without restriction, including without limitation the rights',
  'to use, copy, modify, merge, publish, distribute, sublicense, and/or sell',
  'copies of the Software, and to permit persons to whom the Software is',
  'furnished to do so',
];
const MIT_WARRANTY = [
  'THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR',
  'IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,',
  'FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE',
  'AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER',
  'LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,',
  'OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE',
  'SOFTWARE.',
];

/**
 * The standard text of a license, for packages that ship no license file (the AWS SDK's internal
 * packages, Powertools, Middy): the copyright line names the holder their package.json gives.
 * A bundled package with neither a file nor a license listed here fails the build.
 */
/**
 * Holders a package's license names that its package.json does not: @bufbuild/protobuf's
 * BSD-3-Clause part is its varint code, taken from Google's protobuf JavaScript runtime (the
 * header of dist/esm/wire/varint.js says so).
 */
const LICENSE_HOLDERS: Readonly<Record<string, string>> = {
  '@bufbuild/protobuf BSD-3-Clause': '2008 Google Inc. All rights reserved.',
};

const STANDARD_LICENSE_TEXTS: Readonly<Record<string, (holder: string) => string>> = {
  'BSD-3-Clause': (holder) =>
    [
      `Copyright ${holder}`,
      '',
      'Redistribution and use in source and binary forms, with or without modification, are',
      'permitted provided that the following conditions are met:',
      '',
      '1. Redistributions of source code must retain the above copyright notice, this list of',
      '   conditions and the following disclaimer.',
      '',
      '2. Redistributions in binary form must reproduce the above copyright notice, this list of',
      '   conditions and the following disclaimer in the documentation and/or other materials',
      '   provided with the distribution.',
      '',
      '3. Neither the name of the copyright holder nor the names of its contributors may be used',
      '   to endorse or promote products derived from this software without specific prior',
      '   written permission.',
      '',
      'THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS" AND ANY EXPRESS',
      'OR IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE IMPLIED WARRANTIES OF',
      'MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE ARE DISCLAIMED. IN NO EVENT SHALL THE',
      'COPYRIGHT HOLDER OR CONTRIBUTORS BE LIABLE FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL,',
      'EXEMPLARY, OR CONSEQUENTIAL DAMAGES (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF',
      'SUBSTITUTE GOODS OR SERVICES; LOSS OF USE, DATA, OR PROFITS; OR BUSINESS INTERRUPTION)',
      'HOWEVER CAUSED AND ON ANY THEORY OF LIABILITY, WHETHER IN CONTRACT, STRICT LIABILITY, OR',
      'TORT (INCLUDING NEGLIGENCE OR OTHERWISE) ARISING IN ANY WAY OUT OF THE USE OF THIS',
      'SOFTWARE, EVEN IF ADVISED OF THE POSSIBILITY OF SUCH DAMAGE.',
    ].join('\n'),
  'Apache-2.0': () => readFileSync(join(REPO_ROOT, 'LICENSE'), 'utf8'),
  MIT: (holder) =>
    [
      'MIT License',
      '',
      `Copyright (c) ${holder}`,
      '',
      `${MIT_PERMISSION.join('\n')}, subject to the following conditions:`,
      '',
      'The above copyright notice and this permission notice shall be included in all',
      'copies or substantial portions of the Software.',
      '',
      ...MIT_WARRANTY,
    ].join('\n'),
  'MIT-0': (holder) =>
    [
      'MIT No Attribution',
      '',
      `Copyright ${holder}`,
      '',
      `${MIT_PERMISSION.join('\n')}.`,
      '',
      ...MIT_WARRANTY,
    ].join('\n'),
};

function licenseTextsOf(
  directory: string,
  manifest: Record<string, unknown>,
  license: string
): { source: string; text: string }[] {
  const files = licenseFilesIn(directory).map((file) => ({
    source: file,
    text: readFileSync(join(directory, file), 'utf8'),
  }));
  if (files.length > 0) return files;
  // An SPDX conjunction, "(Apache-2.0 AND BSD-3-Clause)": every license applies, so every text ships.
  const parts = license.replace(/^\((.*)\)$/, '$1').split(' AND ');
  return parts.map((part) => {
    const standard = STANDARD_LICENSE_TEXTS[part];
    if (standard === undefined) {
      throw new Error(
        `${String(manifest.name)}@${String(manifest.version)} (${directory}) is bundled but ships no ` +
          `license file, and its license "${part}" has no standard text here: add one to STANDARD_LICENSE_TEXTS`
      );
    }
    const holder = LICENSE_HOLDERS[`${String(manifest.name)} ${part}`] ?? holderOf(manifest);
    return {
      source: `standard ${part} text: the package ships no license file`,
      text: standard(holder),
    };
  });
}

function homepageOf(manifest: Record<string, unknown>): string | undefined {
  if (typeof manifest.homepage === 'string') return manifest.homepage;
  const repository = manifest.repository;
  if (typeof repository === 'string') return repository;
  if (typeof repository === 'object' && repository !== null && 'url' in repository) {
    return String(repository.url);
  }
  return undefined;
}

/**
 * The packages the bundled files come from, one entry per name and version, sorted by name. Files
 * outside node_modules (this repository's own sources) are not third-party and are left out.
 */
export function bundledPackages(
  inputs: Iterable<{ readonly file: string; readonly part: string }>
): BundledPackage[] {
  const byDirectory = new Map<string, Set<string>>();
  for (const { file, part } of inputs) {
    const directory = packageDirectoryOf(file);
    if (directory === undefined) continue;
    const parts = byDirectory.get(directory) ?? new Set<string>();
    parts.add(part);
    byDirectory.set(directory, parts);
  }
  const packages = new Map<string, BundledPackage>();
  for (const [directory, parts] of byDirectory) {
    const manifest = JSON.parse(readFileSync(join(directory, 'package.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    const name = String(manifest.name);
    const version = String(manifest.version);
    const key = `${name}@${version}`;
    const known = packages.get(key);
    if (known !== undefined) {
      packages.set(key, { ...known, parts: [...new Set([...known.parts, ...parts])].sort() });
      continue;
    }
    const homepage = homepageOf(manifest);
    const license = licenseOf(manifest);
    packages.set(key, {
      name,
      version,
      license,
      ...(homepage === undefined ? {} : { homepage }),
      licenseTexts: licenseTextsOf(directory, manifest, license),
      parts: [...parts].sort(),
    });
  }
  return [...packages.values()].sort(
    (a, b) => a.name.localeCompare(b.name) || a.version.localeCompare(b.version)
  );
}

/** Text as it is, but with line endings and trailing blanks normalised. */
function normalised(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .trim();
}

/**
 * The notices file: a list of the bundled packages (name, version, license, where), then each
 * distinct license text once, naming the packages it comes from.
 */
export function thirdPartyNotices(
  self: { readonly name: string; readonly version: string },
  packages: readonly BundledPackage[]
): string {
  const texts = new Map<string, string[]>();
  for (const bundled of packages) {
    for (const { source, text } of bundled.licenseTexts) {
      const key = normalised(text);
      texts.set(key, [...(texts.get(key) ?? []), `${bundled.name}@${bundled.version} (${source})`]);
    }
  }
  const rule = '-'.repeat(100);
  const title = `Third-party software bundled in ${self.name} ${self.version}`;
  return [
    title,
    '='.repeat(title.length),
    '',
    `${self.name} is licensed under the Apache License 2.0 (LICENSE). Its build bundles code from`,
    'the npm packages below into dist/ (dist/lib: the CLI and the API; dist/cdk: the construct;',
    'dist/lambda: the Lambda bundles). Each keeps its own license, listed here with the license',
    'and notice files the package ships (the standard text of its license when it ships none); a',
    'text shared by several packages is given once.',
    '',
    `Packages (${packages.length})`,
    rule,
    ...packages.map(
      (bundled) =>
        `${bundled.name}@${bundled.version}  ${bundled.license}  [${bundled.parts.join(', ')}]` +
        (bundled.homepage === undefined ? '' : `  ${bundled.homepage}`)
    ),
    '',
    `License and notice texts (${texts.size})`,
    rule,
    ...[...texts].flatMap(([text, users]) => ['', `From: ${users.join(', ')}`, '', text, '', rule]),
    '',
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------
// Self-contained declarations: a consumer type-checks them (skipLibCheck: false) with only the
// package installed, so they may name nothing but Node's types and the peer dependencies.

/** The declaration entries: `types` of the package's exports. */
const DECLARATION_ENTRIES = ['lambda/api.d.ts', 'infra/index.d.ts'];

/** Bare imports left as they are: the consumer has them (Node, the optional peer dependencies). */
const DECLARATION_EXTERNALS = [
  /^node:/,
  /^aws-cdk-lib(\/.*)?$/,
  /^constructs$/,
  /^@cloud-copilot\/iam-simulate(\/.*)?$/,
];

/** Where bundled packages' declarations are copied, inside the types directory. */
export const DECLARATIONS_VENDOR_DIRECTORY = 'vendor';

/** Where `from '…'`, `import('…')`, `import '…'` open their specifier's quote. */
const SPECIFIER_START = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])/g;
const REFERENCE = /\/\/\/\s*<reference\s+(?:types|lib|path)\s*=\s*(['"])([^'"\n]+)\1/g;

/**
 * The text with its comments and the contents of its string literals blanked out (same length,
 * quotes and line breaks kept), so that import specifiers are only looked for in code: JSDoc and
 * string types may quote `import "x"`.
 */
export function codeMask(text: string): string {
  let result = '';
  let at = 0;
  while (at < text.length) {
    const char = text[at] as string;
    const next = text[at + 1];
    if (char === '/' && (next === '/' || next === '*')) {
      const end =
        next === '/'
          ? (text.indexOf('\n', at) + 1 || text.length + 1) - 1
          : (text.indexOf('*/', at + 2) + 1 || text.length - 1) + 1;
      result += text.slice(at, end).replace(/[^\n]/g, ' ');
      at = end;
    } else if (char === "'" || char === '"' || char === '`') {
      let end = at + 1;
      while (end < text.length && text[end] !== char) end += text[end] === '\\' ? 2 : 1;
      result += `${char}${text.slice(at + 1, end).replace(/[^\n]/g, ' ')}${end < text.length ? char : ''}`;
      at = end + 1;
    } else {
      result += char;
      at += 1;
    }
  }
  return result;
}

/** Each import specifier in code: where its text starts (after the quote), and the text. */
function specifiersOf(text: string): { readonly start: number; readonly specifier: string }[] {
  const mask = codeMask(text);
  return [...mask.matchAll(SPECIFIER_START)].map((match) => {
    const quote = match[2] as string;
    const start = (match.index ?? 0) + (match[1] as string).length + 1;
    return { start, specifier: text.slice(start, mask.indexOf(quote, start)) };
  });
}

function filesUnder(directory: string): string[] {
  if (!existsSync(directory)) return [];
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(directory, entry.name)) : [join(directory, entry.name)]
  );
}

/** The declaration file a relative JavaScript specifier resolves to. */
function declarationFor(fromFile: string, specifier: string): string {
  const target = resolve(dirname(fromFile), specifier);
  for (const [js, dts] of [
    ['.js', '.d.ts'],
    ['.mjs', '.d.mts'],
    ['.cjs', '.d.cts'],
  ] as const) {
    if (target.endsWith(js)) return target.slice(0, -js.length) + dts;
  }
  throw new Error(`${fromFile}: unsupported import "${specifier}" in a declaration`);
}

function relativeSpecifier(fromFile: string, toDeclaration: string): string {
  const path = relative(dirname(fromFile), toDeclaration)
    .split(sep)
    .join('/')
    .replace(/\.d\.ts$/, '.js')
    .replace(/\.d\.mts$/, '.mjs')
    .replace(/\.d\.cts$/, '.cjs');
  return path.startsWith('.') ? path : `./${path}`;
}

/** The ESM declaration entry of an installed package (`import` target's sibling `.d.ts`). */
function packageDeclarationEntry(directory: string): string {
  const manifest = JSON.parse(readFileSync(join(directory, 'package.json'), 'utf8')) as {
    exports?: unknown;
    types?: unknown;
    typings?: unknown;
    module?: unknown;
  };
  const root =
    typeof manifest.exports === 'object' && manifest.exports !== null && '.' in manifest.exports
      ? (manifest.exports as Record<string, unknown>)['.']
      : undefined;
  const candidates: string[] = [];
  const conditions =
    typeof root === 'object' && root !== null ? (root as Record<string, unknown>) : {};
  const imported = conditions.import;
  if (typeof imported === 'object' && imported !== null && 'types' in imported) {
    candidates.push(String(imported.types));
  }
  for (const target of [imported, conditions.default, manifest.module]) {
    if (typeof target === 'string') {
      candidates.push(target.replace(/\.js$/, '.d.ts').replace(/\.mjs$/, '.d.mts'));
    }
  }
  for (const types of [conditions.types, manifest.types, manifest.typings]) {
    if (typeof types === 'string') candidates.push(types);
  }
  const found = candidates.map((file) => join(directory, file)).find((file) => existsSync(file));
  if (found === undefined) throw new Error(`no ESM declarations found in ${directory}`);
  return found;
}

/**
 * Rewrites the emitted declarations so that the package's types entries compile on their own:
 * keeps only the files the entries reach, copies the declarations of the bundled packages they
 * import (their whole closure, which must itself import no other package) under `vendor/`, and
 * points those imports there. Any other bare import is a build error.
 */
export function makeDeclarationsSelfContained(
  typesDirectory: string,
  options: {
    readonly entries?: readonly string[];
    readonly packageDirectory?: (name: string) => string;
  } = {}
): { readonly kept: readonly string[]; readonly vendored: readonly string[] } {
  const packageDirectory =
    options.packageDirectory ?? ((name: string) => join(REPO_ROOT, 'node_modules', name));
  const kept = new Set<string>();
  const vendoredEntries = new Map<string, string>();

  const vendor = (name: string): string => {
    const known = vendoredEntries.get(name);
    if (known !== undefined) return known;
    const source = packageDirectory(name);
    const target = join(typesDirectory, DECLARATIONS_VENDOR_DIRECTORY, name);
    const entry = packageDeclarationEntry(source);
    const pending = [entry];
    const copied = new Set<string>();
    while (pending.length > 0) {
      const file = pending.pop() as string;
      if (copied.has(file)) continue;
      copied.add(file);
      const text = readFileSync(file, 'utf8');
      for (const { specifier } of specifiersOf(text)) {
        if (specifier.startsWith('.')) pending.push(declarationFor(file, specifier));
        else if (!DECLARATION_EXTERNALS.some((allowed) => allowed.test(specifier))) {
          throw new Error(
            `declarations of ${name} (${relative(source, file)}) import "${specifier}": not supported`
          );
        }
      }
      const destination = join(target, relative(source, file));
      mkdirSync(dirname(destination), { recursive: true });
      writeFileSync(destination, text);
      kept.add(destination);
    }
    // The copied declarations are the package's work: its license goes with them.
    for (const file of licenseFilesIn(source)) {
      copyFileSync(join(source, file), join(target, file));
      kept.add(join(target, file));
    }
    const manifest = JSON.parse(readFileSync(join(source, 'package.json'), 'utf8')) as {
      type?: unknown;
    };
    // Module format of the copied `.d.ts` files, as in the package they come from.
    writeFileSync(
      join(target, 'package.json'),
      `${JSON.stringify({ type: manifest.type === 'module' ? 'module' : 'commonjs' })}\n`
    );
    kept.add(join(target, 'package.json'));
    const vendoredEntry = join(target, relative(source, entry));
    vendoredEntries.set(name, vendoredEntry);
    return vendoredEntry;
  };

  const pending = (options.entries ?? DECLARATION_ENTRIES).map((entry) =>
    join(typesDirectory, entry)
  );
  while (pending.length > 0) {
    const file = pending.pop() as string;
    if (kept.has(file)) continue;
    if (!existsSync(file)) throw new Error(`declaration ${file} is missing`);
    kept.add(file);
    const text = readFileSync(file, 'utf8');
    for (const [, , reference] of text.matchAll(REFERENCE)) {
      throw new Error(`${file}: /// <reference> to "${reference}" in a shipped declaration`);
    }
    let rewritten = text;
    // From the end, so the earlier offsets stay valid.
    for (const { start, specifier } of specifiersOf(text).reverse()) {
      if (specifier.startsWith('.')) {
        pending.push(declarationFor(file, specifier));
        continue;
      }
      if (DECLARATION_EXTERNALS.some((allowed) => allowed.test(specifier))) continue;
      const name = specifier.startsWith('@')
        ? specifier.split('/').slice(0, 2).join('/')
        : (specifier.split('/')[0] as string);
      if (name !== specifier) {
        throw new Error(`${file}: subpath import "${specifier}" cannot be vendored`);
      }
      rewritten =
        rewritten.slice(0, start) +
        relativeSpecifier(file, vendor(name)) +
        rewritten.slice(start + specifier.length);
    }
    if (rewritten !== text) writeFileSync(file, rewritten);
  }

  for (const file of filesUnder(typesDirectory)) if (!kept.has(file)) rmSync(file);
  removeEmptyDirectories(typesDirectory);
  return {
    kept: [...kept].map((file) => relative(typesDirectory, file).split(sep).join('/')).sort(),
    vendored: [...vendoredEntries.keys()].sort(),
  };
}

function removeEmptyDirectories(directory: string): void {
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    if (entry.isDirectory()) removeEmptyDirectories(join(directory, entry.name));
  }
  if (readdirSync(directory).length === 0) rmdirSync(directory);
}

/** Whether `outDirectory` holds a complete build (`--unless-built`). */
export function isBuilt(outDirectory: string): boolean {
  return BUILD_OUTPUTS.every((file) => existsSync(join(outDirectory, file)));
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const unlessBuilt = args.includes('--unless-built');
  const directory = args.find((arg) => !arg.startsWith('--'));
  const outDirectory = directory === undefined ? DEFAULT_OUT_DIRECTORY : resolve(directory);
  if (!(unlessBuilt && isBuilt(outDirectory))) await buildPackage(outDirectory);
}
