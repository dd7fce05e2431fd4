// Fault injection on the AWS ports (EC2, SSM, IAM reads, IAM simulator) at the SDK boundary, through
// the live adapters: every scan completes, what could not be read is an `error` naming the reason,
// nothing else changes, and nothing is called resolved because its input failed.
import { describe, expect, it } from 'vitest';
import { type Interceptor, sdkError } from '../../bench/world-sdk.js';
import { diffFindings } from '../../lambda/core/lifecycle.js';
import type { Finding } from '../../lambda/core/model.js';
import {
  callKey,
  degradedNodeClasses,
  fnv1a,
  reliabilityWorlds,
  reportProblems,
  resourceKey,
  SCAN_TIME,
  scanWorld,
  storedAfter,
} from './support.js';

interface Scenario {
  readonly name: string;
  /** Text an `error` finding of an affected NodeClass must contain (the injected error's code). */
  readonly markers: readonly string[];
  make(): { intercept: Interceptor; fired: () => number };
}

function faulty(
  decide: (service: string, operation: string, input: unknown) => Error | 'malformed' | undefined
): () => { intercept: Interceptor; fired: () => number } {
  return () => {
    let fired = 0;
    const intercept: Interceptor = async (service, operation, input, answer) => {
      const fault = decide(service, operation, input);
      if (fault === undefined) return answer();
      fired++;
      if (fault === 'malformed') return { Images: 'not a list', $metadata: {} } as never;
      throw fault;
    };
    return { intercept, fired: () => fired };
  };
}

const SCENARIOS: readonly Scenario[] = [
  {
    name: 'throttling on 30% of calls (deterministic)',
    markers: ['RequestLimitExceeded', 'Throttling'],
    make: faulty((service, operation, input) =>
      fnv1a(callKey(operation, input)) % 10 < 3
        ? sdkError(
            service === 'ec2' ? 'RequestLimitExceeded' : 'Throttling',
            service === 'ec2' ? 503 : 400,
            'Rate exceeded'
          )
        : undefined
    ),
  },
  {
    name: 'timeouts (DescribeSubnets, GetInstanceProfile)',
    markers: ['TimeoutError'],
    make: faulty((_service, operation) =>
      operation === 'DescribeSubnets' || operation === 'GetInstanceProfile'
        ? Object.assign(new Error('Connection timed out after 5000 ms'), { name: 'TimeoutError' })
        : undefined
    ),
  },
  {
    name: '5xx (GetRole, half of DescribeImages)',
    markers: ['InternalError'],
    make: faulty((_service, operation, input) =>
      operation === 'GetRole' ||
      (operation === 'DescribeImages' && fnv1a(callKey(operation, input)) % 2 === 0)
        ? sdkError('InternalError', 500, 'We encountered an internal error. Please try again.')
        : undefined
    ),
  },
  {
    name: 'malformed responses (DescribeImages body, DescribeSecurityGroups deserialization)',
    markers: ['TypeError', 'SyntaxError'],
    make: faulty((_service, operation) => {
      if (operation === 'DescribeImages') return 'malformed';
      if (operation === 'DescribeSecurityGroups') {
        return Object.assign(new SyntaxError('Unexpected end of XML'), {
          $metadata: { httpStatusCode: 200 },
        });
      }
      return undefined;
    }),
  },
  {
    name: 'credentials expire mid-scan (ExpiredToken after 12 calls)',
    markers: ['ExpiredToken'],
    make: () => {
      let calls = 0;
      let fired = 0;
      const intercept: Interceptor = async (_service, _operation, _input, answer) => {
        calls++;
        if (calls <= 12) return answer();
        fired++;
        throw sdkError(
          'ExpiredToken',
          400,
          'The security token included in the request is expired'
        );
      };
      return { intercept, fired: () => fired };
    },
  },
  {
    name: 'permission simulator throttled on every call',
    markers: ['Throttling'],
    make: faulty((_service, operation) =>
      operation === 'SimulatePrincipalPolicy'
        ? sdkError('Throttling', 400, 'Rate exceeded')
        : undefined
    ),
  },
];

function byResource(findings: readonly Finding[]): Map<string, Finding[]> {
  const grouped = new Map<string, Finding[]>();
  for (const finding of findings) {
    const key = `${finding.resource.kind} ${resourceKey(finding)}`;
    grouped.set(key, [...(grouped.get(key) ?? []), finding]);
  }
  for (const list of grouped.values()) list.sort((a, b) => a.id.localeCompare(b.id));
  return grouped;
}

describe.each(reliabilityWorlds())('AWS faults on $name', ({ world }) => {
  const clusters = world.eks.clusters.map((cluster) => cluster.name);

  it.each(SCENARIOS)(
    '$name: the scan completes and degrades only what failed',
    async (scenario) => {
      // Prepare
      const baseline = await scanWorld(world);
      const { intercept, fired } = scenario.make();

      // Act
      const faulted = await scanWorld(world, intercept);

      // Assess: the faults happened and hit some NodeClasses, and the report is still a report
      expect(fired()).toBeGreaterThan(0);
      expect(reportProblems(faulted.report)).toEqual([]);
      expect(degradedNodeClasses(baseline.inventory).size).toBe(0);
      const degraded = degradedNodeClasses(faulted.inventory);
      expect(degraded.size).toBeGreaterThan(0);

      // every affected NodeClass says so: an `error` finding naming the injected failure
      for (const key of degraded) {
        const errors = faulted.report.findings.filter(
          (finding) =>
            finding.resource.kind === 'EC2NodeClass' &&
            resourceKey(finding) === key &&
            finding.status === 'error'
        );
        expect(errors.length, `${key} has no error finding`).toBeGreaterThan(0);
        expect(
          errors.some((finding) =>
            scenario.markers.some((marker) => finding.message.includes(marker))
          ),
          `${key}: ${errors.map((finding) => finding.message).join(' | ')}`
        ).toBe(true);
      }

      // every unaffected resource keeps exactly its baseline findings; a NodePool is judged
      // through its EC2NodeClass, so it is affected when its class is
      const classOfPool = new Map<string, string>(
        faulted.inventory.nodePools.flatMap((entry) =>
          entry.parsed.ok
            ? [
                [
                  `${entry.cluster}/${entry.name}`,
                  `${entry.cluster}/${entry.parsed.value.spec.template.spec.nodeClassRef.name}`,
                ] as const,
              ]
            : []
        )
      );
      const before = byResource(baseline.report.findings);
      const after = byResource(faulted.report.findings);
      for (const [key, findings] of before) {
        const [kind, resource = ''] = key.split(' ');
        if (kind === 'EC2NodeClass' && degraded.has(resource)) continue;
        if (kind === 'NodePool' && degraded.has(classOfPool.get(resource) ?? '')) continue;
        expect(after.get(key), key).toEqual(findings);
      }

      // nothing is resolved because its input failed
      const diff = diffFindings({
        stored: storedAfter(baseline.report, clusters),
        findings: faulted.report.findings,
        scope: { clusters },
        now: new Date(SCAN_TIME.getTime() + 60_000),
      });
      expect(diff.changes.filter((change) => change.kind === 'resolved')).toEqual([]);
    }
  );
});
