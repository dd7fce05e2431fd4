import { closeSync, openSync, writeSync } from 'node:fs';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import packageJson from '../../package.json' with { type: 'json' };
import { limitsFromEnv } from '../adapters/files/limits.js';
import { collectInventory, evaluateInventory, selectChecks } from '../app/run-scan.js';
import { compareWithBaseline } from '../core/baseline.js';
import { CHECKS } from '../core/checks/index.js';
import { FINDING_STATUSES, SEVERITIES } from '../core/model.js';
import { breachesThreshold, type ScanReport } from '../core/report.js';
import {
  DEFAULT_CLI_SCAN_DEADLINE_MS,
  deadlineAfter,
  SCAN_DEADLINE_ENV,
  withScanDeadline,
} from '../shared/deadline.js';
import { ConfigError, ScannerError } from '../shared/errors.js';
import { loadBaseline } from './baseline.js';
import { checkPage } from './check-page.js';
import type { CliIo, CommandContext } from './command-context.js';
import { type CliConfig, expiredRuleWarnings, loadCliConfig } from './config-file.js';
import { asffTargetFor } from './formats/asff.js';
import { CATALOG_FORMATS, type CatalogFormat, formatCatalog } from './formats/catalog.js';
import { OUTPUT_FORMATS, writeReport } from './formats/index.js';
import { sourceIndexOf } from './formats/sources.js';
import { buildPlan, formatClusterProgress } from './plan.js';
import { parseScanTime } from './plan-world.js';
import {
  envSettings,
  FAIL_ON_CHOICES,
  type FailOn,
  parseChoice,
  parseChoiceList,
  resolveSettings,
  type ScanSettings,
  type SettingValues,
  unknownCheckIdsProblem,
} from './scan-settings.js';
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
  const problem = unknownCheckIdsProblem(ids);
  if (problem !== undefined) throw new ConfigError(`${flag}: ${problem}`);
}

/** A commander parser for one choice, in any case (`--fail-on HIGH`). */
function choiceOption<T extends string>(choices: readonly T[]): (value: string) => T {
  return (value) => {
    const parsed = parseChoice(value, choices);
    if ('problem' in parsed) throw new InvalidArgumentError(parsed.problem);
    return parsed.value;
  };
}

/** A commander parser for comma-separated choices, repeatable (`--severity critical,HIGH`). */
function choiceListOption<T extends string>(
  choices: readonly T[]
): (value: string, previous?: T[]) => T[] {
  return (value, previous = []) => {
    const parsed = parseChoiceList(value, choices);
    if ('problem' in parsed) throw new InvalidArgumentError(parsed.problem);
    return [...previous, ...parsed.value.filter((item) => !previous.includes(item))];
  };
}

/** no-color.org: set and non-empty disables colour. */
function useColor(io: CliIo): boolean {
  return io.stdoutIsTty && (io.env.NO_COLOR ?? '') === '';
}

/** Narrower than this, wrapping leaves no room for the text. */
const MIN_WIDTH = 40;
const DEFAULT_WIDTH = 100;

/** `COLUMNS`, else the terminal's width (stdout only), else 100. */
function tableWidth(io: CliIo, toTerminal: boolean): number {
  const columns = (io.env.COLUMNS ?? '').trim();
  const width = /^\d+$/.test(columns)
    ? Number(columns)
    : toTerminal && io.stdoutIsTty && io.stdoutColumns !== undefined && io.stdoutColumns > 0
      ? io.stdoutColumns
      : DEFAULT_WIDTH;
  return width === 0 ? DEFAULT_WIDTH : Math.max(MIN_WIDTH, width);
}

/**
 * Pieces written this many characters at a time: a 100×50 world's report is 225,000 pieces. Not
 * more: one non-Latin-1 character (`→`, `…`) makes V8 copy the whole batch into a two-byte string.
 */
const WRITE_BATCH_CHARS = 16 * 1024;

/**
 * Small pieces gathered into writes of about `WRITE_BATCH_CHARS`: one write (guard, encoding,
 * system call) per piece costs more than the piece. Memory stays bounded; `flush` writes the rest.
 */
function coalescedWriter(write: (text: string) => void): {
  write: (text: string) => void;
  flush: () => void;
} {
  let pending = '';
  return {
    write: (text) => {
      pending += text;
      if (pending.length >= WRITE_BATCH_CHARS) {
        const batch = pending;
        pending = '';
        write(batch);
      }
    },
    flush: () => {
      if (pending.length === 0) return;
      const batch = pending;
      pending = '';
      write(batch);
    },
  };
}

/**
 * `-o FILE`: the report goes there, piece by piece, through the same guard as stdout (escaped
 * control characters, no colour). Opened when the report is ready: a usage error leaves no file.
 */
function fileOutput(file: string): { write: (text: string) => void; close: () => void } {
  const fail = (error: unknown): never => {
    throw new ConfigError(
      `--output ${file}: cannot write (${(error as NodeJS.ErrnoException).code ?? String(error)})`
    );
  };
  let fd: number;
  try {
    fd = openSync(file, 'w');
  } catch (error) {
    return fail(error);
  }
  return {
    write: (text) => {
      try {
        writeSync(fd, terminalOutput(text, { sgr: false }));
      } catch (error) {
        fail(error);
      }
    },
    close: () => closeSync(fd),
  };
}

/** 2 when an input could not be read (the report is still printed), else the `--fail-on` gate. */
function exitCodeFor(report: ScanReport, failOn: FailOn): number {
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

/** Commander's options: each scan setting under its key (absent when not given), and two more. */
type ScanFlags = SettingValues & {
  config?: string;
  /** `--now`: the time a `--world` scan is evaluated at. */
  now?: Date;
  /** false with `--no-annotation-suppression`. */
  annotationSuppression?: boolean;
};

function registerScanCommand(program: Command, context: CommandContext): void {
  program
    .command('scan')
    .description(
      'Scan EC2NodeClass manifests, a world-state file, or live clusters. Options may also be set in .nodeclass-scanner.yaml and (some) NODECLASS_SCAN_* variables: flag > variable > file > default.'
    )
    .argument('[paths...]', 'manifest files or directories (.yaml, .yml, .json), or - for stdin')
    .option('--cluster <name>', 'scan a live cluster (repeatable)', collect)
    .option('--region <region>', 'AWS region; alone it only sets region/partition for spec checks')
    .option('--world <file>', 'answer AWS questions from a world-state file (offline)')
    .option(
      '--now <time>',
      'with --world: the scan time its dates are compared with (ISO 8601, e.g. 2026-11-22T02:00:00Z; default: now)',
      (value: string) => {
        const time = parseScanTime(value);
        if (time === undefined) {
          throw new InvalidArgumentError('give an ISO 8601 time such as 2026-11-22T02:00:00Z');
        }
        return time;
      }
    )
    .option('--aws', 'use live AWS (default credential chain)')
    .option('--profile <profile>', 'use live AWS with this named profile')
    .option('--karpenter-version <version>', 'Karpenter version for version-aware checks')
    .option(
      '--kubernetes-version <version>',
      'cluster Kubernetes version for alias terms when scanning manifests with --aws/--profile'
    )
    .addOption(
      new Option('--format <format>', 'output format (default: table)')
        .choices(OUTPUT_FORMATS)
        .argParser(choiceOption(OUTPUT_FORMATS))
    )
    .option('-o, --output <file>', 'write the report to this file (- for stdout)')
    .addOption(
      new Option(
        '--fail-on <severity>',
        'exit 1 when a finding is at or above this severity (default: high)'
      )
        .choices(FAIL_ON_CHOICES)
        .argParser(choiceOption(FAIL_ON_CHOICES))
    )
    .addOption(
      new Option(
        '--severity <list>',
        'show only findings of these severities (comma-separated); --fail-on still counts all'
      ).argParser(choiceListOption(SEVERITIES))
    )
    .addOption(
      new Option(
        '--status <list>',
        `show only findings of these statuses (${FINDING_STATUSES.join(', ')}); --fail-on still counts all`
      ).argParser(choiceListOption(FINDING_STATUSES))
    )
    .option('-q, --quiet', 'print findings and errors only: no summary, no progress')
    .option('--only <ids>', 'run only these checks (comma-separated)', splitList)
    .option('--skip <ids>', 'skip these checks (comma-separated)', splitList)
    .option(
      '--config <file>',
      'config file (default: .nodeclass-scanner.yaml or .yml here or in a parent, up to the repository root)'
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
    .option(
      '--crd <files...>',
      "admit the manifests by these CRDs (Karpenter's installed ec2nodeclasses/nodepools CRDs) instead of the built-in rules"
    )
    .action(async (paths: string[], flags: ScanFlags) => {
      await runScan(paths, flags, context);
    });
}

async function runScan(
  paths: readonly string[],
  flags: ScanFlags,
  { io, setExitCode }: CommandContext
): Promise<void> {
  checkIdsExist(flags.only ?? [], '--only');
  checkIdsExist(flags.skip ?? [], '--skip');
  const cwd = io.cwd ?? process.cwd();
  const config = await loadCliConfig({
    ...(flags.config === undefined ? {} : { explicit: flags.config }),
    cwd,
  });
  const { config: _file, annotationSuppression: _trust, now: nowFlag, ...flagValues } = flags;
  const settings: ScanSettings = resolveSettings({
    flags: flagValues,
    env: envSettings(io.env),
    file: config.settings ?? {},
  });
  if (nowFlag !== undefined && settings.world === undefined) {
    throw new ConfigError(
      '--now sets the time a --world scan compares its recorded dates with; manifest and live scans use the current time'
    );
  }
  const now = nowFlag ?? io.now();
  if (!settings.quiet) {
    for (const warning of expiredRuleWarnings(config, now)) io.stderr(warning);
  }
  const baseline =
    settings.baseline === undefined ? undefined : await loadBaseline(settings.baseline);
  // Before the scan: a missing account is a usage error, not a late surprise.
  const asffTarget = settings.format === 'asff' ? await asffTargetFor(settings) : undefined;
  // Past the deadline, AWS and Kubernetes reads fail at once: what they fed reports `error`, and
  // the report still comes out.
  const { deadlineMs } = limitsFromEnv(
    { deadlineMs: DEFAULT_CLI_SCAN_DEADLINE_MS },
    { deadlineMs: SCAN_DEADLINE_ENV },
    io.env
  );
  const deadline = deadlineAfter(
    deadlineMs,
    `the scan deadline of ${deadlineMs} ms (${SCAN_DEADLINE_ENV})`
  );
  const { inventory, inputErrors } = await withScanDeadline(deadline, async () => {
    const plan = await buildPlan({
      paths,
      clusters: settings.cluster,
      ...(settings.region === undefined ? {} : { region: settings.region }),
      ...(settings.world === undefined ? {} : { world: settings.world }),
      aws: settings.aws,
      ...(settings.profile === undefined ? {} : { profile: settings.profile }),
      ...(settings.kubernetesVersion === undefined
        ? {}
        : { kubernetesVersion: settings.kubernetesVersion }),
      ...(settings.karpenterVersion === undefined
        ? {}
        : { karpenterVersion: settings.karpenterVersion }),
      environment: settings.nonProduction ? 'non-production' : 'production',
      readStdin: io.readStdin,
      now,
      controllerRoles: settings.controllerRole,
      controllerPolicies: settings.controllerPolicy,
      crdFiles: settings.crd,
      ...(settings.permissionsBoundary === undefined
        ? {}
        : { permissionsBoundary: settings.permissionsBoundary }),
      ...(settings.dryRunRole === undefined ? {} : { dryRunRole: settings.dryRunRole }),
      ...(io.stderrIsTty && !settings.quiet
        ? { onProgress: (progress) => io.stderr(formatClusterProgress(progress)) }
        : {}),
    });
    return collectInventory(plan, {
      checks: selectChecks(CHECKS, settings.only, settings.skip),
    });
  });
  const evaluated = evaluateInventory(
    inventory,
    {
      now,
      only: settings.only,
      skip: settings.skip,
      ignore: config.ignore,
      ...annotationTrust(flags, config),
    },
    inputErrors
  );
  const report =
    baseline === undefined
      ? evaluated
      : compareWithBaseline(evaluated, baseline, {
          checkIds: selectChecks(CHECKS, settings.only, settings.skip)
            .map((check) => check.id)
            .filter((id) => !evaluated.summary.notRun.some((run) => run.checkId === id)),
        });
  const file =
    settings.output === undefined || settings.output === '-'
      ? undefined
      : fileOutput(settings.output);
  const out = coalescedWriter(file?.write ?? io.stdout);
  try {
    // In pieces (JSON: one per finding), each through the guarded writer: no whole-report string.
    writeReport(
      report,
      settings.format,
      {
        color: file === undefined && useColor(io),
        width: tableWidth(io, file === undefined),
        quiet: settings.quiet,
        filter: {
          ...(settings.severity === undefined ? {} : { severities: settings.severity }),
          ...(settings.status === undefined ? {} : { statuses: settings.status }),
        },
        checks: CHECKS,
        sources: sourceIndexOf(inventory),
        cwd,
        toolVersion: packageJson.version,
        ...(asffTarget === undefined ? {} : { asffTarget }),
        ...(settings.stdinName === undefined ? {} : { stdinName: settings.stdinName }),
      },
      out.write
    );
    out.flush();
  } finally {
    file?.close();
  }
  for (const inputError of report.summary.inputErrors) {
    io.stderr(
      `nodeclass-scan: ${terminalSafe(inputError.source)}: ${terminalSafe(inputError.message)}\n`
    );
  }
  setExitCode(exitCodeFor(report, settings.failOn));
}

function registerChecksCommand(program: Command, { io }: CommandContext): void {
  program
    .command('checks')
    .description("List the check catalog, or print one check's page: what, why, how to fix, links.")
    .argument('[id]', 'a check id: print its documentation page')
    .addOption(
      new Option('--format <format>', 'output format (default: table)')
        .choices(CATALOG_FORMATS)
        .argParser(choiceOption(CATALOG_FORMATS))
    )
    .action((id: string | undefined, flags: { format?: CatalogFormat }) => {
      const format = flags.format ?? 'table';
      if (id === undefined) {
        io.stdout(formatCatalog(CHECKS, format));
        return;
      }
      io.stdout(checkPage(id, format, tableWidth(io, true)));
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
    const { registerNotifyTestCommand } = await import('./notify-test.js');
    registerNotifyTestCommand(program, context);
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
