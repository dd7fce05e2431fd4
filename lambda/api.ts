// The package's programmatic entry (`import { scan } from 'nodeclass-scanner'`): manifests, or a
// world file recorded by `nodeclass-scan snapshot`, in; the report `scan --format json` writes, out.
// Offline only: live scans need credentials and clusters, which is the CLI's and the service's job.
import * as z from 'zod';
import packageJson from '../package.json' with { type: 'json' };
import { collectInventory, evaluateInventory } from './app/run-scan.js';
import { type CliConfig, loadCliConfig } from './cli/config-file.js';
import { formatJson } from './cli/formats/json.js';
import { buildPlan } from './cli/plan.js';
import { CHECKS } from './core/checks/index.js';
import { SEVERITIES, type Severity } from './core/model.js';
import { regionProblem } from './core/region.js';
import { breachesThreshold as reportBreaches, type ScanReport } from './core/report.js';
import { didYouMean } from './core/suggest.js';
import { ConfigError, InputError, ScannerError } from './shared/errors.js';

export type {
  Finding,
  FindingStatus,
  ResourceRef,
  Severity,
} from './core/model.js';
export type {
  InputError,
  ReportFinding,
  ReportSummary,
  ResolvedFinding,
  ScanReport,
} from './core/report.js';
export { ConfigError, InputError as InputReadError, ScannerError } from './shared/errors.js';

// The package's bundle is minified, class names too; callers see them (`error.constructor.name`,
// and Node's report of an uncaught error, which prints `n [ConfigError]` for a renamed class).
for (const [name, type] of Object.entries({ ScannerError, ConfigError, InputError })) {
  Object.defineProperty(type, 'name', { value: name });
}

export { SEVERITIES };

/** The package's version (the CLI's `--version`). */
export const VERSION: string = packageJson.version;

export interface ScanInput {
  /** Manifest files or directories (searched for .yaml, .yml and .json files). */
  readonly paths?: readonly string[];
  /** Manifest text (YAML or JSON, several documents allowed), scanned as the CLI scans stdin. */
  readonly manifests?: string;
  /** A world-state file: AWS facts and permissions answered offline (`scan --world`). */
  readonly world?: string;
  /** With `world`: only these of its clusters (default: all). */
  readonly clusters?: readonly string[];
  /** Sets region and partition for spec checks (`--region`). */
  readonly region?: string;
  /** For version-aware checks, such as `1.7.0` (`--karpenter-version`). */
  readonly karpenterVersion?: string;
  /** `non-production` lowers pinning findings to info (`--non-production`). */
  readonly environment?: 'production' | 'non-production';
  /** Run only these check ids (`--only`). */
  readonly only?: readonly string[];
  /** Skip these check ids (`--skip`). */
  readonly skip?: readonly string[];
  /** A config file (`--config`): its ignore rules and annotationSuppression; none unless given. */
  readonly config?: string;
  /** Scan time (AMI deprecation, rule expiry); default: now. */
  readonly now?: Date;
}

const CHECK_IDS = CHECKS.map((check) => check.id);

const checkId = z.string().refine((id) => CHECK_IDS.includes(id), {
  error: (issue) =>
    `unknown check id ${JSON.stringify(issue.input)}${didYouMean(String(issue.input), CHECK_IDS)}`,
});

const scanInputSchema = z
  .object({
    paths: z.array(z.string().min(1)).optional(),
    manifests: z.string().optional(),
    world: z.string().min(1).optional(),
    clusters: z.array(z.string().min(1)).optional(),
    region: z
      .string()
      .refine((region) => regionProblem(region) === undefined, {
        error: (issue) => regionProblem(String(issue.input)) ?? 'not a region',
      })
      .optional(),
    karpenterVersion: z.string().min(1).optional(),
    environment: z.enum(['production', 'non-production']).optional(),
    only: z.array(checkId).optional(),
    skip: z.array(checkId).optional(),
    config: z.string().min(1).optional(),
    now: z.date().optional(),
  })
  .strict()
  // Clusters without a world would be a live scan: the API never reaches AWS.
  .refine((input) => input.clusters === undefined || input.world !== undefined, {
    error: 'clusters selects clusters of a world file: give world as well',
    path: ['clusters'],
  });

function parseInput(input: unknown): z.infer<typeof scanInputSchema> {
  const parsed = scanInputSchema.safeParse(input);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) =>
    issue.path.length === 0 ? issue.message : `${issue.path.join('.')}: ${issue.message}`
  );
  throw new ConfigError(`scan: ${problems.join('; ')}`);
}

/**
 * Scans and returns the report exactly as `nodeclass-scan scan --format json` prints it. Files
 * that cannot be read are listed in `summary.inputErrors` (the CLI exits 2 for those); options
 * that make no sense reject with a `ConfigError`, a world file that cannot be used with an
 * `InputReadError` (both `ScannerError`s, whose stack starts at the caller's `scan(…)`).
 */
export async function scan(input: ScanInput): Promise<ScanReport> {
  try {
    return await scanOrThrow(input);
  } catch (error) {
    // The caller's mistake, not the package's: its stack (and Node's report of an uncaught one,
    // which quotes the source line of the top frame) starts at the caller's line, never inside
    // the minified bundle, whose single line is kilobytes long.
    if (error instanceof ScannerError) Error.captureStackTrace(error, scan);
    throw error;
  }
}

async function scanOrThrow(input: ScanInput): Promise<ScanReport> {
  const options = parseInput(input);
  const now = options.now ?? new Date();
  const paths = [...(options.paths ?? []), ...(options.manifests === undefined ? [] : ['-'])];
  const config: CliConfig =
    options.config === undefined
      ? { ignore: [] }
      : await loadCliConfig({ explicit: options.config, cwd: process.cwd() });
  const plan = await buildPlan({
    paths,
    clusters: options.clusters ?? [],
    ...(options.region === undefined ? {} : { region: options.region }),
    ...(options.world === undefined ? {} : { world: options.world }),
    aws: false,
    ...(options.karpenterVersion === undefined
      ? {}
      : { karpenterVersion: options.karpenterVersion }),
    environment: options.environment ?? 'production',
    readStdin: async () => options.manifests ?? '',
    now,
  });
  const { inventory, inputErrors } = await collectInventory(plan);
  const report = evaluateInventory(
    inventory,
    {
      now,
      only: options.only ?? [],
      skip: options.skip ?? [],
      ignore: config.ignore,
      ...(config.annotationSuppression !== undefined
        ? {
            annotationSuppression: config.annotationSuppression,
            annotationSuppressionSetting: `annotationSuppression in ${config.file ?? 'the config file'}`,
          }
        : {}),
    },
    inputErrors
  );
  // Through the CLI's own JSON writer: the same document, not a look-alike.
  return JSON.parse(formatJson(report)) as ScanReport;
}

/** True when a finding counts at or above `threshold`: the CLI's `--fail-on` exit 1. */
export function breachesThreshold(report: ScanReport, threshold: Severity | 'none'): boolean {
  return reportBreaches(report, threshold);
}
