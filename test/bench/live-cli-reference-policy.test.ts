import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  comparableFindings,
  type LiveCliRun,
  runLiveCli,
  runWorldCli,
} from '../../bench/live-cli.js';
import { referenceControllerPolicies } from '../support/karpenter-controller-policy.js';

// The real CLI, live, against the local AWS stand-in whose SimulatePrincipalPolicy evaluates each
// controller role's documents with an independent engine: Karpenter's v1.7.6 reference policy (the
// fleet runs Karpenter 1.8.0) passes every controller check, as `scan --world` says too.
interface FleetWorld {
  account: string;
  region: string;
  iam: {
    roles: { RoleName: string; AttachedPolicies?: { PolicyName: string; PolicyArn: string }[] }[];
    policies?: unknown[];
  };
}

function withReferencePolicies(generated: Record<string, unknown>): Record<string, unknown> {
  const world = structuredClone(generated) as unknown as FleetWorld;
  const policies: unknown[] = [];
  for (const role of world.iam.roles) {
    const cluster = /^KarpenterControllerRole-(.+)$/.exec(role.RoleName)?.[1];
    if (cluster === undefined) continue;
    const [policy] = referenceControllerPolicies('v1.7.6', {
      partition: 'aws',
      region: world.region,
      accountId: world.account,
      clusterName: cluster,
    });
    if (policy === undefined) throw new Error('no reference policy');
    const arn = `arn:aws:iam::${world.account}:policy/${policy.name}`;
    role.AttachedPolicies = [{ PolicyName: policy.name, PolicyArn: arn }];
    policies.push({
      Arn: arn,
      PolicyName: policy.name,
      DefaultVersionId: 'v1',
      Document: policy.document,
    });
  }
  world.iam.policies = policies;
  return world as unknown as Record<string, unknown>;
}

let live: LiveCliRun & { readonly worldFile: string; readonly cleanup: () => void };
let offline: Awaited<ReturnType<typeof runWorldCli>>;

beforeAll(async () => {
  live = await runLiveCli(
    { clusters: 2, nodeClassesPerCluster: 3 },
    { editWorld: withReferencePolicies }
  );
  offline = await runWorldCli(live.worldFile);
}, 120_000);

afterAll(() => live?.cleanup());

describe("the live CLI on Karpenter's reference controller policy", () => {
  it('passes every controller check of every NodeClass, as scan --world does', () => {
    const permission = comparableFindings(live.report).filter((finding) =>
      finding.checkId.startsWith('controller-can-')
    );
    expect(permission.length).toBe(2 * 3 * 4);
    expect(
      permission
        .filter((finding) => finding.status !== 'pass' && finding.status !== 'not-applicable')
        .map((finding) => `${finding.checkId} ${finding.resource.name}: ${finding.message}`)
    ).toEqual([]);
    expect(comparableFindings(live.report)).toEqual(comparableFindings(offline.report));
    // The scan read the documents it was judged on.
    expect(live.operations['iam:GetPolicyVersion']?.calls).toBeGreaterThan(0);
  });
});
