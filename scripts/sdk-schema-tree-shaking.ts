// esbuild plugin: lets the bundler drop the AWS SDK schemas of operations a bundle never calls.
// Each SDK v3 client keeps every shape of its service in one module (`schemas/schemas_0.js`),
// written as top-level arrays whose trait objects use computed keys naming module constants
// (`{ [_xN]: _m }` with `const _xN = "xmlName"`). esbuild cannot prove a computed key free of side
// effects, so it keeps every statement of the module: all of EC2's schemas (550 KB minified) for
// one DescribeImages call. Written with the constants' string literals as keys the arrays are pure
// and tree-shaking keeps only the shapes that used commands reach. The values are unchanged: a key
// is replaced only by the literal its constant holds.
import { readFile } from 'node:fs/promises';
import type { Plugin } from 'esbuild';

/** An SDK client's schema module (clients and the nested clients of credential providers). */
export const SDK_SCHEMA_MODULE =
  /[\\/]node_modules[\\/]@aws-sdk[\\/][^\\/]+[\\/]dist-es[\\/](?:.+[\\/])?schemas[\\/]schemas_\d+\.js$/;

/** `const _xN = "xmlName";`: the module's string constants, by name. */
const STRING_CONSTANT = /^const (_\w+) = ("(?:[^"\\\n]|\\.)*");$/gm;
/** A computed key naming an identifier, where an object literal's key can stand. */
const COMPUTED_KEY = /(?<=[{,]\s*)\[(_\w+)\]:/g;

/** The module with every computed key naming one of its string constants written as that string. */
export function withLiteralKeys(source: string): string {
  const constants = new Map<string, string>();
  for (const [, name, literal] of source.matchAll(STRING_CONSTANT)) {
    constants.set(name as string, literal as string);
  }
  return source.replace(COMPUTED_KEY, (key, name: string) => {
    const literal = constants.get(name);
    return literal === undefined ? key : `${literal}:`;
  });
}

export const sdkSchemaTreeShaking: Plugin = {
  name: 'sdk-schema-tree-shaking',
  setup(pluginBuild) {
    pluginBuild.onLoad({ filter: SDK_SCHEMA_MODULE }, async ({ path }) => ({
      contents: withLiteralKeys(await readFile(path, 'utf8')),
      loader: 'js',
    }));
  },
};
