import { opendir } from 'node:fs/promises';
import { join } from 'node:path';
import type { InputError } from '../../core/report.js';

const MANIFEST_EXTENSIONS = ['.yaml', '.yml', '.json'];

function isManifestName(name: string): boolean {
  return MANIFEST_EXTENSIONS.some((extension) => name.endsWith(extension));
}

export interface DirectoryEntry {
  readonly name: string;
  /** A real directory; a symbolic link to one is not followed (no cycles). */
  readonly isDirectory: boolean;
}

/** Lists one directory; streamed, so a huge directory is never held whole. */
export type ListDirectory = (directory: string) => AsyncIterable<DirectoryEntry>;

async function* listDirectory(directory: string): AsyncIterable<DirectoryEntry> {
  for await (const entry of await opendir(directory, { bufferSize: 256 })) {
    yield { name: entry.name, isDirectory: entry.isDirectory() };
  }
}

export interface WalkResult {
  /** Manifest files in name order, depth first; empty when the walk passed the entry budget. */
  readonly files: string[];
  /** Subdirectories that could not be listed. */
  readonly errors: InputError[];
  /** True when the tree held more manifest files and directories than the budget allowed. */
  readonly overBudget: boolean;
}

const byName = new Intl.Collator().compare;

/**
 * Every manifest file (.yaml, .yml, .json) under `root`, depth first in name order. Iterative with
 * an explicit stack, so neither depth nor width touches the call stack; every manifest file and
 * directory met is taken from `budget.entriesLeft`, and the walk stops once it runs out.
 */
export async function walkManifestFiles(
  root: string,
  budget: { entriesLeft: number },
  describeError: (error: unknown) => string,
  list: ListDirectory = listDirectory
): Promise<WalkResult> {
  const files: string[] = [];
  const errors: InputError[] = [];
  const pending: { path: string; isDirectory: boolean }[] = [{ path: root, isDirectory: true }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (!next.isDirectory) {
      files.push(next.path);
      continue;
    }
    const children: DirectoryEntry[] = [];
    try {
      for await (const entry of list(next.path)) {
        if (!entry.isDirectory && !isManifestName(entry.name)) continue;
        budget.entriesLeft -= 1;
        if (budget.entriesLeft < 0) return { files: [], errors, overBudget: true };
        children.push(entry);
      }
    } catch (error) {
      errors.push({ source: next.path, message: describeError(error) });
      continue;
    }
    children.sort((a, b) => byName(a.name, b.name));
    for (let index = children.length - 1; index >= 0; index--) {
      const child = children[index] as DirectoryEntry;
      pending.push({ path: join(next.path, child.name), isDirectory: child.isDirectory });
    }
  }
  return { files, errors, overBudget: false };
}
