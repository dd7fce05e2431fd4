import { chmodSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type DirectoryEntry,
  type ListDirectory,
  walkManifestFiles,
} from '../../../lambda/adapters/files/walk.js';
import { tempTree } from '../../cli/support/run-cli.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

const describeError = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** An in-memory tree: directory path → its entries (listed in the order given). */
function memoryLister(tree: Map<string, DirectoryEntry[]>): ListDirectory {
  return async function* (directory) {
    const entries = tree.get(directory);
    if (entries === undefined) throw new Error(`cannot list ${directory}`);
    yield* entries;
  };
}

const file = (name: string): DirectoryEntry => ({ name, isDirectory: false });
const dir = (name: string): DirectoryEntry => ({ name, isDirectory: true });

describe('walkManifestFiles', () => {
  it('lists manifest files depth first in name order, skipping other files', async () => {
    const list = memoryLister(
      new Map([
        ['/r', [file('c.yaml'), dir('b'), file('a.json'), file('notes.txt')]],
        ['/r/b', [file('z.yml'), file('README.md')]],
      ])
    );
    const walked = await walkManifestFiles('/r', { entriesLeft: 100 }, describeError, list);
    expect(walked).toEqual({
      files: ['/r/a.json', '/r/b/z.yml', '/r/c.yaml'],
      errors: [],
      overBudget: false,
    });
  });

  it('walks 200,000 entries in one directory without a spread or recursion overflowing', async () => {
    const names = Array.from({ length: 200_000 }, (_, index) => file(`f${index}.yaml`));
    const walked = await walkManifestFiles(
      '/wide',
      { entriesLeft: 250_000 },
      describeError,
      memoryLister(new Map([['/wide', names]]))
    );
    expect(walked.overBudget).toBe(false);
    expect(walked.files).toHaveLength(200_000);
    expect(walked.files[0]).toBe('/wide/f0.yaml');
  });

  it('walks a 2,000-level deep tree iteratively', async () => {
    const tree = new Map<string, DirectoryEntry[]>();
    let path = '/deep';
    for (let level = 0; level < 2_000; level++) {
      tree.set(path, [dir('d')]);
      path = `${path}/d`;
    }
    tree.set(path, [file('leaf.yaml')]);
    const walked = await walkManifestFiles(
      '/deep',
      { entriesLeft: 3_000 },
      describeError,
      memoryLister(tree)
    );
    expect(walked.files).toEqual([`${path}/leaf.yaml`]);
  });

  it('stops once the budget of files and directories is spent, returning no files', async () => {
    let listed = 0;
    const list: ListDirectory = async function* () {
      for (; listed < 1_000_000; listed++) yield file(`f${listed}.yaml`);
    };
    const budget = { entriesLeft: 1_000 };
    const walked = await walkManifestFiles('/huge', budget, describeError, list);
    expect(walked).toEqual({ files: [], errors: [], overBudget: true });
    // The listing itself was abandoned at the cap, not read to its end.
    expect(listed).toBe(1_000);
  });

  it('counts directories against the budget too', async () => {
    const list = memoryLister(
      new Map([
        ['/r', [dir('a'), dir('b')]],
        ['/r/a', [file('x.yaml')]],
        ['/r/b', [file('y.yaml')]],
      ])
    );
    expect(
      (await walkManifestFiles('/r', { entriesLeft: 4 }, describeError, list)).overBudget
    ).toBe(false);
    expect(
      (await walkManifestFiles('/r', { entriesLeft: 3 }, describeError, list)).overBudget
    ).toBe(true);
  });

  it('reports a directory it cannot list and walks the rest', async () => {
    const list = memoryLister(new Map([['/r', [dir('locked'), file('a.yaml')]]]));
    const walked = await walkManifestFiles('/r', { entriesLeft: 10 }, describeError, list);
    expect(walked.files).toEqual(['/r/a.yaml']);
    expect(walked.errors).toEqual([{ source: '/r/locked', message: 'cannot list /r/locked' }]);
  });

  it('walks a real tree without following symbolic links to directories', async () => {
    const { dir: root, cleanup } = tempTree({ 'a/b.yaml': '', 'c.yml': '', 'd.txt': '' });
    cleanups.push(cleanup);
    symlinkSync(join(root, 'a'), join(root, 'loop'));
    mkdirSync(join(root, 'empty'));
    const walked = await walkManifestFiles(root, { entriesLeft: 100 }, describeError);
    expect(walked.files).toEqual([join(root, 'a', 'b.yaml'), join(root, 'c.yml')]);
    expect(walked.errors).toEqual([]);
  });

  it.skipIf(process.getuid?.() === 0)('reports an unreadable real directory', async () => {
    const { dir: root, cleanup } = tempTree({ 'locked/a.yaml': '', 'b.yaml': '' });
    cleanups.push(() => {
      chmodSync(join(root, 'locked'), 0o755);
      cleanup();
    });
    chmodSync(join(root, 'locked'), 0o000);
    const walked = await walkManifestFiles(root, { entriesLeft: 100 }, describeError);
    expect(walked.files).toEqual([join(root, 'b.yaml')]);
    expect(walked.errors.map((error) => error.source)).toEqual([join(root, 'locked')]);
  });
});
