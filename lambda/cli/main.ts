import { Command, CommanderError, Option } from 'commander';
import { runScan } from '../app/run-scan.js';
import { CHECKS } from '../core/checks/index.js';
import { SEVERITIES, type Severity } from '../core/model.js';
import { breachesThreshold } from '../core/report.js';
import { ConfigError } from '../shared/errors.js';
import { formatReport, OUTPUT_FORMATS, type OutputFormat } from './formats/index.js';
import { buildPlan } from './plan.js';

export const EXIT_OK = 0;
export const EXIT_FINDINGS = 1;
export const EXIT_USAGE = 2;

/** Where the CLI writes; injected so tests run the real CLI in-process. */
export interface CliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly readStdin: () => Promise<string>;
  readonly stdoutIsTty: boolean;
  readonly stderrIsTty: boolean;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly now: () => Date;
}

function splitList(value: string, previous: string[] = []): string[] {
  return [
    ...previous,
    ...value
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== ''),
  ];
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

function checkIdsExist(ids: readonly string[], flag: string): void {
  const unknown = ids.filter((id) => !CHECKS.some((check) => check.id === id));
  if (unknown.length > 0) {
    throw new ConfigError(
      `${flag}: unknown check id ${unknown.map((id) => `"${id}"`).join(', ')} (see \`nodeclass-scan checks\`)`
    );
  }
}

interface ScanFlags {
  cluster?: string[];
  region?: string;
  world?: string;
  aws?: boolean;
  profile?: string;
  karpenterVersion?: string;
  format: OutputFormat;
  failOn: Severity | 'none';
  only?: string[];
  skip?: string[];
  nonProduction?: boolean;
}

function buildProgram(io: CliIo, setExitCode: (code: number) => void): Command {
  const program = new Command('nodeclass-scan')
    .description(
      'Catch broken Karpenter EC2NodeClass configurations before they stop nodes from launching.'
    )
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .showHelpAfterError();

  program
    .command('scan')
    .description('Scan EC2NodeClass manifests, a world-state file, or live clusters.')
    .argument('[paths...]', 'manifest files or directories (.yaml, .yml, .json), or - for stdin')
    .option('--cluster <name>', 'scan a live cluster (repeatable)', collect)
    .option('--region <region>', 'AWS region; alone it only sets region/partition for spec checks')
    .option('--world <file>', 'answer AWS questions from a world-state file (offline)')
    .option('--aws', 'use live AWS (default credential chain)')
    .option('--profile <profile>', 'use live AWS with this named profile')
    .option('--karpenter-version <version>', 'Karpenter version for version-aware checks')
    .addOption(
      new Option('--format <format>', 'output format').choices(OUTPUT_FORMATS).default('table')
    )
    .addOption(
      new Option('--fail-on <severity>', 'exit 1 when a finding is at or above this severity')
        .choices([...SEVERITIES, 'none'])
        .default('high')
    )
    .option('--only <ids>', 'run only these checks (comma-separated)', splitList)
    .option('--skip <ids>', 'skip these checks (comma-separated)', splitList)
    .option('--non-production', 'lower pinning findings to info (non-production clusters)')
    .action(async (paths: string[], flags: ScanFlags) => {
      checkIdsExist(flags.only ?? [], '--only');
      checkIdsExist(flags.skip ?? [], '--skip');
      const plan = await buildPlan({
        paths,
        clusters: flags.cluster ?? [],
        ...(flags.region === undefined ? {} : { region: flags.region }),
        ...(flags.world === undefined ? {} : { world: flags.world }),
        aws: flags.aws === true,
        ...(flags.profile === undefined ? {} : { profile: flags.profile }),
        ...(flags.karpenterVersion === undefined
          ? {}
          : { karpenterVersion: flags.karpenterVersion }),
        environment: flags.nonProduction ? 'non-production' : 'production',
        readStdin: io.readStdin,
      });
      const report = await runScan(plan, {
        now: io.now(),
        only: flags.only ?? [],
        skip: flags.skip ?? [],
      });
      io.stdout(
        formatReport(report, flags.format, {
          color: io.stdoutIsTty && io.env.NO_COLOR === undefined,
        })
      );
      for (const inputError of report.summary.inputErrors) {
        io.stderr(`nodeclass-scan: ${inputError.source}: ${inputError.message}\n`);
      }
      if (report.summary.inputErrors.length > 0) setExitCode(EXIT_USAGE);
      else setExitCode(breachesThreshold(report, flags.failOn) ? EXIT_FINDINGS : EXIT_OK);
    });

  return program;
}

/** Runs the CLI and returns its exit code; never throws. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  let exitCode = EXIT_OK;
  const program = buildProgram(io, (code) => {
    exitCode = code;
  });
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version requests exit 0; everything else commander rejects is a usage error.
      return error.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
    }
    if (error instanceof ConfigError) {
      io.stderr(`nodeclass-scan: ${error.message}\n`);
      return EXIT_USAGE;
    }
    io.stderr(`nodeclass-scan: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT_USAGE;
  }
}
