import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  DescribeCapacityReservationsCommand,
  type DescribeCapacityReservationsCommandInput,
  DescribeImagesCommand,
  type DescribeImagesCommandInput,
  DescribeInstanceTypeOfferingsCommand,
  DescribeInstanceTypesCommand,
  DescribeSecurityGroupsCommand,
  type DescribeSecurityGroupsCommandInput,
  DescribeSubnetsCommand,
  type DescribeSubnetsCommandInput,
  EC2Client,
  type Filter,
} from '@aws-sdk/client-ec2';
import {
  GetInstanceProfileCommand,
  GetPolicyCommand,
  GetPolicyVersionCommand,
  GetRoleCommand,
  IAMClient,
  ListAttachedRolePoliciesCommand,
  ListRolePoliciesCommand,
  NoSuchEntityException,
  SimulatePrincipalPolicyCommand,
  type SimulatePrincipalPolicyCommandInput,
} from '@aws-sdk/client-iam';
import {
  GetParameterCommand,
  GetParametersCommand,
  ParameterNotFound,
  SSMClient,
} from '@aws-sdk/client-ssm';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { mockClient } from 'aws-sdk-client-mock';
import { Command } from 'commander';
import { beforeEach, describe, expect, it } from 'vitest';
import { createLiveAwsFacts } from '../../lambda/adapters/aws/aws-facts-adapter.js';
import { createAwsClients } from '../../lambda/adapters/aws/clients.js';
import {
  createIamRolePolicyReader,
  createIamSimulator,
} from '../../lambda/adapters/aws/iam-simulator.js';
import { REDACTED_USER_DATA } from '../../lambda/adapters/world/build-world.js';
import { parseWorld } from '../../lambda/adapters/world/load-world.js';
import { createWorldPolicySimulator } from '../../lambda/adapters/world/permissions.js';
import { REDACTED_PARAMETER_VALUE } from '../../lambda/adapters/world/recorder.js';
import type { World } from '../../lambda/adapters/world/schema.js';
import { createWorldAwsFacts } from '../../lambda/adapters/world/world-facts.js';
import { createWorldObjectSource } from '../../lambda/adapters/world/world-objects.js';
import { createAwsFactsEnricher } from '../../lambda/app/collect-aws-facts.js';
import { createPermissionsEnricher } from '../../lambda/app/collect-permissions.js';
import { collectInventory, evaluateInventory } from '../../lambda/app/run-scan.js';
import { type CliIo, runCli } from '../../lambda/cli/main.js';
import { registerSnapshotCommand, type SnapshotDeps } from '../../lambda/cli/snapshot.js';
import type { Finding } from '../../lambda/core/model.js';
import type { ScanReport } from '../../lambda/core/report.js';
import { getParametersFrom } from '../support/ssm-batch.js';
import { tempTree } from './support/run-cli.js';

const EXAMPLE = join(import.meta.dirname, '../../examples/world.json');
const NOW = new Date('2026-11-22T12:00:00Z');
const SECRET = 'AQICAHhSuperSecretCiphertextDoNotLeak==';
const USER_DATA_SECRET = 'export DB_PASSWORD=hunter2';

const ec2 = mockClient(EC2Client);
const ssm = mockClient(SSMClient);
const iam = mockClient(IAMClient);
const sts = mockClient(STSClient);

/** The "live account": the example world, plus things a scan must not record. */
function liveAccount(): World {
  const world = parseWorld(readFileSync(EXAMPLE, 'utf8'), EXAMPLE);
  world.ec2.images.push({
    ImageId: 'ami-0999999999999aaaa',
    Name: 'unrelated-image',
    OwnerId: world.account,
    State: 'available',
    Architecture: 'x86_64',
  });
  world.ec2.subnets.push({ SubnetId: 'subnet-0unrelated', VpcId: 'vpc-0other' });
  const prod = world.eks.clusters[0];
  const golden = prod?.kubernetes?.ec2NodeClasses.find(
    (object) => (object as { metadata: { name: string } }).metadata.name === 'golden'
  ) as { spec: Record<string, unknown> } | undefined;
  if (golden) golden.spec.userData = USER_DATA_SECRET;
  return world;
}

function filtersOf(filters: Filter[] | undefined) {
  return (filters ?? []).map((filter) => ({
    name: filter.Name ?? '',
    values: filter.Values ?? [],
  }));
}

/** Answers SDK commands from the account's records with EC2/SSM/IAM semantics. */
function serve(account: World): void {
  const port = createWorldAwsFacts({ world: account, now: NOW });
  const byId = <T extends Record<string, unknown>>(items: T[], key: keyof T) =>
    new Map(items.map((item) => [String(item[key]), item]));
  const images = byId(account.ec2.images, 'ImageId');
  const subnets = byId(account.ec2.subnets, 'SubnetId');
  const groups = byId(account.ec2.securityGroups, 'GroupId');
  const reservations = byId(account.ec2.capacityReservations, 'CapacityReservationId');
  ec2.on(DescribeImagesCommand).callsFake(async (input: DescribeImagesCommandInput) => {
    const found = await port.describeImages({
      filters: filtersOf(input.Filters),
      ...(input.Owners ? { owners: input.Owners } : {}),
      includeDeprecated: input.IncludeDeprecated ?? false,
    });
    return { Images: found.map((image) => images.get(image.id)) };
  });
  ec2.on(DescribeSubnetsCommand).callsFake(async (input: DescribeSubnetsCommandInput) => {
    const found = await port.describeSubnets({ filters: filtersOf(input.Filters) });
    return { Subnets: found.map((subnet) => subnets.get(subnet.id)) };
  });
  // The account's instance types as DescribeInstanceTypes returns them (its records are SDK shapes).
  ec2.on(DescribeInstanceTypesCommand).callsFake(async () => ({
    InstanceTypes: account.instanceTypes?.['us-east-1'] ?? [],
  }));
  ec2.on(DescribeInstanceTypeOfferingsCommand).callsFake(async () => ({
    InstanceTypeOfferings: ((await port.describeInstanceTypeOfferings()) ?? []).map((item) => ({
      InstanceType: item.instanceType,
      LocationType: 'availability-zone',
      Location: item.zone,
    })),
  }));
  ec2
    .on(DescribeSecurityGroupsCommand)
    .callsFake(async (input: DescribeSecurityGroupsCommandInput) => {
      const found = await port.describeSecurityGroups({ filters: filtersOf(input.Filters) });
      return { SecurityGroups: found.map((group) => groups.get(group.id)) };
    });
  ec2
    .on(DescribeCapacityReservationsCommand)
    .callsFake(async (input: DescribeCapacityReservationsCommandInput) => {
      const found = await port.describeCapacityReservations({
        filters: filtersOf(input.Filters),
        ...(input.CapacityReservationIds ? { ids: input.CapacityReservationIds } : {}),
      });
      return { CapacityReservations: found.map((reservation) => reservations.get(reservation.id)) };
    });
  // IAM's simulator, answered from the account's permission table (SDK response shape).
  const simulator = createWorldPolicySimulator(account);
  iam
    .on(SimulatePrincipalPolicyCommand)
    .callsFake(async (input: SimulatePrincipalPolicyCommandInput) => {
      const results = await simulator.simulate({
        principalArn: input.PolicySourceArn ?? '',
        actions: input.ActionNames ?? [],
        resourceArns: input.ResourceArns ?? ['*'],
        context: [],
      } as never);
      return {
        IsTruncated: false,
        EvaluationResults: results.map((result) => ({
          EvalActionName: result.action,
          EvalResourceName: result.resource,
          EvalDecision: result.decision,
          ...(result.allowedByOrganizations === false
            ? { OrganizationsDecisionDetail: { AllowedByOrganizations: false } }
            : {}),
          ...(result.allowedByPermissionsBoundary === false
            ? { PermissionsBoundaryDecisionDetail: { AllowedByPermissionsBoundary: false } }
            : {}),
          MatchedStatements: result.matchedStatements.map((statement) => ({
            SourcePolicyId: statement.sourcePolicyId,
            SourcePolicyType: 'IAM Policy',
          })),
          MissingContextValues: [...result.missingContextValues],
        })),
      };
    });
  const getParameter = async (input: { Name: string }) => {
    if (input.Name === '/platform/ami/golden-al2023') {
      return { Parameter: { Name: input.Name, Type: 'SecureString', Value: SECRET } };
    }
    const value = account.ssm.parameters[input.Name];
    if (value === undefined) {
      throw new ParameterNotFound({ message: 'not found', $metadata: { httpStatusCode: 400 } });
    }
    return { Parameter: { Name: input.Name, Type: 'String', Value: value } };
  };
  ssm.on(GetParameterCommand).callsFake(getParameter);
  ssm.on(GetParametersCommand).callsFake(getParametersFrom(getParameter));
  const missing = () =>
    new NoSuchEntityException({ message: 'not found', $metadata: { httpStatusCode: 404 } });
  iam.on(GetRoleCommand).callsFake(async (input: { RoleName: string }) => {
    const role = account.iam.roles.find((candidate) => candidate.RoleName === input.RoleName);
    if (!role) throw missing();
    const { AttachedPolicies: _attached, ...rest } = role;
    return { Role: rest };
  });
  iam.on(ListAttachedRolePoliciesCommand).callsFake(async (input: { RoleName: string }) => {
    const role = account.iam.roles.find((candidate) => candidate.RoleName === input.RoleName);
    if (!role) throw missing();
    return { AttachedPolicies: role.AttachedPolicies ?? [], IsTruncated: false };
  });
  iam.on(GetInstanceProfileCommand).callsFake(async (input: { InstanceProfileName: string }) => {
    const profile = account.iam.instanceProfiles.find(
      (candidate) => candidate.InstanceProfileName === input.InstanceProfileName
    );
    if (!profile) throw missing();
    return { InstanceProfile: profile };
  });
  sts.on(GetCallerIdentityCommand).resolves({
    Account: account.account,
    Arn: `arn:aws:sts::${account.account}:assumed-role/Auditor/session`,
    UserId: 'AROAEXAMPLE:session',
  });
}

function io(): CliIo & { out: () => string; err: () => string } {
  let stdout = '';
  let stderr = '';
  return {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    readStdin: async () => '',
    stdoutIsTty: false,
    stderrIsTty: false,
    env: {},
    now: () => NOW,
    out: () => stdout,
    err: () => stderr,
  };
}

async function snapshot(
  account: World,
  argv: readonly string[]
): Promise<{ stdout: string; stderr: string }> {
  const terminal = io();
  const deps: SnapshotDeps = {
    clients: (options) => createAwsClients(options),
    // Stands in for the live cluster source (DescribeCluster + Kubernetes API).
    liveObjects: ({ clusters }) => {
      const source = createWorldObjectSource({ world: account, file: 'live' });
      return {
        load: async () => {
          const loaded = await source.load();
          const keep = (name: string) => clusters.includes(name);
          return {
            ...loaded,
            clusters: loaded.clusters.filter((cluster) => keep(cluster.name)),
            nodeClasses: loaded.nodeClasses.filter((entry) => keep(entry.cluster)),
            nodePools: loaded.nodePools.filter((entry) => keep(entry.cluster)),
          };
        },
      };
    },
  };
  const program = new Command('nodeclass-scan').exitOverride();
  registerSnapshotCommand(program, { io: terminal, setExitCode: () => undefined }, deps);
  await program.parseAsync(['snapshot', ...argv], { from: 'user' });
  return { stdout: terminal.out(), stderr: terminal.err() };
}

function comparable(findings: readonly Finding[]): string[] {
  return findings
    .map(
      (finding) =>
        `${finding.resource.cluster}/${finding.resource.name} ${finding.checkId} ${finding.status} ${finding.severity}`
    )
    .sort();
}

beforeEach(() => {
  ec2.reset();
  ssm.reset();
  iam.reset();
  sts.reset();
});

describe('nodeclass-scan snapshot', () => {
  it('records a world file whose offline scan reproduces the live scan', async () => {
    // Prepare
    const account = liveAccount();
    serve(account);
    const tree = tempTree({});
    const output = join(tree.dir, 'snapshot.json');
    try {
      const live = await collectInventory({
        objects: createWorldObjectSource({ world: account, file: 'live' }),
        enrichers: [
          createAwsFactsEnricher({
            port: createLiveAwsFacts({
              ec2: new EC2Client({}),
              ssm: new SSMClient({}),
              iam: new IAMClient({}),
            }),
            now: NOW,
          }),
          createPermissionsEnricher({
            simulator: createIamSimulator(new IAMClient({})),
            // Policies unread, as before; which roles exist is read (GetRole), as the replay reads it.
            policies: {
              documents: () => Promise.reject(new Error('not read')),
              roleExists: (name) =>
                createIamRolePolicyReader(new IAMClient({})).roleExists?.(name) ??
                Promise.resolve(false),
            },
          }),
        ],
      });
      const liveReport = evaluateInventory(live.inventory, { now: NOW });

      // Act
      const run = await snapshot(account, [
        '--region',
        'us-east-1',
        '--cluster',
        'prod-use1',
        '--cluster',
        'staging-use1',
        '--output',
        output,
      ]);
      const terminal = io();
      await runCli(['scan', '--world', output, '--format', 'json', '--fail-on', 'none'], terminal);

      // Assess
      expect(run.stderr).toContain('recorded 2 cluster(s)');
      // NodePools launch through the classes: the region's instance types and their offerings
      // were read and recorded.
      const recorded = JSON.parse(readFileSync(output, 'utf8')) as World;
      expect(recorded.instanceTypeOfferings?.['us-east-1']).toEqual(
        account.instanceTypeOfferings?.['us-east-1']
      );
      expect(recorded.instanceTypes?.['us-east-1']).toEqual(account.instanceTypes?.['us-east-1']);
      const replay = JSON.parse(terminal.out()) as ScanReport;
      expect(replay.summary.inputErrors).toEqual([]);
      // The same findings, except that golden's userData was redacted: the userData checks do
      // not evaluate the marker (not-applicable) rather than judge it.
      const redacted = / user-data-(valid|fits-limit) pass /;
      expect(comparable(replay.findings)).toEqual(
        comparable(liveReport.findings).map((line) =>
          line.startsWith('prod-use1/golden ') && redacted.test(line)
            ? line.replace(' pass ', ' not-applicable ')
            : line
        )
      );
      expect(comparable(replay.findings).some((line) => line.includes(' fail '))).toBe(true);
      // The PassRole denial was recorded as a permission row and replays as the same failure.
      expect(comparable(replay.findings)).toContain(
        'prod-use1/analytics controller-can-pass-node-role fail critical'
      );
    } finally {
      tree.cleanup();
    }
  });

  it('records only what the scan read, and never secrets', async () => {
    // Prepare
    const account = liveAccount();
    serve(account);

    // Act
    const run = await snapshot(account, ['--region', 'us-east-1', '--cluster', 'prod-use1']);

    // Assess
    const world = parseWorld(run.stdout, 'stdout');
    expect(world.account).toBe('111122223333');
    expect(world.eks.clusters.map((cluster) => cluster.name)).toEqual(['prod-use1']);
    expect(world.ec2.images.map((image) => image.ImageId)).not.toContain('ami-0999999999999aaaa');
    expect(world.ec2.subnets.map((subnet) => subnet.SubnetId)).not.toContain('subnet-0unrelated');
    // Staging's 1.31 alias parameters were not read for a prod-only snapshot.
    expect(Object.keys(world.ssm.parameters).some((name) => name.includes('/1.31/'))).toBe(false);
    expect(world.ssm.parameters['/platform/ami/golden-al2023']).toBe(REDACTED_PARAMETER_VALUE);
    expect(run.stdout).not.toContain(SECRET);
    expect(run.stdout).not.toContain(USER_DATA_SECRET);
    const golden = world.eks.clusters[0]?.kubernetes?.ec2NodeClasses.find(
      (object) => (object as { metadata: { name: string } }).metadata.name === 'golden'
    ) as { spec: { userData?: string } } | undefined;
    expect(golden?.spec.userData).toBe(REDACTED_USER_DATA);
    expect(
      world.iam.roles.find((role) => role.RoleName === 'KarpenterNodeRole-prod-use1')
        ?.AttachedPolicies
    ).toHaveLength(4);
  });

  it("groups simulations by the controller roles' policies, as a live scan does", async () => {
    // Prepare: policies that compare no context value; then the same account, policies unreadable
    const account = liveAccount();
    const simulationsWith = async (policiesReadable: boolean): Promise<number> => {
      iam.reset();
      serve(account);
      if (policiesReadable) {
        iam.on(ListRolePoliciesCommand).resolves({ PolicyNames: [], IsTruncated: false });
        iam.on(GetPolicyCommand).resolves({ Policy: { DefaultVersionId: 'v1' } });
        iam.on(GetPolicyVersionCommand).resolves({
          PolicyVersion: {
            Document: encodeURIComponent(
              JSON.stringify({
                Version: '2012-10-17',
                Statement: [{ Effect: 'Allow', Action: '*', Resource: '*' }],
              })
            ),
          },
        });
      } else {
        iam.on(ListRolePoliciesCommand).rejects(new Error('AccessDenied'));
      }
      const run = await snapshot(account, ['--region', 'us-east-1', '--cluster', 'prod-use1']);
      expect(parseWorld(run.stdout, 'stdout').iam.permissions.length).toBeGreaterThan(0);
      return iam.commandCalls(SimulatePrincipalPolicyCommand).length;
    };

    // Act
    const grouped = await simulationsWith(true);
    const ungrouped = await simulationsWith(false);

    // Assess
    expect(grouped).toBeGreaterThan(0);
    expect(grouped).toBeLessThan(ungrouped);
  });

  it('refuses to run without a cluster', async () => {
    // Act
    const terminal = io();
    const code = await runCli(['snapshot', '--region', 'us-east-1'], terminal);

    // Assess
    expect(code).toBe(2);
    expect(terminal.err()).toContain('at least one --cluster');
  });
});
