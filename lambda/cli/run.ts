// Process entry point: binds the CLI to the real process.
import { DEFAULT_INPUT_LIMITS } from '../adapters/files/limits.js';
import { readCapped } from '../adapters/files/read-input.js';
import { ScannerError } from '../shared/errors.js';
import { terminalSafe } from './terminal.js';

// Whatever escapes the CLI (runCli itself never throws) is one message and exit 2, never Node's
// report of an uncaught error, which quotes the top frame's source line: in the bundle, the whole
// minified file.
function crash(error: unknown): never {
  process.stderr.write(
    error instanceof ScannerError
      ? `nodeclass-scan: ${terminalSafe(error.message)}\n`
      : `nodeclass-scan: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`
  );
  process.exit(2);
}
process.on('uncaughtException', crash);
process.on('unhandledRejection', crash);

// The SDK warns on stderr about Node versions it will stop supporting; a scan's stderr carries only
// its own lines. Set before the CLI (and with it the SDK) is loaded; an explicit setting wins.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const { runCli } = await import('./main.js');

/** Stops at the cap: a pipe that never ends (or `< /dev/zero`) is refused, never buffered whole. */
function readStdin(maxBytes = DEFAULT_INPUT_LIMITS.maxInputBytes): Promise<string> {
  return readCapped(process.stdin, maxBytes, 'maxInputBytes');
}

// `nodeclass-scan … | head` closes the pipe early: drop the rest of the output instead of crashing.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') return;
  process.stderr.write(`nodeclass-scan: cannot write to stdout (${error.code ?? error.message})\n`);
  process.exit(2);
});

const exitCode = await runCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  readStdin,
  stdoutIsTty: process.stdout.isTTY === true,
  stderrIsTty: process.stderr.isTTY === true,
  ...(process.stdout.isTTY === true ? { stdoutColumns: process.stdout.columns } : {}),
  env: process.env,
  now: () => new Date(),
});
process.exitCode = exitCode;
