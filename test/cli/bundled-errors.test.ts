// Errors as users of the package meet them: the CLI and API bundled and minified as `npm run build`
// bundles them (one line per file, kilobytes long). Node's report of an uncaught error quotes the
// source line of the error's top frame: that must be the user's line, never the bundle's.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeEntriesBuildOptions } from '../../scripts/build-package.js';

const EXAMPLES = join(import.meta.dirname, '..', '..', 'examples', 'nodeclasses');

async function node(args: readonly string[], cwd: string) {
  return promisify(execFile)('node', args, { cwd, env: { ...process.env, NO_COLOR: '1' } }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => error
  );
}

describe('the bundled CLI and API', { timeout: 120_000 }, () => {
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'nodeclass-scan-bundle-'));
    writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');
    await build({ ...nodeEntriesBuildOptions(join(dir, 'lib')), logLevel: 'silent' });
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("reports an uncaught ConfigError from scan() at the caller's line, in a few lines", async () => {
    // Prepare
    writeFileSync(
      join(dir, 'uncaught.mjs'),
      `import { scan } from './lib/index.js';\n\nawait scan({ paths: ['k8s/'], only: ['instance-profile-is-nam'] });\n`
    );
    // Act
    const run = await node(['uncaught.mjs'], dir);
    // Assess
    expect(run.code).toBe(1);
    expect(run.stderr.length).toBeLessThan(1000);
    expect(run.stderr).toMatch(/^file:\/\/\S*\/uncaught\.mjs:3\nawait scan\(/);
    expect(run.stderr).toContain(
      '\nConfigError: scan: only.0: unknown check id "instance-profile-is-nam" (did you mean "instance-profile-is-name"?)'
    );
    expect(run.stderr).not.toContain('/lib/');
  });

  it('rejects with the exported error classes: typed for a caller that catches', async () => {
    writeFileSync(
      join(dir, 'caught.mjs'),
      `import { ConfigError, ScannerError, scan } from './lib/index.js';
try {
  await scan({ world: 'no-such-world.json', clusters: 'prod' });
} catch (error) {
  console.log(JSON.stringify({ config: error instanceof ConfigError, scanner: error instanceof ScannerError, name: error.name, type: error.constructor.name }));
}
`
    );
    const run = await node(['caught.mjs'], dir);
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual({
      config: true,
      scanner: true,
      name: 'ConfigError',
      type: 'ConfigError',
    });
  });

  it('prints one line for a usage error of the CLI, none of its source', async () => {
    const run = await node([join(dir, 'lib', 'cli.js'), 'scan', EXAMPLES, '--only', 'imds'], dir);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      'nodeclass-scan: --only: unknown check id "imds" (see `nodeclass-scan checks`)\n'
    );
  });
});
