import { existsSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_INPUT_LIMITS } from '../../../lambda/adapters/files/limits.js';
import {
  createManifestSource,
  loadManifests,
  MAX_MANIFEST_BYTES,
} from '../../../lambda/adapters/files/manifest-source.js';
import type { ClusterContext } from '../../../lambda/core/inventory.js';
import { ConfigError } from '../../../lambda/shared/errors.js';
import { useTempTrees } from '../../cli/support/run-cli.js';
import { mkfifo } from './hostile-inputs.js';

const cluster: ClusterContext = { name: '', partition: 'aws' };

function nodeClassYaml(name: string): string {
  return `apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: ${name}\nspec: {}\n`;
}

const tree = useTempTrees();
afterEach(() => {
  vi.unstubAllEnvs();
});

describe('loadManifests', () => {
  it('searches directories recursively for .yaml, .yml and .json files, in name order', async () => {
    // Prepare
    const dir = tree({
      'b.yaml': nodeClassYaml('b'),
      'a.yml': nodeClassYaml('a'),
      'nested/deeper/c.json': JSON.stringify({
        apiVersion: 'karpenter.k8s.aws/v1',
        kind: 'EC2NodeClass',
        metadata: { name: 'c' },
        spec: {},
      }),
      'notes.txt': nodeClassYaml('ignored'),
      'README.md': 'not a manifest',
    });
    // Act
    const loaded = await loadManifests({ paths: [dir], cluster });
    // Assess
    expect(loaded.errors).toEqual([]);
    expect(loaded.nodeClasses.map((entry) => entry.name)).toEqual(['a', 'b', 'c']);
    expect(loaded.nodeClasses[2]?.source?.file).toBe(join(dir, 'nested', 'deeper', 'c.json'));
  });

  it('reads a file named twice only once', async () => {
    const dir = tree({ 'a.yaml': nodeClassYaml('a') });
    const loaded = await loadManifests({ paths: [dir, join(dir, 'a.yaml')], cluster });
    expect(loaded.nodeClasses).toHaveLength(1);
  });

  it('reports a missing path by name and still reads the others', async () => {
    const dir = tree({ 'a.yaml': nodeClassYaml('a') });
    const missing = join(dir, 'missing.yaml');
    const loaded = await loadManifests({ paths: [missing, dir], cluster });
    expect(loaded.errors).toEqual([{ source: missing, message: 'no such file or directory' }]);
    expect(loaded.nodeClasses.map((entry) => entry.name)).toEqual(['a']);
  });

  it('reports an unreadable file inside a directory (a dangling link) and reads its neighbours', async () => {
    const dir = tree({ 'good.yaml': nodeClassYaml('good') });
    symlinkSync(join(dir, 'nowhere.yaml'), join(dir, 'dangling.yaml'));
    const loaded = await loadManifests({ paths: [dir], cluster });
    expect(loaded.errors).toEqual([
      { source: join(dir, 'dangling.yaml'), message: 'no such file or directory' },
    ]);
    expect(loaded.nodeClasses.map((entry) => entry.name)).toEqual(['good']);
  });

  it('reports a directory without manifests rather than passing silently', async () => {
    const dir = tree({ 'notes.txt': 'nothing here' });
    const loaded = await loadManifests({ paths: [dir], cluster });
    expect(loaded.errors).toEqual([
      { source: dir, message: 'directory holds no .yaml, .yml or .json files' },
    ]);
  });

  it('refuses a file over the size limit, naming it', async () => {
    const dir = tree({ 'small.yaml': nodeClassYaml('small') });
    const big = join(dir, 'big.yaml');
    writeFileSync(big, Buffer.alloc(MAX_MANIFEST_BYTES + 1, 0x20));
    const loaded = await loadManifests({ paths: [big, join(dir, 'small.yaml')], cluster });
    expect(loaded.errors).toHaveLength(1);
    expect(loaded.errors[0]?.source).toBe(big);
    expect(loaded.errors[0]?.message).toContain('limit');
    expect(loaded.nodeClasses.map((entry) => entry.name)).toEqual(['small']);
  });

  it('reads standard input for "-"', async () => {
    const loaded = await loadManifests({
      paths: ['-'],
      cluster,
      readStdin: async () => nodeClassYaml('piped'),
    });
    expect(loaded.nodeClasses.map((entry) => entry.name)).toEqual(['piped']);
    expect(loaded.nodeClasses[0]?.source?.file).toBe('<stdin>');
  });

  it('refuses standard input over the size limit', async () => {
    const loaded = await loadManifests({
      paths: ['-'],
      cluster,
      readStdin: async () => ' '.repeat(MAX_MANIFEST_BYTES + 1),
    });
    expect(loaded.errors).toHaveLength(1);
    expect(loaded.errors[0]).toMatchObject({ source: '<stdin>' });
    expect(loaded.errors[0]?.message).toContain('limit');
  });

  it('labels syntax errors with the file and line', async () => {
    const dir = tree({ 'bad.yaml': 'a: 1\nb: [unclosed\nc: 2\n', 'good.yaml': nodeClassYaml('g') });
    const loaded = await loadManifests({ paths: [dir], cluster });
    expect(loaded.errors.map((error) => error.source)).toEqual([
      expect.stringMatching(/bad\.yaml:[2-4]$/),
    ]);
    expect(loaded.nodeClasses.map((entry) => entry.name)).toEqual(['g']);
  });
});

describe('loadManifests limits', () => {
  it('refuses a directory over the file cap by name and still reads the paths before it', async () => {
    const dir = tree(
      Object.fromEntries(
        Array.from({ length: 8 }, (_, i) => [`big/n${i}.yaml`, nodeClassYaml(`n${i}`)])
      )
    );
    writeFileSync(join(dir, 'first.yaml'), nodeClassYaml('first'));
    const loaded = await loadManifests({
      paths: [join(dir, 'first.yaml'), join(dir, 'big')],
      cluster,
      limits: { ...DEFAULT_INPUT_LIMITS, maxFiles: 5 },
    });
    expect(loaded.nodeClasses.map((entry) => entry.name)).toEqual(['first']);
    expect(loaded.errors).toEqual([
      {
        source: join(dir, 'big'),
        message:
          'holds too many manifest files and directories (limit 5, set NODECLASS_SCAN_MAX_FILES to raise it); not scanned',
      },
    ]);
  });

  it('takes the limits from the environment by default', async () => {
    const dir = tree({ 'a.yaml': nodeClassYaml('a'), 'b.yaml': nodeClassYaml('b') });
    vi.stubEnv('NODECLASS_SCAN_MAX_FILES', '1');
    const loaded = await loadManifests({ paths: [dir], cluster });
    expect(loaded.errors.map((error) => error.message)).toEqual([
      expect.stringContaining('NODECLASS_SCAN_MAX_FILES'),
    ]);
    vi.stubEnv('NODECLASS_SCAN_MAX_FILES', 'lots');
    await expect(loadManifests({ paths: [dir], cluster })).rejects.toThrow(ConfigError);
  });

  it('refuses 150,000 listed files cleanly under the default cap', async () => {
    const listDirectory = async function* () {
      for (let i = 0; i < 150_000; i++) yield { name: `f${i}.yaml`, isDirectory: false };
    };
    const dir = tree({});
    const loaded = await loadManifests({ paths: [dir], cluster, listDirectory });
    expect(loaded.errors).toEqual([
      {
        source: dir,
        message: expect.stringContaining('limit 100000, set NODECLASS_SCAN_MAX_FILES'),
      },
    ]);
  });

  it('stops at the scan-wide token budget with one error for the rest', async () => {
    const dir = tree({
      'a.yaml': nodeClassYaml('a'),
      'b.yaml': nodeClassYaml('b'),
      'c.yaml': nodeClassYaml('c'),
      'd.yaml': nodeClassYaml('d'),
    });
    // One of these NodeClasses is 21 tokens: the second passes the budget of 30.
    const loaded = await loadManifests({
      paths: [dir],
      cluster,
      limits: { ...DEFAULT_INPUT_LIMITS, maxTotalTokens: 30 },
    });
    expect(loaded.nodeClasses.map((entry) => entry.name)).toEqual(['a']);
    expect(loaded.errors).toEqual([
      {
        source: expect.stringMatching(/b\.yaml:\d+$/),
        message: expect.stringContaining('NODECLASS_SCAN_MAX_TOKENS'),
      },
      {
        source: join(dir, 'c.yaml'),
        message:
          "not scanned, nor 1 later file(s): the scan's files hold too many YAML tokens in all (limit 30, set NODECLASS_SCAN_MAX_TOKENS to raise it)",
      },
    ]);
  });

  it('asks the standard-input reader to stop at the byte cap', async () => {
    const caps: number[] = [];
    await loadManifests({
      paths: ['-'],
      cluster,
      limits: { ...DEFAULT_INPUT_LIMITS, maxInputBytes: 1234 },
      readStdin: async (maxBytes) => {
        caps.push(maxBytes);
        return '';
      },
    });
    expect(caps).toEqual([1234]);
  });

  it('refuses a FIFO and a link to /dev/zero in a directory, reading their neighbours', async (context) => {
    const dir = tree({ 'good.yaml': nodeClassYaml('good') });
    if (!mkfifo(join(dir, 'pipe.yaml')) || !existsSync('/dev/zero')) context.skip();
    symlinkSync('/dev/zero', join(dir, 'zero.yaml'));
    const loaded = await loadManifests({ paths: [dir], cluster });
    expect(loaded.nodeClasses.map((entry) => entry.name)).toEqual(['good']);
    expect(loaded.errors).toEqual([
      {
        source: join(dir, 'pipe.yaml'),
        message: 'a named pipe (FIFO), not a regular file; not read',
      },
      {
        source: join(dir, 'zero.yaml'),
        message: 'a symbolic link to a character device, not a regular file; not read',
      },
    ]);
  });
});

describe('createManifestSource', () => {
  it('loads the objects for the given cluster context, with spec as the only input', async () => {
    const dir = tree({ 'a.yaml': nodeClassYaml('a') });
    const context: ClusterContext = { name: '', region: 'us-iso-east-1', partition: 'aws-iso' };
    const loaded = await createManifestSource({ paths: [dir], cluster: context }).load();
    expect(loaded.clusters).toEqual([context]);
    expect(loaded.inputs).toEqual(['spec']);
    expect(loaded.nodeClasses.map((entry) => entry.name)).toEqual(['a']);
    expect(loaded.inputErrors).toEqual([]);
  });
});
