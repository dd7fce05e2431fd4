// No import cycles in the product's sources (type-only imports included: a cycle of types is still
// two modules that cannot be understood, moved or tested apart).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');
const SOURCE_ROOTS = ['lambda', 'infra', 'bench', 'scripts'];

const IMPORT_PATTERN =
  /(?:import|export)\s[^'";]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

function sourceFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** Relative specifiers only, resolved to the `.ts` file they name. */
function localImports(file: string, text: string): string[] {
  return [...text.matchAll(IMPORT_PATTERN)]
    .map((match) => match[1] ?? match[2] ?? '')
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => resolve(dirname(file), specifier.replace(/\.js$/, '.ts')));
}

/** Strongly connected components with more than one module, or a module importing itself. */
function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const lowLink = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  let counter = 0;
  const visit = (node: string): void => {
    index.set(node, counter);
    lowLink.set(node, counter);
    counter += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        lowLink.set(node, Math.min(lowLink.get(node) ?? 0, lowLink.get(next) ?? 0));
      } else if (onStack.has(next)) {
        lowLink.set(node, Math.min(lowLink.get(node) ?? 0, index.get(next) ?? 0));
      }
    }
    if (lowLink.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop();
      if (member === undefined) break;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || (graph.get(node) ?? []).includes(node)) {
      cycles.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return cycles;
}

describe('import graph', () => {
  it('has no cycles', () => {
    const files = SOURCE_ROOTS.flatMap((dir) => sourceFiles(join(root, dir)));
    const graph = new Map(
      files.map((file) => [file, localImports(file, readFileSync(file, 'utf8'))] as const)
    );
    const cycles = importCycles(graph).map((cycle) => cycle.map((file) => relative(root, file)));
    expect(cycles).toEqual([]);
  });

  it('finds a cycle through three modules, and none in a chain', () => {
    const cyclic = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['a']],
    ]);
    expect(importCycles(cyclic)).toEqual([['a', 'b', 'c']]);
    expect(
      importCycles(
        new Map([
          ['a', ['b']],
          ['b', ['c']],
          ['c', []],
        ])
      )
    ).toEqual([]);
  });

  it('reads type-only, re-export and dynamic imports', () => {
    const text = [
      "import type { A } from './a.js';",
      "export { B } from '../b.js';",
      "const c = await import('./c.js');",
      "import { z } from 'zod';",
    ].join('\n');
    expect(localImports('/x/y/file.ts', text)).toEqual(['/x/y/a.ts', '/x/b.ts', '/x/y/c.ts']);
  });
});
