import { parseManifestText } from '../../../lambda/adapters/files/parse-manifests.js';
import type { Evaluation } from '../../../lambda/core/evaluate.js';
import { emptyInventory, type Inventory } from '../../../lambda/core/inventory.js';
import { type Finding, findingId, type ResourceRef } from '../../../lambda/core/model.js';
import { buildReport, type InputError, type ScanReport } from '../../../lambda/core/report.js';

const NOW = new Date('2026-11-01T12:00:00Z');

export function nodeClass(name: string, cluster = ''): ResourceRef {
  return { cluster, kind: 'EC2NodeClass', name };
}

export function aFinding(overrides: Partial<Finding> & Pick<Finding, 'checkId'>): Finding {
  const resource = overrides.resource ?? nodeClass('default');
  return {
    id: findingId(overrides.checkId, resource, overrides.location?.path ?? ''),
    severity: 'high',
    status: 'fail',
    resource,
    message: `${overrides.checkId} failed`,
    remediation: `Fix ${overrides.checkId}.`,
    evidence: {},
    materialHash: `material-of-${overrides.checkId}`,
    ...overrides,
  };
}

export function aReport(
  findings: readonly Finding[],
  options: {
    notRun?: Evaluation['notRun'];
    inputErrors?: readonly InputError[];
    nodeClasses?: number;
  } = {}
): ScanReport {
  return buildReport({
    evaluation: { findings, notRun: options.notRun ?? [] },
    now: NOW,
    nodeClasses:
      options.nodeClasses ??
      new Set(
        findings.filter((f) => f.resource.kind === 'EC2NodeClass').map((f) => f.resource.name)
      ).size,
    clusters: [],
    ...(options.inputErrors ? { inputErrors: options.inputErrors } : {}),
  });
}

/** An inventory read by the real manifest parser, so positions are what the CLI would see. */
export function inventoryFrom(file: string, text: string): Inventory {
  const parsed = parseManifestText(text, file);
  return emptyInventory({ nodeClasses: parsed.nodeClasses, nodePools: parsed.nodePools });
}

export const TWO_NODECLASSES = `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: arn-profile
spec:
  amiSelectorTerms:
    - alias: al2023@latest
  instanceProfile: arn:aws:iam::123456789012:instance-profile/KarpenterNode
  subnetSelectorTerms:
    - tags:
        karpenter.sh/discovery: demo
  securityGroupSelectorTerms:
    - tags:
        karpenter.sh/discovery: demo
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: tagged
spec:
  amiSelectorTerms:
    - tags:
        team: platform
  role: KarpenterNodeRole
  subnetSelectorTerms:
    - tags:
        karpenter.sh/discovery: demo
  securityGroupSelectorTerms:
    - tags:
        karpenter.sh/discovery: demo
`;
