// README's demo of the example world (World-state files and live AWS): its commands run as
// written, and each statement its description makes is checked against their output, on the day
// the file was recorded (what the commands replay with --now), today, and years later, so that
// the demo, and what README says of it, cannot drift with the clock unnoticed.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ReportFinding, ScanReport } from '../../lambda/core/report.js';
import { runCliCaptured } from '../cli/support/run-cli.js';
import { REPO_ROOT } from '../package/pack.js';

const README = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
const WORLD = JSON.parse(readFileSync(join(REPO_ROOT, 'examples/world.json'), 'utf8')) as {
  account: string;
  region: string;
  recordedAt: string;
};
const DAY_MS = 86_400_000;

/** README's commands scanning the example world, as written (in code blocks or inline). */
const DEMO_COMMANDS = [
  ...README.matchAll(/(?:^|`)npx nodeclass-scan (scan --world examples\/world\.json[^`\n#]*)/gm),
].map(([, command]) => (command ?? '').trim().split(/\s+/));

/** The paragraphs describing the demo, whitespace collapsed. */
function paragraphStartingWith(start: string): string {
  const at = README.indexOf(start);
  if (at < 0) throw new Error(`README has no paragraph starting ${start}`);
  const end = README.indexOf('\n\n', at);
  return README.slice(at, end).replace(/\s+/g, ' ');
}
const DESCRIPTION = paragraphStartingWith('`examples/world.json` (account');
const LATER = paragraphStartingWith('Recorded dates (deprecations, reservation end dates)');

/** README's first demo command, without its `--now`. */
function unpinned(): string[] {
  const [command = []] = DEMO_COMMANDS;
  const at = command.indexOf('--now');
  return at < 0 ? [...command] : [...command.slice(0, at), ...command.slice(at + 2)];
}

/** The JSON report of README's first demo command, at `--now` when given, else at the clock. */
async function demoScan(now?: string): Promise<ScanReport> {
  const run = await runCliCaptured(
    [...unpinned(), ...(now === undefined ? [] : ['--now', now]), '--format', 'json'],
    { cwd: REPO_ROOT, now: new Date() }
  );
  expect(run.stderr).toBe('');
  return JSON.parse(run.stdout) as ScanReport;
}

type Findings = readonly ReportFinding[];
const on = (findings: Findings, cluster: string, name: string, checkId: string) =>
  findings.filter(
    (finding) =>
      finding.resource.cluster === cluster &&
      finding.resource.name === name &&
      finding.checkId === checkId
  );
const failing = (findings: Findings, checkId: string) =>
  findings
    .filter((finding) => finding.checkId === checkId && finding.status === 'fail')
    .map((finding) => `${finding.resource.cluster}/${finding.resource.name}`)
    .sort();
/** Objects with nothing but passes and not-applicable. */
const healthy = (findings: Findings, kind: string) => {
  const names = new Set(
    findings
      .filter((finding) => finding.resource.kind === kind)
      .map((finding) => `${finding.resource.cluster}/${finding.resource.name}`)
  );
  for (const finding of findings) {
    if (finding.status !== 'pass' && finding.status !== 'not-applicable') {
      names.delete(`${finding.resource.cluster}/${finding.resource.name}`);
    }
  }
  return [...names].sort();
};

/** Each statement README makes of the demo, as written there, and what the output must show. */
const STATEMENTS: readonly {
  readonly text: string;
  readonly holds: (findings: Findings) => void;
}[] = [
  {
    text: 'a name-prefix selector whose newest image is still `pending` while Packer builds it (critical on `staging-use1`, which runs Karpenter 1.1.2, a notice on `prod-use1`)',
    holds: (findings) => {
      const [critical] = on(findings, 'staging-use1', 'builds', 'ami-newest-match-available');
      expect(critical).toMatchObject({ status: 'fail', severity: 'critical' });
      expect(critical?.message).toMatch(/Karpenter 1\.1\.2 .*pending/);
      expect(
        findings.filter(
          (finding) =>
            finding.resource.cluster === 'prod-use1' &&
            finding.checkId === 'ami-newest-match-available' &&
            finding.status !== 'pass' &&
            finding.status !== 'not-applicable'
        )
      ).toEqual([expect.objectContaining({ status: 'notice' })]);
    },
  },
  {
    text: 'a deprecated pinned AMI',
    holds: (findings) =>
      expect(failing(findings, 'ami-not-deprecated')).toEqual(['prod-use1/legacy']),
  },
  {
    text: "an AMI outside the account's Allowed AMIs",
    holds: (findings) => expect(failing(findings, 'ami-allowed')).toEqual(['prod-use1/hardened']),
  },
  {
    text: 'an alias and a custom `ssmParameter` that resolve to nothing',
    holds: (findings) => {
      expect(failing(findings, 'ami-alias-resolves')).toEqual(['prod-use1/bottlerocket']);
      expect(failing(findings, 'ami-ssm-parameter-resolves')).toEqual(['prod-use1/golden']);
    },
  },
  {
    text: "a GPU AMI whose root snapshot is larger than the NodeClass's root volume",
    holds: (findings) =>
      expect(failing(findings, 'root-volume-fits-ami')).toEqual(['prod-use1/gpu']),
  },
  {
    text: 'an exhausted subnet',
    holds: (findings) =>
      expect(failing(findings, 'subnets-have-free-ips')).toEqual(['prod-use1/edge']),
  },
  {
    text: 'security groups in another VPC or sharing a name across VPCs',
    holds: (findings) => {
      expect(failing(findings, 'network-single-vpc')).toContain('prod-use1/monitoring');
      expect(failing(findings, 'security-group-name-unique')).toEqual(['prod-use1/shared-name']);
    },
  },
  {
    text: 'a capacity reservation ending three days after the file was recorded',
    holds: (findings) => {
      const ends = new Date(Date.parse(WORLD.recordedAt) + 3 * DAY_MS).toISOString().slice(0, 10);
      const [reservation] = on(findings, 'prod-use1', 'gpu', 'capacity-reservations-resolve');
      expect(reservation?.status).toBe('fail');
      expect(reservation?.message).toContain(`ends on ${ends}`);
    },
  },
  {
    text: 'a missing instance profile',
    holds: (findings) =>
      expect(failing(findings, 'instance-profile-exists')).toEqual(['prod-use1/legacy']),
  },
  {
    text: 'a node role that does not trust EC2',
    holds: (findings) => {
      expect(failing(findings, 'node-role-valid')).toEqual(['prod-use1/batch']);
      expect(on(findings, 'prod-use1', 'batch', 'node-role-valid')[0]?.message).toContain(
        'does not trust ec2.amazonaws.com'
      );
    },
  },
  {
    text: 'one without an access entry',
    holds: (findings) =>
      expect(on(findings, 'prod-use1', 'analytics', 'node-role-can-join')[0]?.message).toContain(
        'no access entry'
      ),
  },
  {
    text: 'one without `AmazonEKS_CNI_Policy`',
    holds: (findings) => {
      expect(failing(findings, 'node-role-policies').length).toBeGreaterThan(0);
      for (const finding of findings.filter(
        (candidate) => candidate.checkId === 'node-role-policies' && candidate.status === 'fail'
      )) {
        expect(finding.message).toContain('lacks AmazonEKS_CNI_Policy');
      }
    },
  },
  {
    text: 'a healthy NodeClass that passes everything (`default` on `prod-use1`)',
    holds: (findings) => expect(healthy(findings, 'EC2NodeClass')).toContain('prod-use1/default'),
  },
  {
    text: "`graviton` (arm64, restricted to the x86-only families `m7i` and `c7i`), `capped` (`limits.memory: 1000`, which is 1000 bytes), `reserved-analytics` (reserved-only, its reservation in `us-east-1d` where the class has no subnet; `reserved-default`'s reservation in `us-east-1b` works), a family offered only in a zone without a subnet, and an arm64 NodePool on a class with x86 images only",
    holds: (findings) => {
      expect(failing(findings, 'nodepool-instance-types-offered')).toEqual(
        expect.arrayContaining([
          'prod-use1/capped',
          'prod-use1/gpu-arm',
          'prod-use1/graviton',
          'prod-use1/memory-optimized',
          'prod-use1/reserved-analytics',
        ])
      );
      expect(
        on(findings, 'prod-use1', 'graviton', 'nodepool-instance-types-offered')[0]?.message
      ).toMatch(/arm64.*m7i, c7i/);
      expect(
        on(findings, 'prod-use1', 'gpu-arm', 'nodepool-instance-types-offered')[0]?.message
      ).toMatch(/In \[arm64\].*images of the class \(amd64\): 0/);
      expect(healthy(findings, 'NodePool')).toEqual(
        expect.arrayContaining(['prod-use1/general', 'prod-use1/reserved-default'])
      );
    },
  },
];

describe("README's demo of the example world", () => {
  it('runs as written, every command pinned to the day the file was recorded', async () => {
    // Assess: the commands, in Set-up and World-state files
    expect(DEMO_COMMANDS.length).toBeGreaterThanOrEqual(3);
    for (const command of DEMO_COMMANDS) {
      expect(command.slice(command.indexOf('--now'), command.indexOf('--now') + 2)).toEqual([
        '--now',
        WORLD.recordedAt,
      ]);
      // Act: each as README writes it; the clock is not the day of the recording
      const run = await runCliCaptured(command, { cwd: REPO_ROOT, now: new Date() });
      expect(run.code, run.stderr).toBe(1);
      expect(run.stderr).toBe('');
    }
    expect(DESCRIPTION).toContain(
      `(account ${WORLD.account}, ${WORLD.region}, recorded on ${WORLD.recordedAt.slice(0, 10)})`
    );
  });

  describe('says what the recorded day shows', () => {
    let recorded: ScanReport;
    beforeAll(async () => {
      recorded = await demoScan(WORLD.recordedAt);
    });

    it.each(STATEMENTS.map((statement) => [statement.text.slice(0, 60), statement]))(
      '%s…',
      (_, statement) => {
        expect(DESCRIPTION).toContain(statement.text);
        statement.holds(recorded.findings);
      }
    );
  });

  it('says the same today and until October 2036, but for the ended GPU reservation', async () => {
    // Prepare: the verdicts, without the wording (counts and dates in messages may change)
    const verdicts = (report: ScanReport) =>
      report.findings
        .filter((finding) => finding.status !== 'pass' && finding.status !== 'not-applicable')
        .map(
          (finding) =>
            `${finding.resource.cluster}/${finding.resource.kind}/${finding.resource.name} ${finding.checkId} ${finding.status} ${finding.severity}`
        )
        .sort();
    const recorded = await demoScan(WORLD.recordedAt);
    // Act
    const today = await demoScan();
    const beforeDeprecations = await demoScan('2036-10-01T00:00:00Z');
    const deprecating = await demoScan('2036-10-10T00:00:00Z');
    // Assess: the one change README names, and nothing else
    const later = [
      ...verdicts(recorded),
      'prod-use1/NodePool/training nodepool-instance-types-offered fail critical',
    ].sort();
    expect(verdicts(today)).toEqual(later);
    expect(verdicts(beforeDeprecations)).toEqual(later);
    for (const report of [today, beforeDeprecations]) {
      expect(
        on(report.findings, 'prod-use1', 'gpu', 'capacity-reservations-resolve')[0]
      ).toMatchObject({
        status: 'fail',
        severity: 'medium',
        message: expect.stringContaining('matches no active reservation'),
      });
    }
    expect(failing(deprecating.findings, 'ami-not-deprecated').length).toBeGreaterThan(1);
    // …as README words it
    for (const phrase of [
      '`--now` (ISO 8601, `--world` scans only',
      'up to October 2036',
      'which ended on 2026-11-25',
      "`gpu`'s reservation term then matches no active reservation (`capacity-reservations-resolve`, still medium)",
      '`training`, the reserved-only NodePool that launches through it, has no instance type left (`nodepool-instance-types-offered`, critical)',
    ]) {
      expect(LATER).toContain(phrase);
    }
  });
});
