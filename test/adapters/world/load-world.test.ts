import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_INPUT_LIMITS } from '../../../lambda/adapters/files/limits.js';
import {
  jsonValuesExceed,
  loadWorldFile,
  parseWorld,
} from '../../../lambda/adapters/world/load-world.js';
import { InputError } from '../../../lambda/shared/errors.js';
import { useTempTrees } from '../../cli/support/run-cli.js';
import { mkfifo } from '../files/hostile-inputs.js';

const EXAMPLE = join(import.meta.dirname, '..', '..', '..', 'examples', 'world.json');
const example = (): Record<string, unknown> & { ec2: { images: unknown[] } } =>
  JSON.parse(readFileSync(EXAMPLE, 'utf8'));

const tree = useTempTrees();

describe('jsonValuesExceed', () => {
  it('counts brackets and commas outside strings only', () => {
    expect(jsonValuesExceed('[1, 2, {"a": [3]}]', 6)).toBe(false);
    expect(jsonValuesExceed('[1, 2, {"a": [3]}]', 5)).toBe(true);
    expect(jsonValuesExceed(`["${',['.repeat(100)}", "\\",["]`, 3)).toBe(false);
  });
});

describe('parseWorld bounds', () => {
  it('refuses a file with more JSON values than allowed, before parsing it', () => {
    const text = `{"version":1,"ec2":{"images":[${'{},'.repeat(99)}{}]}}`;
    expect(() => parseWorld(text, 'w.json', { maxWorldValues: 100 })).toThrow(
      new InputError(
        'w.json: holds too many JSON values (limit 100, set NODECLASS_SCAN_MAX_WORLD_VALUES to raise it); not read'
      )
    );
  });

  it('names the first problems of a 200,000-item `{}` bomb, not all of them', () => {
    const world = example();
    const text = JSON.stringify({ ...world, ec2: { images: [] } }).replace(
      '"images":[]',
      `"images":[${'{},'.repeat(199_999)}{}]`
    );
    const error = (() => {
      try {
        parseWorld(text, 'bomb.json');
      } catch (caught) {
        return caught as Error;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(InputError);
    expect(error?.message).toMatch(
      /^bomb\.json: not a valid world file: ec2\.images\[0\]\.ImageId: /
    );
    expect(error?.message.split('; ')).toHaveLength(5);
  });

  it('reads a valid world whose lists are longer than the sample', () => {
    const world = example();
    const image = world.ec2.images[0];
    world.ec2.images = Array.from({ length: 12_000 }, () => image);
    const parsed = parseWorld(JSON.stringify(world), 'big.json');
    expect(parsed.ec2.images).toHaveLength(12_000);
  });

  it('still refuses a world whose only bad item lies past the sample', () => {
    const world = example();
    const image = world.ec2.images[0];
    world.ec2.images = [...Array.from({ length: 12_000 }, () => image), { ImageId: 7 }];
    expect(() => parseWorld(JSON.stringify(world), 'late.json')).toThrow(
      'late.json: not a valid world file: an item past the first 10000 list items or 1000 map keys is invalid'
    );
  });

  it('keeps a `__proto__` key an own key of the sample it validates', () => {
    const text = readFileSync(EXAMPLE, 'utf8').replace(
      '"parameters": {',
      '"parameters": { "__proto__": "ami-0123456789abcdef0",'
    );
    expect(text).toContain('"__proto__"');
    const parsed = parseWorld(text, 'proto.json');
    expect(Object.hasOwn(parsed.ssm.parameters, '__proto__')).toBe(true);
  });
});

describe('loadWorldFile', () => {
  it('refuses a file over the byte cap by name and limit', async () => {
    const dir = tree({ 'w.json': readFileSync(EXAMPLE, 'utf8') });
    await expect(
      loadWorldFile(join(dir, 'w.json'), { ...DEFAULT_INPUT_LIMITS, maxWorldBytes: 1_000 })
    ).rejects.toThrow(
      new RegExp(
        `^${join(dir, 'w.json')}: is \\d+ bytes, too large \\(limit 1000 bytes, set NODECLASS_SCAN_MAX_WORLD_BYTES to raise it\\); not read$`
      )
    );
  });

  it('refuses a FIFO and a link to /dev/zero without reading them', async (context) => {
    const dir = tree({});
    if (!mkfifo(join(dir, 'pipe.json')) || !existsSync('/dev/zero')) context.skip();
    symlinkSync('/dev/zero', join(dir, 'zero.json'));
    await expect(loadWorldFile(join(dir, 'pipe.json'))).rejects.toThrow(
      `${join(dir, 'pipe.json')}: a named pipe (FIFO), not a regular file; not read`
    );
    await expect(loadWorldFile(join(dir, 'zero.json'))).rejects.toThrow(
      `${join(dir, 'zero.json')}: a symbolic link to a character device, not a regular file; not read`
    );
  });

  it('names a missing file', async () => {
    const dir = tree({});
    writeFileSync(join(dir, 'other.json'), '{}');
    await expect(loadWorldFile(join(dir, 'none.json'))).rejects.toThrow(
      `${join(dir, 'none.json')}: cannot read world file (no such file)`
    );
  });
});
