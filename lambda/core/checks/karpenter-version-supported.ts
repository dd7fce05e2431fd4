import {
  defineCheck,
  type FindingDraft,
  forEachNodeClass,
  KARPENTER_VERSION_ANNOTATION,
  versionReadFault,
} from '../check.js';
import type { ClusterContext } from '../inventory.js';
import { applicableDefects, type KarpenterDefect } from '../karpenter-defects.js';
import type { ResourceRef } from '../model.js';
import type { KarpenterVersion } from '../version.js';
import { scannerCanReadCluster } from './scanner-can-read-cluster.js';

interface ClusterDefect {
  readonly defect: KarpenterDefect;
  /** Distinct affected versions in this cluster (annotations can give NodeClasses their own). */
  readonly versions: KarpenterVersion[];
  readonly resource: ResourceRef;
  readonly nodeClasses: string[];
}

function defectDraft(
  defect: KarpenterDefect,
  running: KarpenterVersion,
  resource: ResourceRef,
  extraEvidence: Record<string, unknown> = {}
): FindingDraft {
  return {
    status: defect.notice ? 'notice' : 'fail',
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
      ...extraEvidence,
    },
  };
}

function unknownVersionReason(cluster: ClusterContext): string | undefined {
  const controller = cluster.state?.controller;
  if (!controller) return undefined;
  if (controller.status === 'unavailable') {
    return `the Karpenter controller could not be read: ${controller.message}`;
  }
  if (!controller.value) return 'no Karpenter controller Deployment was found in the cluster';
  return `the controller image tag "${controller.value.version ?? '(none)'}" is not a version`;
}

/** No known Karpenter defect of the running version applies to the NodeClass (see references). */
export const karpenterVersionSupported = defineCheck({
  id: 'karpenter-version-supported',
  title: 'The Karpenter version has no known defect that applies to the NodeClass',
  group: 'cluster',
  severity: 'medium',
  inputs: ['spec'],
  scope: ['EC2NodeClass', 'Cluster'],
  rationale:
    'Some Karpenter releases have defects that break launches or validation for certain settings, such as selecting a pending AMI before v1.2.2 or sending httpProtocolIPv6 in ISO regions before v1.7.0. A cluster on an affected version fails in ways the NodeClass alone does not show.',
  remediation: 'Upgrade Karpenter to a release with the fix, or apply the workaround named.',
  references: ['#7652', '#7834', '#7891', '#7928', '#8015', '#8072', '#8404'],
  material: ['defect'],
  evaluate: (inventory) => {
    // Controller-wide defects are reported once per cluster and version, not once per NodeClass.
    const clusterDefects = new Map<string, ClusterDefect>();
    const drafts = forEachNodeClass(inventory, (nodeClass, { resource, cluster }) => {
      const running = cluster.karpenterVersion;
      if (!running) {
        const reason = unknownVersionReason(cluster);
        if (reason) {
          const unreadable = cluster.state?.controller?.status === 'unavailable';
          return [
            {
              status: 'error',
              resource,
              message: `Karpenter's version is unknown: ${reason}.`,
              readFault: versionReadFault(cluster),
              remediation:
                'Run the scanner with read access to deployments (see scanner-can-read-cluster), or pass --karpenter-version.',
              // scanner-can-read-cluster reports the controller it could not read.
              ...(unreadable
                ? {
                    causedBy: {
                      checkId: scannerCanReadCluster.id,
                      resource: { cluster: cluster.name, kind: 'Cluster', name: cluster.name },
                    },
                  }
                : {}),
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
      for (const defect of defects.filter((candidate) => candidate.scope === 'cluster')) {
        // Keyed without the version: the finding id (cluster + defect) must stay unique.
        const key = `${cluster.name}\u0000${defect.id}`;
        const known = clusterDefects.get(key);
        if (known) {
          known.nodeClasses.push(resource.name);
          if (!known.versions.some((seen) => seen.raw === running.raw))
            known.versions.push(running);
        } else {
          clusterDefects.set(key, {
            defect,
            versions: [running],
            resource: { cluster: cluster.name, kind: 'Cluster', name: cluster.name || 'manifests' },
            nodeClasses: [resource.name],
          });
        }
      }
      const own = defects.filter((defect) => defect.scope === 'nodeclass');
      if (own.length === 0) {
        return [
          {
            status: 'pass',
            resource,
            message: `No known defect of Karpenter ${running.raw} applies to this NodeClass.`,
            evidence: { karpenterVersion: running.raw },
          },
        ];
      }
      return own.map((defect) => defectDraft(defect, running, resource));
    });
    for (const { defect, versions, resource, nodeClasses } of clusterDefects.values()) {
      const [first, ...others] = versions as [KarpenterVersion, ...KarpenterVersion[]];
      const draft = defectDraft(defect, first, resource, {
        karpenterVersions: versions.map((running) => running.raw),
        nodeClasses,
      });
      drafts.push(
        others.length === 0
          ? draft
          : {
              ...draft,
              message: `${draft.message} Also affects Karpenter ${others.map((running) => running.raw).join(', ')} (per ${KARPENTER_VERSION_ANNOTATION} annotations).`,
            }
      );
    }
    return drafts;
  },
});
