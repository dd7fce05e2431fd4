import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import packageJson from '../../package.json' with { type: 'json' };
import { collectInventory, evaluateInventory, selectChecks } from '../app/run-scan.js';
import { compareWithBaseline } from '../core/baseline.js';
import { CHECKS } from '../core/checks/index.js';
import { SEVERITIES, type Severity } from '../core/model.js';
import { breachesThreshold, type ScanReport } from '../core/report.js';
import { ConfigError, ScannerError } from '../shared/errors.js';
import { loadBaseline } from './baseline.js';
import type { CliIo, CommandContext } from './command-context.js';
import { type CliConfig, expiredRuleWarnings, loadCliConfig } from './config-file.js';
import { asffTargetFor } from './formats/asff.js';
import { CATALOG_FORMATS, type CatalogFormat, formatCatalog } from './formats/catalog.js';
import { OUTPUT_FORMATS, type OutputFormat, writeReport } from './formats/index.js';
import { sourceIndexOf } from './formats/sources.js';
import { buildPlan, formatClusterProgress } from './plan.js';
import { terminalOutput, terminalSafe } from './terminal.js';

export const EXIT_OK = 0;
export const EXIT_FINDINGS = 1;
export const EXIT_USAGE = 2;

export type { CliIo } from './command-context.js';

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

/** no-color.org: set and non-empty disables colour. */
function useColor(io: CliIo): boolean {
  return io.stdoutIsTty && (io.env.NO_COLOR ?? '') === '';
}

/** 2 when an input could not be read (the report is still printed), else the `--fail-on` gate. */
function exitCodeFor(report: ScanReport, failOn: Severity | 'none'): number {
  if (report.summary.inputErrors.length > 0) return EXIT_USAGE;
  return breachesThreshold(report, failOn) ? EXIT_FINDINGS : EXIT_OK;
}

/** Whether annotations may suppress: `--no-annotation-suppression`, else the config file's key. */
function annotationTrust(flags: ScanFlags, config: CliConfig) {
  if (flags.annotationSuppression === false) {
    return {
      annotationSuppression: 'deny' as const,
      annotationSuppressionSetting: '--no-annotation-suppression',
    };
  }
  return config.annotationSuppression === undefined
    ? {}
    : {
        annotationSuppression: config.annotationSuppression,
        annotationSuppressionSetting: `annotationSuppression in ${config.file ?? 'the config file'}`,
      };
}

interface ScanFlags {
  controllerRole?: string[];
  controllerPolicy?: string[];
  permissionsBoundary?: string;
  dryRunRole?: string;
  cluster?: string[];
  region?: string;
  world?: string;
  aws?: boolean;
  profile?: string;
  karpenterVersion?: string;
  kubernetesVersion?: string;
  format: OutputFormat;
  failOn: Severity | 'none';
  only?: string[];
  skip?: string[];
  config?: string;
  baseline?: string;
  nonProduction?: boolean;
  /** false with `--no-annotation-suppression`. */
  annotationSuppression?: boolean;
  stdinName?: string;
  awsAccountId?: string;
}

function registerScanCommand(program: Command, { io, setExitCode }: CommandContext): void {
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
    .option(
      '--kubernetes-version <version>',
      'cluster Kubernetes version for alias terms when scanning manifests with --aws/--profile'
    )
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
    .option(
      '--config <file>',
      'config file with ignore rules (default: ./.nodeclass-scanner.yaml if present)'
    )
    .option('--non-production', 'lower pinning findings to info (non-production clusters)')
    .option(
      '--no-annotation-suppression',
      'ignore-check annotations on the objects suppress nothing (their findings stay open, saying so); overrides annotationSuppression in the config file'
    )
    .option(
      '--baseline <file>',
      'compare with an earlier --format json report; --fail-on then counts only new and changed findings'
    )
    .option(
      '--stdin-name <name>',
      'file name SARIF reports for manifests read from - (default: stdin)',
      (value: string) => {
        if (value.trim() === '') throw new InvalidArgumentError('give a file name');
        return value;
      }
    )
    .option(
      '--aws-account-id <id>',
      'account of --format asff findings (default: the world file, or STS in live scans)'
    )
    .option(
      '--controller-role <cluster=arn>',
      "Karpenter's controller role for a cluster (repeatable)",
      collect
    )
    .option(
      '--dry-run-role <arn>',
      'also DryRun RunInstances/CreateFleet with this assumed role (live)'
    )
    .option(
      '--controller-policy <files...>',
      "simulate these IAM policy documents (JSON/YAML) as the controller role's policies"
    )
    .option(
      '--permissions-boundary <file>',
      'with --controller-policy: simulate this permissions boundary with them'
    )
    .action(async (paths: string[], flags: ScanFlags) => {
      checkIdsExist(flags.only ?? [], '--only');
      checkIdsExist(flags.skip ?? [], '--skip');
      const config = await loadCliConfig({
        ...(flags.config === undefined ? {} : { explicit: flags.config }),
        cwd: io.cwd ?? process.cwd(),
      });
      for (const warning of expiredRuleWarnings(config, io.now())) io.stderr(warning);
      const baseline =
        flags.baseline === undefined ? undefined : await loadBaseline(flags.baseline);
      // Before the scan: a missing account is a usage error, not a late surprise.
      const asffTarget = flags.format === 'asff' ? await asffTargetFor(flags) : undefined;
      const plan = await buildPlan({
        paths,
        clusters: flags.cluster ?? [],
        ...(flags.region === undefined ? {} : { region: flags.region }),
        ...(flags.world === undefined ? {} : { world: flags.world }),
        aws: flags.aws === true,
        ...(flags.profile === undefined ? {} : { profile: flags.profile }),
        ...(flags.kubernetesVersion === undefined
          ? {}
          : { kubernetesVersion: flags.kubernetesVersion }),
        ...(flags.karpenterVersion === undefined
          ? {}
          : { karpenterVersion: flags.karpenterVersion }),
        environment: flags.nonProduction ? 'non-production' : 'production',
        readStdin: io.readStdin,
        now: io.now(),
        controllerRoles: flags.controllerRole ?? [],
        controllerPolicies: flags.controllerPolicy ?? [],
        ...(flags.permissionsBoundary === undefined
          ? {}
          : { permissionsBoundary: flags.permissionsBoundary }),
        ...(flags.dryRunRole === undefined ? {} : { dryRunRole: flags.dryRunRole }),
        ...(io.stderrIsTty
          ? { onProgress: (progress) => io.stderr(formatClusterProgress(progress)) }
          : {}),
      });
      const { inventory, inputErrors } = await collectInventory(plan);
      const evaluated = evaluateInventory(
        inventory,
        {
          now: io.now(),
          only: flags.only ?? [],
          skip: flags.skip ?? [],
          ignore: config.ignore,
          ...annotationTrust(flags, config),
        },
        inputErrors
      );
      const report =
        baseline === undefined
          ? evaluated
          : compareWithBaseline(evaluated, baseline, {
              checkIds: selectChecks(CHECKS, flags.only, flags.skip)
                .map((check) => check.id)
                .filter((id) => !evaluated.summary.notRun.some((run) => run.checkId === id)),
            });
      // In pieces (JSON: one per finding), each through the guarded writer: no whole-report string.
      writeReport(
        report,
        flags.format,
        {
          color: useColor(io),
          checks: CHECKS,
          sources: sourceIndexOf(inventory),
          cwd: io.cwd ?? process.cwd(),
          toolVersion: packageJson.version,
          ...(asffTarget === undefined ? {} : { asffTarget }),
          ...(flags.stdinName === undefined ? {} : { stdinName: flags.stdinName }),
        },
        io.stdout
      );
      for (const inputError of report.summary.inputErrors) {
        io.stderr(
          `nodeclass-scan: ${terminalSafe(inputError.source)}: ${terminalSafe(inputError.message)}\n`
        );
      }
      setExitCode(exitCodeFor(report, flags.failOn));
    });
}

function registerChecksCommand(program: Command, { io }: CommandContext): void {
  program
    .command('checks')
    .description('List the check catalog.')
    .addOption(
      new Option('--format <format>', 'output format').choices(CATALOG_FORMATS).default('table')
    )
    .action((flags: { format: CatalogFormat }) => {
      io.stdout(formatCatalog(CHECKS, flags.format));
    });
}

/**
 * `snapshot` reads live AWS, so its module loads the SDK: imported only when the command line may
 * reach it. `scan`, `checks` and `--version` never do (the rest, including help, still lists it).
 */
function mayRunSnapshot(argv: readonly string[]): boolean {
  const [first] = argv;
  return !(first === 'scan' || first === 'checks' || first === '--version' || first === '-V');
}

async function buildProgram(argv: readonly string[], context: CommandContext): Promise<Command> {
  const program = new Command('nodeclass-scan')
    .description(
      'Catch broken Karpenter EC2NodeClass configurations before they stop nodes from launching.'
    )
    .version(packageJson.version)
    .exitOverride()
    .configureOutput({ writeOut: context.io.stdout, writeErr: context.io.stderr })
    .showHelpAfterError('(add --help for usage)');

  registerScanCommand(program, context);
  registerChecksCommand(program, context);
  if (mayRunSnapshot(argv)) {
    const { registerSnapshotCommand } = await import('./snapshot.js');
    registerSnapshotCommand(program, context);
  }
  return program;
}

/**
 * Every write passes `terminalOutput`: whatever text a command missed still cannot act on the
 * terminal. Only the table's own colour (stdout, colour on) gets through.
 */
function guardedIo(io: CliIo): CliIo {
  const sgr = useColor(io);
  return {
    ...io,
    stdout: (text) => io.stdout(terminalOutput(text, { sgr })),
    stderr: (text) => io.stderr(terminalOutput(text, { sgr: false })),
  };
}

/** Runs the CLI and returns its exit code; never throws. */
export async function runCli(argv: readonly string[], rawIo: CliIo): Promise<number> {
  const io = guardedIo(rawIo);
  let exitCode = EXIT_OK;
  try {
    const program = await buildProgram(argv, {
      io,
      setExitCode: (code) => {
        exitCode = code;
      },
    });
    await program.parseAsync([...argv], { from: 'user' });
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version requests exit 0; everything else commander rejects is a usage error.
      return error.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
    }
    if (error instanceof ScannerError) {
      // Messages quote file names, keys and server answers: one line, whatever they hold.
      io.stderr(`nodeclass-scan: ${terminalSafe(error.message)}\n`);
      return EXIT_USAGE;
    }
    // A bug, not the user's fault; still exit 2 so CI never mistakes it for a clean scan.
    io.stderr(
      `nodeclass-scan: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`
    );
    return EXIT_USAGE;
  }
}
