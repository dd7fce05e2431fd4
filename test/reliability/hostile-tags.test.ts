// Tag keys special to JavaScript objects (`__proto__`, `constructor`, `toString`) are ordinary EC2
// tag keys: a selector on one must select exactly the resources carrying it, offline and live.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DescribeSubnetsCommand, EC2Client } from '@aws-sdk/client-ec2';
import { IAMClient } from '@aws-sdk/client-iam';
import { SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { createLiveAwsFacts } from '../../lambda/adapters/aws/aws-facts-adapter.js';
import { matchesTags } from '../../lambda/adapters/aws/eks-reader.js';
import type { ScanReport } from '../../lambda/core/report.js';
import { parseEC2NodeClass } from '../../lambda/core/schema.js';
import { subnetQueries } from '../../lambda/core/selectors/subnets.js';
import { tagMapOf } from '../../lambda/core/selectors/tag-map.js';
import { runCliCaptured, tempTree } from '../cli/support/run-cli.js';

const ec2 = mockClient(EC2Client);

afterEach(() => {
  ec2.reset();
});

const nodeClassYaml = (
  name: string,
  key: string,
  value: string
) => `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: ${name}
spec:
  role: KarpenterNodeRole-demo
  amiSelectorTerms:
    - alias: al2023@v20251103
  subnetSelectorTerms:
    - tags:
        ${key}: "${value}"
  securityGroupSelectorTerms:
    - tags:
        karpenter.sh/discovery: demo
`;

describe('hostile tag keys', () => {
  it('sends the tag:__proto__ filter live and keeps the tag of the subnets returned', async () => {
    // Prepare: the selector arrives as JSON (kubectl, the Kubernetes API) with an own __proto__ key
    const parsed = parseEC2NodeClass(
      JSON.parse(`{
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": { "name": "proto" },
        "spec": {
          "amiSelectorTerms": [{ "alias": "al2023@latest" }],
          "securityGroupSelectorTerms": [{ "id": "sg-0a" }],
          "subnetSelectorTerms": [{ "tags": { "__proto__": "x" } }]
        }
      }`)
    );
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    ec2.on(DescribeSubnetsCommand).resolves({
      Subnets: [{ SubnetId: 'subnet-proto', Tags: [{ Key: '__proto__', Value: 'x' }] }],
    });
    const facts = createLiveAwsFacts({
      ec2: new EC2Client({}),
      ssm: new SSMClient({}),
      iam: new IAMClient({}),
    });
    const [query] = subnetQueries(parsed.value.spec.subnetSelectorTerms);
    if (query === undefined) throw new Error('no subnet query');

    // Act
    const subnets = await facts.describeSubnets(query);

    // Assess
    const sent = ec2.commandCalls(DescribeSubnetsCommand).map((call) => call.args[0].input.Filters);
    expect(sent).toEqual([[{ Name: 'tag:__proto__', Values: ['x'] }]]);
    expect(subnets.map((subnet) => [subnet.id, Object.entries(subnet.tags)])).toEqual([
      ['subnet-proto', [['__proto__', 'x']]],
    ]);
  });

  it('resolves YAML selectors on special keys against a world file only through tagged subnets', async () => {
    // Prepare
    const world = {
      version: 1,
      account: '111122223333',
      region: 'us-east-1',
      ec2: {
        subnets: [
          { SubnetId: 'subnet-proto', Tags: [{ Key: '__proto__', Value: 'x' }] },
          { SubnetId: 'subnet-plain', Tags: [{ Key: 'Name', Value: 'plain' }] },
        ],
      },
      eks: { clusters: [{ name: 'demo' }] },
    };
    const tree = tempTree({
      'proto.yaml': nodeClassYaml('proto', '__proto__', 'x'),
      'constructor.yaml': nodeClassYaml('constructor', 'constructor', '?*'),
      'tostring.yaml': nodeClassYaml('tostring', 'toString', '*native code*'),
    });
    const worldFile = join(tree.dir, 'world.json');
    writeFileSync(worldFile, JSON.stringify(world));

    try {
      // Act
      const run = await runCliCaptured([
        'scan',
        tree.dir,
        '--world',
        worldFile,
        '--cluster',
        'demo',
        '--only',
        'subnets-resolve',
        '--format',
        'json',
      ]);

      // Assess: only the __proto__ selector resolves, and only to the subnet carrying the tag
      const report = JSON.parse(run.stdout) as ScanReport;
      expect(report.summary.inputErrors).toEqual([]);
      const verdicts = Object.fromEntries(
        report.findings.map((finding) => [
          finding.resource.name,
          [finding.status, finding.evidence?.subnets ?? []],
        ])
      );
      expect(verdicts).toEqual({
        proto: ['pass', ['subnet-proto']],
        constructor: ['fail', []],
        tostring: ['fail', []],
      });
      expect(run.code).toBe(1);
    } finally {
      tree.cleanup();
    }
  });

  it('filters clusters by own tags only', () => {
    const tagged = tagMapOf([['__proto__', 'x']]);
    expect(matchesTags(tagged, tagMapOf([['__proto__', 'x']]))).toBe(true);
    expect(matchesTags({}, tagMapOf([['__proto__', '*']]))).toBe(false);
    expect(matchesTags({}, { constructor: '*' })).toBe(false);
    expect(matchesTags({ team: 'a' }, { toString: '*' })).toBe(false);
  });
});
