// A NodeClass may name any SSM parameter, and a parameter may hold anything, secrets included. The
// scanner reports only whether it names an image the account can see: no value, length or form of
// anything else reaches a finding, a report or an alert, live or offline. Under the Lambdas'
// scope, a parameter outside the configured prefixes is not even asked for.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  DescribeImagesCommand,
  type DescribeImagesCommandInput,
  EC2Client,
} from '@aws-sdk/client-ec2';
import { IAMClient } from '@aws-sdk/client-iam';
import {
  GetParameterCommand,
  type GetParameterCommandInput,
  GetParametersCommand,
  ParameterNotFound,
  SSMClient,
} from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { createAwsClients } from '../../lambda/adapters/aws/clients.js';
import { createLivePlan } from '../../lambda/adapters/live-plan.js';
import { collectInventory, evaluateInventory } from '../../lambda/app/run-scan.js';
import { formatJson } from '../../lambda/cli/formats/json.js';
import { ok } from '../../lambda/core/facts/slice.js';
import type { Finding } from '../../lambda/core/model.js';
import { renderChangeMessage } from '../../lambda/core/notify/message.js';
import type { ScanReport } from '../../lambda/core/report.js';
import { SSM_PARAMETER_PREFIXES_SETTING } from '../../lambda/shared/config.js';
import { runCliCaptured, tempTree } from '../cli/support/run-cli.js';
import { aClusterFacts, SCAN_TIME } from '../support/aws-builders.js';
import { aNodeClassEntry, aNodeClassObject } from '../support/builders.js';
import { aStoredState } from '../support/findings.js';
import { getParametersFrom } from '../support/ssm-batch.js';

const ACCOUNT = '111122223333';
const VISIBLE = 'ami-0aaaabbbbccccdddd';
/** Values no output may carry, with the lengths no output may state. */
const SECRETS: Readonly<Record<string, string>> = {
  '/platform/ami/invisible': 'ami-0123456789abcdef0',
  '/platform/ami/token': 'ami-k8s-secret-token-XYZ123abc',
  '/platform/ami/password': 'correct-horse-battery-staple-42',
  '/prod/db/password': 'TOPSECRET-database-master-password',
};
const PARAMETERS: Readonly<Record<string, string>> = {
  ...SECRETS,
  '/platform/ami/visible': VISIBLE,
};
const IN_SCOPE = ['/platform/ami/visible', ...Object.keys(SECRETS).slice(0, 3)];

const ec2 = mockClient(EC2Client);
const ssm = mockClient(SSMClient);
const iam = mockClient(IAMClient);

afterEach(() => {
  ec2.reset();
  ssm.reset();
  iam.reset();
});

const terms = (...names: string[]) => names.map((ssmParameter) => ({ ssmParameter }));
const NODE_CLASSES = [
  aNodeClassObject({ name: 'mixed', spec: { amiSelectorTerms: terms(...IN_SCOPE) } }),
  aNodeClassObject({ name: 'invisible', spec: { amiSelectorTerms: terms(IN_SCOPE[1] ?? '') } }),
  aNodeClassObject({ name: 'outside', spec: { amiSelectorTerms: terms('/prod/db/password') } }),
];

const visibleImage = {
  ImageId: VISIBLE,
  Name: 'golden-al2023',
  State: 'available',
  Architecture: 'x86_64',
  OwnerId: ACCOUNT,
  CreationDate: '2026-10-01T00:00:00.000Z',
} as const;

/** EC2 lists only the visible image; SSM answers from PARAMETERS. */
function serveAccount(): void {
  ec2.on(DescribeImagesCommand).callsFake(async (input: DescribeImagesCommandInput) => {
    const ids = input.Filters?.find((filter) => filter.Name === 'image-id')?.Values ?? [];
    return { Images: ids.includes(VISIBLE) ? [visibleImage] : [] };
  });
  const getParameter = async (input: GetParameterCommandInput) => {
    const value = PARAMETERS[input.Name ?? ''];
    if (value === undefined) {
      throw new ParameterNotFound({ message: 'not found', $metadata: {} });
    }
    return { Parameter: { Name: input.Name, Type: 'String', Value: value } };
  };
  ssm.on(GetParameterCommand).callsFake(getParameter);
  ssm.on(GetParametersCommand).callsFake(getParametersFrom(getParameter));
}

/** A Lambda-shaped live scan: the live plan's enrichers, scoped to /platform/ami/. */
async function scanLive(): Promise<ScanReport> {
  const plan = createLivePlan({
    region: 'us-east-1',
    clusters: ['demo'],
    clients: createAwsClients({ region: 'us-east-1' }),
    now: () => SCAN_TIME,
    ssmParameterScope: { prefixes: ['/platform/ami/'], setting: SSM_PARAMETER_PREFIXES_SETTING },
  });
  const cluster = {
    name: 'demo',
    partition: 'aws' as const,
    region: 'us-east-1',
    aws: ok(aClusterFacts()),
  };
  const { inventory, inputErrors } = await collectInventory({
    objects: {
      load: async () => ({
        clusters: [cluster],
        nodeClasses: NODE_CLASSES.map((raw) => aNodeClassEntry(raw, 'demo')),
        nodePools: [],
        inputs: ['spec'],
        inputErrors: [],
      }),
    },
    enrichers: plan.enrichers?.slice(0, 1) ?? [],
  });
  return evaluateInventory(inventory, { now: SCAN_TIME }, inputErrors);
}

const AMI_CHECKS = ['ami-ssm-parameter-resolves', 'ami-selector-resolves'];

function amiFindings(report: ScanReport): Finding[] {
  return report.findings.filter((finding) => AMI_CHECKS.includes(finding.checkId));
}

/** `name check term status message` of the SSM parameter findings. */
function verdicts(report: ScanReport, names: readonly string[]): string[] {
  return report.findings
    .filter(
      (finding) =>
        finding.checkId === 'ami-ssm-parameter-resolves' && names.includes(finding.resource.name)
    )
    .map(
      (finding) =>
        `${finding.resource.name} ${finding.location?.path ?? ''} ${finding.status} ${finding.message}`
    )
    .sort();
}

/** No secret value, and no length of one, in `text`. */
function expectNoSecret(text: string, label: string): void {
  for (const [name, value] of Object.entries(SECRETS)) {
    expect(text, `${label}: value of ${name}`).not.toContain(value);
  }
}

function expectNoLength(text: string, label: string): void {
  for (const [name, value] of Object.entries(SECRETS)) {
    expect(text, `${label}: length of ${name}`).not.toMatch(new RegExp(`\\b${value.length}\\b`));
  }
}

const NO_IMAGE = (name: string) =>
  `SSM parameter ${name} does not hold the id of an image this account can see in the cluster's region (its value is not shown): Karpenter selects nothing through this term.`;

describe('hostile SSM parameters', () => {
  it('live, under the Lambdas’ scope: says only whether a parameter names a visible image', async () => {
    // Prepare
    serveAccount();

    // Act
    const report = await scanLive();

    // Assess: the visible image is named; the other values read alike and are never shown
    expect(verdicts(report, ['mixed'])).toEqual([
      `mixed spec.amiSelectorTerms[0].ssmParameter pass SSM parameter /platform/ami/visible holds ${VISIBLE}, an image this account can see. It is outside /aws/service/: Karpenter's controller needs its own ssm:GetParameter grant for it (see controller-can-discover).`,
      `mixed spec.amiSelectorTerms[1].ssmParameter fail ${NO_IMAGE('/platform/ami/invisible')}`,
      `mixed spec.amiSelectorTerms[2].ssmParameter fail ${NO_IMAGE('/platform/ami/token')}`,
      `mixed spec.amiSelectorTerms[3].ssmParameter fail ${NO_IMAGE('/platform/ami/password')}`,
    ]);
    const json = formatJson(report);
    expectNoSecret(json, 'JSON report');
    for (const finding of amiFindings(report)) {
      expectNoLength(`${finding.message} ${JSON.stringify(finding.evidence ?? {})}`, finding.id);
    }
    // The selector's query evidence names the parameter instead of its value.
    const selector = report.findings.find(
      (finding) =>
        finding.checkId === 'ami-selector-resolves' && finding.resource.name === 'invisible'
    );
    expect(selector?.status).toBe('fail');
    expect(JSON.stringify(selector?.evidence)).toContain(
      '(value of SSM parameter /platform/ami/invisible, not shown)'
    );
  }, 60_000);

  it('live: renders alerts for those findings without any value or length', async () => {
    // Prepare
    serveAccount();
    const report = await scanLive();
    const open = amiFindings(report).filter((finding) => finding.status !== 'pass');
    expect(open.length).toBeGreaterThanOrEqual(5);

    for (const finding of open) {
      // Act
      const message = renderChangeMessage(
        { kind: 'new', next: aStoredState(finding, SCAN_TIME.toISOString()), finding },
        { location: { account: ACCOUNT, region: 'us-east-1' } }
      );

      // Assess
      expectNoSecret(JSON.stringify(message), `SNS message of ${finding.id}`);
      expectNoLength(message.bodies.email, `email of ${finding.id}`);
    }
  }, 60_000);

  it('live: a parameter outside the prefixes is an error naming the setting, and SSM is not called', async () => {
    // Prepare
    serveAccount();

    // Act
    const report = await scanLive();

    // Assess
    const asked = [
      ...ssm.commandCalls(GetParameterCommand).map((call) => call.args[0].input.Name),
      ...ssm.commandCalls(GetParametersCommand).flatMap((call) => call.args[0].input.Names ?? []),
    ];
    expect([...new Set(asked)].sort()).toEqual([...IN_SCOPE].sort());
    expect(asked).not.toContain('/prod/db/password');
    const outside = report.findings.filter((finding) => finding.resource.name === 'outside');
    const parameter = outside.find((finding) => finding.checkId === 'ami-ssm-parameter-resolves');
    expect(parameter?.status).toBe('error');
    expect(parameter?.message).toContain(
      'add a prefix of /prod/db/password to the ssmParameterPrefixes CDK context key'
    );
    expect(parameter?.message).toContain('(it allows /platform/ami/)');
    const selector = outside.find((finding) => finding.checkId === 'ami-selector-resolves');
    expect(selector?.status).toBe('error');
    expect(selector?.causedBy).toBe(parameter?.id);
    expectNoSecret(formatJson(report), 'JSON report');
  }, 60_000);

  it('reports a world file’s parameters exactly as the live scan does, values unseen', async () => {
    // Prepare
    const world = {
      version: 1,
      account: ACCOUNT,
      region: 'us-east-1',
      ec2: { images: [visibleImage] },
      ssm: { parameters: PARAMETERS },
      eks: { clusters: [{ name: 'demo', version: '1.32' }] },
    };
    const toYaml = (raw: Record<string, unknown>) => JSON.stringify(raw);
    const tree = tempTree(
      Object.fromEntries(NODE_CLASSES.map((raw, index) => [`nc-${index}.yaml`, toYaml(raw)]))
    );
    const worldFile = join(tree.dir, 'world.json');
    writeFileSync(worldFile, JSON.stringify(world));
    serveAccount();
    const live = await scanLive();

    try {
      // Act
      const run = await runCliCaptured(
        ['scan', tree.dir, '--world', worldFile, '--cluster', 'demo', '--format', 'json'],
        { now: SCAN_TIME }
      );

      // Assess: the same verdicts and words; the CLI reads any parameter, and still shows none
      expectNoSecret(run.stdout, 'world scan stdout');
      expectNoSecret(run.stderr, 'world scan stderr');
      const offline = JSON.parse(run.stdout) as ScanReport;
      expect(verdicts(offline, ['mixed', 'invisible'])).toEqual(
        verdicts(live, ['mixed', 'invisible'])
      );
      expect(verdicts(offline, ['outside'])).toEqual([
        `outside spec.amiSelectorTerms[0].ssmParameter fail ${NO_IMAGE('/prod/db/password')}`,
      ]);
      for (const finding of amiFindings(offline)) {
        expectNoLength(`${finding.message} ${JSON.stringify(finding.evidence ?? {})}`, finding.id);
      }
    } finally {
      tree.cleanup();
    }
  }, 60_000);
});
