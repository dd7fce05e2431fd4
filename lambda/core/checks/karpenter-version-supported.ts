import { defineCheck, forEachNodeClass } from '../check.js';
import type { ClusterContext } from '../inventory.js';
import { applicableDefects } from '../karpenter-defects.js';

function unknownVersionReason(cluster: ClusterContext): string | undefined {
  const controller = cluster.state?.controller;
  if (!controller) return undefined;
  if (controller.status === 'unavailable') {
    return `the Karpenter controller could not be read: ${controller.message}`;
  }
  if (!controller.value) return 'no Karpenter controller Deployment was found in the cluster';
  return `the controller image tag "${controller.value.version ?? '(none)'}" is not a version`;
}

/** No known Karpenter defect of the running version applies to the NodeClass (karpenter-validations §0, §5). */
export const karpenterVersionSupported = defineCheck({
  id: 'karpenter-version-supported',
  title: 'The Karpenter version has no known defect that applies to the NodeClass',
  group: 'cluster',
  severity: 'medium',
  inputs: ['spec'],
  remediation: 'Upgrade Karpenter to a release with the fix, or apply the workaround named.',
  references: ['#7652', '#7834', '#7891', '#7928', '#8015', '#8072', '#8404'],
  evaluate: (inventory) =>
    forEachNodeClass(inventory, (nodeClass, { resource, cluster }) => {
      const running = cluster.karpenterVersion;
      if (!running) {
        const reason = unknownVersionReason(cluster);
        if (reason) {
          return [
            {
              status: 'error',
              resource,
              message: `Karpenter's version is unknown: ${reason}.`,
              remediation:
                'Run the scanner with read access to deployments (see scanner-can-read-cluster), or pass --karpenter-version.',
            },
          ];
        }
        return [
          {
            status: 'not-applicable',
            resource,
            message:
              'Karpenter version not given: pass --karpenter-version or annotate the NodeClass with nodeclass-scanner/karpenter-version.',
          },
        ];
      }
      const defects = applicableDefects(nodeClass, cluster, running);
      if (defects.length === 0) {
        return [
          {
            status: 'pass',
            resource,
            message: `No known defect of Karpenter ${running.raw} applies to this NodeClass.`,
            evidence: { karpenterVersion: running.raw },
          },
        ];
      }
      return defects.map((defect) => ({
        status: 'fail' as const,
        resource,
        discriminator: defect.id,
        severity: defect.severity,
        message: defect.describe(running),
        remediation: defect.remediation,
        evidence: {
          defect: defect.id,
          karpenterVersion: running.raw,
          fixedIn: defect.fixedIn,
          references: defect.references,
        },
      }));
    }),
});
