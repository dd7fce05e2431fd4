// `scan --format asff`: the report as a JSON list of ASFF findings, ready for Security Hub's
// BatchImportFindings (`aws securityhub batch-import-findings --findings file://out.json`, 100 at
// a time). The account comes from `--aws-account-id`, the world file, or STS in live scans.

import {
  type AsffFinding,
  type AsffTarget,
  isAsffExported,
  toAsffFinding,
} from '../../core/asff.js';
import type { CheckMeta } from '../../core/check.js';
import { partitionOf } from '../../core/region.js';
import type { ScanReport } from '../../core/report.js';
import { ConfigError } from '../../shared/errors.js';

/** The findings of the report Security Hub should hold (not-applicable ones are left out). */
export function asffFindingsOf(
  report: ScanReport,
  target: AsffTarget,
  checks: readonly CheckMeta[]
): AsffFinding[] {
  const byId = new Map(checks.map((check) => [check.id, check]));
  // One scan, one time: a later scan's records are later, so Security Hub takes them as updates.
  const times = {
    firstObservedAt: report.scannedAt,
    lastObservedAt: report.scannedAt,
    updatedAt: report.scannedAt,
  };
  return report.findings.filter(isAsffExported).map((finding) => {
    const check = byId.get(finding.checkId);
    return toAsffFinding(finding, { target, times, ...(check ? { check } : {}) });
  });
}

/** One element per line group, like `--format json`: never one string for the whole report. */
export function* asffChunks(
  report: ScanReport,
  target: AsffTarget,
  checks: readonly CheckMeta[]
): Generator<string> {
  const findings = asffFindingsOf(report, target, checks);
  if (findings.length === 0) {
    yield '[]\n';
    return;
  }
  for (const [index, finding] of findings.entries()) {
    const indented = JSON.stringify(finding, null, 2).replaceAll('\n', '\n  ');
    yield `${index === 0 ? '[' : ','}\n  ${indented}`;
  }
  yield '\n]\n';
}

export function formatAsff(
  report: ScanReport,
  target: AsffTarget,
  checks: readonly CheckMeta[]
): string {
  return [...asffChunks(report, target, checks)].join('');
}

const ACCOUNT_ID = /^\d{12}$/;

/** `--aws-account-id`: a 12-digit account id, else a usage error. */
export function parseAccountId(value: string): string {
  const trimmed = value.trim();
  if (!ACCOUNT_ID.test(trimmed)) {
    throw new ConfigError(`--aws-account-id "${value}" is not a 12-digit AWS account id`);
  }
  return trimmed;
}

export interface AsffTargetSources {
  /** `--aws-account-id`. */
  readonly accountFlag?: string;
  /** `--region`. */
  readonly regionFlag?: string;
  /** The world file's account and region, when the scan reads one. */
  readonly world?: () => Promise<{ readonly account: string; readonly region: string }>;
  /** The caller's account and the resolved region, in live scans (sts:GetCallerIdentity). */
  readonly live?: () => Promise<{ readonly account: string; readonly region: string }>;
}

/**
 * Where ASFF findings are imported: the flag wins, then the world file, then STS in live scans.
 * Without any of them the account is unknown: a usage error naming the flag to add.
 */
export async function resolveAsffTarget(sources: AsffTargetSources): Promise<AsffTarget> {
  const fallback = sources.world ?? sources.live;
  const known =
    sources.accountFlag === undefined || sources.regionFlag === undefined
      ? await fallback?.()
      : undefined;
  const account =
    sources.accountFlag === undefined ? known?.account : parseAccountId(sources.accountFlag);
  if (account === undefined) {
    throw new ConfigError(
      '--format asff needs the AWS account the findings belong to: add --aws-account-id 123456789012 (or scan with --world or --aws)'
    );
  }
  const region = sources.regionFlag ?? known?.region;
  if (region === undefined) {
    throw new ConfigError(
      '--format asff needs the region Security Hub imports the findings in: add --region'
    );
  }
  return { account, region, partition: partitionOf(region) };
}

export interface AsffScanFlags {
  readonly awsAccountId?: string;
  readonly region?: string;
  readonly world?: string;
  readonly aws?: boolean;
  readonly profile?: string;
  readonly cluster?: readonly string[];
}

/**
 * The target for a scan's flags. The world file and the AWS SDK are loaded only when needed
 * (offline scans never load the SDK).
 */
export function asffTargetFor(flags: AsffScanFlags): Promise<AsffTarget> {
  const live =
    flags.aws === true || flags.profile !== undefined || (flags.cluster ?? []).length > 0;
  const { world } = flags;
  return resolveAsffTarget({
    ...(flags.awsAccountId === undefined ? {} : { accountFlag: flags.awsAccountId }),
    ...(flags.region === undefined ? {} : { regionFlag: flags.region }),
    ...(world === undefined
      ? {}
      : {
          world: async () => {
            const { loadWorldFile } = await import('../../adapters/world/load-world.js');
            const loaded = await loadWorldFile(world);
            return { account: loaded.account, region: loaded.region };
          },
        }),
    ...(world === undefined && live
      ? {
          live: async () => {
            const { createAwsClients } = await import('../../adapters/aws/clients.js');
            const { resolveRegion, verifyAwsAccess } = await import('../aws-preflight.js');
            const clients = createAwsClients({
              ...(flags.region === undefined ? {} : { region: flags.region }),
              ...(flags.profile === undefined ? {} : { profile: flags.profile }),
            });
            const region = await resolveRegion(clients, flags.region);
            const identity = await verifyAwsAccess(clients.sts(region), region);
            return { account: identity.account, region };
          },
        }
      : {}),
  });
}
