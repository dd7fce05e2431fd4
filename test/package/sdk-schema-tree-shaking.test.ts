// The esbuild plugin that makes the AWS SDK's schema modules tree-shakable
// (scripts/sdk-schema-tree-shaking.ts): same values, and only the used schemas bundled.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import {
  SDK_SCHEMA_MODULE,
  sdkSchemaTreeShaking,
  withLiteralKeys,
} from '../../scripts/sdk-schema-tree-shaking.js';
import { REPO_ROOT } from './pack.js';

const scratch = mkdtempSync(join(tmpdir(), 'sdk-schema-tree-shaking-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const EC2_SCHEMAS = 'node_modules/@aws-sdk/client-ec2/dist-es/schemas/schemas_0.js';

/** `contents` bundled as an ESM module, with or without the plugin. */
async function bundle(contents: string, plugins: Plugin[], minify = true) {
  const result = await build({
    stdin: { contents, resolveDir: REPO_ROOT, loader: 'js' },
    bundle: true,
    write: false,
    metafile: true,
    format: 'esm',
    platform: 'node',
    mainFields: ['module', 'main'],
    minify,
    absWorkingDir: REPO_ROOT,
    logLevel: 'error',
    plugins,
  });
  const bytesOf = (input: string) =>
    Object.values(result.metafile.outputs).reduce(
      (sum, output) => sum + (output.inputs[input]?.bytesInOutput ?? 0),
      0
    );
  return { text: result.outputFiles[0]?.text ?? '', bytesOf };
}

/** A schema value with its thunks (`() => Shape$`) compared by their source (names kept). */
function comparable(value: unknown): unknown {
  if (typeof value === 'function') return `fn:${String(value)}`;
  if (Array.isArray(value)) return value.map(comparable);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, comparable(item)]));
  }
  return value;
}

describe('withLiteralKeys', () => {
  it('writes computed keys naming string constants as those strings, and nothing else', () => {
    // Prepare
    const source = [
      'const _xN = "xmlName";',
      'const _q = "a\\"b";',
      'export var A$ = [3, n0, _A, 0, [_xN, _q], [[0, { [_xN]: _m,',
      '    [_q]: 1 }], [0, { [_other]: 2 }]]];',
      'export var B$ = flag ? [_xN]: [_q];',
    ].join('\n');
    // Act
    const rewritten = withLiteralKeys(source);
    // Assess
    expect(rewritten).toBe(
      [
        'const _xN = "xmlName";',
        'const _q = "a\\"b";',
        'export var A$ = [3, n0, _A, 0, [_xN, _q], [[0, { "xmlName": _m,',
        '    "a\\"b": 1 }], [0, { [_other]: 2 }]]];',
        // Not an object key: an array in a conditional expression stays as it is.
        'export var B$ = flag ? [_xN]: [_q];',
      ].join('\n')
    );
  });

  it('applies to every client’s schema modules, nested clients included, and to nothing else', () => {
    // Assess
    for (const path of [
      `/x/${EC2_SCHEMAS}`,
      '/x/node_modules/@aws-sdk/nested-clients/dist-es/submodules/sts/schemas/schemas_0.js',
    ]) {
      expect(SDK_SCHEMA_MODULE.test(path), path).toBe(true);
    }
    for (const path of [
      '/x/node_modules/@aws-sdk/client-ec2/dist-es/EC2Client.js',
      '/x/node_modules/@smithy/core/dist-es/submodules/schema/index.js',
      '/x/lambda/core/schemas/schemas_0.js',
    ]) {
      expect(SDK_SCHEMA_MODULE.test(path), path).toBe(false);
    }
  });
});

describe('the plugin', () => {
  it('leaves every schema of EC2 (the largest client) as it was', async () => {
    // Prepare: every export of the module, bundled both ways, names kept.
    const entry = `export * from './${EC2_SCHEMAS}';`;
    const [plain, rewritten] = await Promise.all([
      bundle(entry, [], false),
      bundle(entry, [sdkSchemaTreeShaking], false),
    ]);
    writeFileSync(join(scratch, 'plain.mjs'), plain.text);
    writeFileSync(join(scratch, 'rewritten.mjs'), rewritten.text);
    // Act
    const before = await import(pathToFileURL(join(scratch, 'plain.mjs')).href);
    const after = await import(pathToFileURL(join(scratch, 'rewritten.mjs')).href);
    // Assess
    expect(Object.keys(after).sort()).toEqual(Object.keys(before).sort());
    expect(Object.keys(before).length).toBeGreaterThan(1000);
    expect(comparable({ ...after })).toEqual(comparable({ ...before }));
  });

  it('bundles only the schemas of the operations called', async () => {
    // Prepare
    const entry =
      "import { DescribeImagesCommand, EC2Client } from '@aws-sdk/client-ec2';" +
      'export const images = () => new EC2Client({}).send(new DescribeImagesCommand({}));';
    // Act
    const [plain, rewritten] = await Promise.all([
      bundle(entry, []),
      bundle(entry, [sdkSchemaTreeShaking]),
    ]);
    // Assess: all of EC2's schemas without it, DescribeImages' shapes (a few KB) with it.
    expect(plain.bytesOf(EC2_SCHEMAS)).toBeGreaterThan(400_000);
    expect(rewritten.bytesOf(EC2_SCHEMAS)).toBeGreaterThan(0);
    expect(rewritten.bytesOf(EC2_SCHEMAS)).toBeLessThan(20_000);
    expect(rewritten.text).toContain('DescribeImages');
    expect(rewritten.text).not.toContain('RunInstances');
  });
});
