// The `prepare` script. npm runs it after `npm install`/`npm ci` in a checkout, and when it installs
// the package from git (`npm install github:…`, pre-commit 4.6.1 and later), before packing the
// clone: the package is then built, as `prepack` builds it for `npm pack` and `npm publish`.
// Builds dist/ unless every output is there already (scripts/build-package.ts --unless-built).
// Plain JavaScript: npm's global installs from git prepare the clone without its dev
// dependencies, so tsx may not be there yet; it then installs them first.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const tsx = join(root, 'node_modules/tsx/dist/cli.mjs');

function run(args) {
  const result = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

if (!existsSync(tsx)) {
  const npm = process.env.npm_execpath;
  if (npm === undefined) throw new Error('prepare: tsx is not installed (run npm ci)');
  // --global=false: a global install passes npm_config_global=true down to this script.
  run([
    npm,
    'install',
    '--global=false',
    '--include=dev',
    '--ignore-scripts',
    '--no-save',
    '--no-audit',
    '--no-fund',
  ]);
}
run([tsx, join(root, 'scripts/build-package.ts'), '--unless-built']);
