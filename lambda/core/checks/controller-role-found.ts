import { defineCheck, type FindingDraft, readFaultOf } from '../check.js';
import { clusterOf, factsKeyOf } from '../inventory.js';
import type { ResourceRef } from '../model.js';
import { scannerCanReadCluster } from './scanner-can-read-cluster.js';

/** The scanner knows which IAM role Karpenter's controller runs as (Pod Identity or IRSA). */
export const controllerRoleFound = defineCheck({
  id: 'controller-role-found',
  title: "Karpenter's controller role can be determined",
  group: 'aws',
  severity: 'high',
  inputs: ['permissions'],
  scope: ['Cluster'],
  rationale:
    "Without the IAM role Karpenter's controller runs as, its permissions cannot be simulated, so denied launch, PassRole or discovery calls go unnoticed until nodes fail to launch. A controller with neither Pod Identity nor IRSA has no role of its own: its AWS calls fail or run with whatever credentials the node exposes.",
  remediation:
    "Give Karpenter's ServiceAccount an EKS Pod Identity association or an eks.amazonaws.com/role-arn annotation, or name the role with --controller-role CLUSTER=ROLE_ARN.",
  references: [
    'https://docs.aws.amazon.com/eks/latest/userguide/pod-identities.html',
    'https://docs.aws.amazon.com/eks/latest/userguide/iam-roles-for-service-accounts.html',
  ],
  material: ['reason'],
  evaluate: (inventory) => {
    const drafts: FindingDraft[] = [];
    const clusters = [...new Set(inventory.nodeClasses.map((entry) => entry.cluster))];
    for (const cluster of clusters) {
      const resource: ResourceRef = { cluster, kind: 'Cluster', name: cluster };
      const facts = inventory.nodeClasses
        .filter((entry) => entry.cluster === cluster)
        .map((entry) => inventory.permissions.get(factsKeyOf(entry)))
        .find((candidate) => candidate !== undefined);
      if (facts === undefined) {
        drafts.push({
          status: 'error',
          resource,
          message: 'Not evaluated: the controller role was not looked up for this cluster.',
          readFault: readFaultOf("Karpenter's controller role", undefined),
        });
        continue;
      }
      const role = facts.controllerRole;
      const evidence = { lookedAt: role.lookedAt, notes: role.notes };
      if (role.status === 'found') {
        drafts.push({
          status: 'pass',
          resource,
          message: `Karpenter's controller runs as ${role.roleArn} (${role.source}).`,
          evidence: {
            ...evidence,
            roleArn: role.roleArn,
            source: role.source,
            sessionTags: role.sessionTags,
          },
        });
      } else if (role.status === 'unavailable') {
        // Unreadable controller Deployment: scanner-can-read-cluster reports it.
        const controllerUnread = clusterOf(inventory, cluster)?.state?.controller?.status;
        drafts.push({
          status: 'error',
          resource,
          message: `Karpenter's controller role could not be determined (${role.reason}): ${role.message}`,
          evidence: { ...evidence, reason: role.reason },
          readFault: readFaultOf("Karpenter's controller role", role),
          ...(controllerUnread === 'unavailable'
            ? { causedBy: { checkId: scannerCanReadCluster.id } }
            : {}),
        });
      } else {
        drafts.push({
          status: 'fail',
          resource,
          message:
            "Karpenter's controller role was not found: no Pod Identity association and no IRSA annotation on its ServiceAccount, so its permissions cannot be checked.",
          evidence,
        });
      }
    }
    return drafts;
  },
});
