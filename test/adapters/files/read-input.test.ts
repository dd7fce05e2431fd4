import { existsSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  assertRegularFile,
  readCapped,
  readRegularFile,
} from '../../../lambda/adapters/files/read-input.js';
import { useTempTrees } from '../../cli/support/run-cli.js';
import { countedStream, mkfifo } from './hostile-inputs.js';

const tree = useTempTrees();

describe('readCapped', () => {
  it('returns the whole stream when it fits', async () => {
    const text = await readCapped(
      Readable.from(['héllo ', Buffer.from('wörld')]),
      100,
      'maxInputBytes'
    );
    expect(text).toBe('héllo wörld');
  });

  it('accepts exactly the cap and refuses one byte more', async () => {
    await expect(readCapped(Readable.from(['abcd']), 4, 'maxInputBytes')).resolves.toBe('abcd');
    await expect(readCapped(Readable.from(['abcd', 'e']), 4, 'maxInputBytes')).rejects.toThrow(
      'too large (limit 4 bytes, set NODECLASS_SCAN_MAX_INPUT_BYTES to raise it); not read further'
    );
  });

  it('stops pulling from a 50 MiB stream at the cap and destroys it', async () => {
    const { stream, pulled } = countedStream(50 * 1024 * 1024);
    await expect(readCapped(stream, 1024 * 1024, 'maxInputBytes')).rejects.toThrow('too large');
    expect(pulled()).toBeLessThan(2 * 1024 * 1024);
    expect(stream.destroyed).toBe(true);
  });
});

describe('readRegularFile', () => {
  it('reads a regular file, through a symbolic link too', async () => {
    const dir = tree({ 'a.yaml': 'a: 1\n' });
    symlinkSync(join(dir, 'a.yaml'), join(dir, 'link.yaml'));
    await expect(readRegularFile(join(dir, 'link.yaml'), 100, 'maxInputBytes')).resolves.toBe(
      'a: 1\n'
    );
  });

  it('refuses a file over the cap by its size, without reading it', async () => {
    const dir = tree({ 'big.json': '[1,2,3]' });
    await expect(readRegularFile(join(dir, 'big.json'), 3, 'maxWorldBytes')).rejects.toThrow(
      'is 7 bytes, too large (limit 3 bytes, set NODECLASS_SCAN_MAX_WORLD_BYTES to raise it); not read'
    );
  });

  it('names a fixed cap by its own description', async () => {
    const dir = tree({ 'c.yaml': 'ignore: []\n' });
    await expect(
      readRegularFile(join(dir, 'c.yaml'), 4, { description: 'limit 4 bytes' })
    ).rejects.toThrow('is 11 bytes, too large (limit 4 bytes); not read');
  });

  it('refuses a directory', async () => {
    const dir = tree({ 'sub/a.yaml': '' });
    await expect(readRegularFile(join(dir, 'sub'), 100, 'maxInputBytes')).rejects.toThrow(
      'a directory, not a regular file; not read'
    );
  });

  it.skipIf(!existsSync('/dev/zero'))(
    'refuses a symbolic link to /dev/zero before reading from it',
    async () => {
      const dir = tree({});
      symlinkSync('/dev/zero', join(dir, 'x.yaml'));
      await expect(readRegularFile(join(dir, 'x.yaml'), 100, 'maxInputBytes')).rejects.toThrow(
        'a symbolic link to a character device, not a regular file; not read'
      );
    }
  );

  it('refuses a FIFO without waiting for a writer', async (context) => {
    const dir = tree({});
    const fifo = join(dir, 'pipe.yaml');
    if (!mkfifo(fifo)) context.skip();
    await expect(assertRegularFile(fifo)).rejects.toThrow(
      'a named pipe (FIFO), not a regular file; not read'
    );
    await expect(readRegularFile(fifo, 100, 'maxInputBytes')).rejects.toThrow('named pipe');
  });

  it('reports a missing file with its code', async () => {
    const dir = tree({});
    await expect(
      readRegularFile(join(dir, 'none.yaml'), 100, 'maxInputBytes')
    ).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('reads a file of exactly the cap', async () => {
    const dir = tree({});
    writeFileSync(join(dir, 'a.yaml'), 'x'.repeat(70_000));
    await expect(
      readRegularFile(join(dir, 'a.yaml'), 70_000, 'maxInputBytes')
    ).resolves.toHaveLength(70_000);
  });
});
