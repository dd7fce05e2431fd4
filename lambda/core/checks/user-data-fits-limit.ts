import type { AmiFamily } from '../ami-family.js';
import {
  defineCheck,
  type FindingDraft,
  forEachNodeClass,
  type NodeClassTarget,
} from '../check.js';
import { NODEPOOL_API_VERSION, type NodePool } from '../schema.js';
import {
  type RenderContext,
  type RenderedSize,
  renderedSize,
  USER_DATA_LIMIT_BYTES,
  USER_DATA_WARN_BYTES,
} from '../user-data/analyze.js';
import { userDataFamily } from './support/user-data.js';

const LIMIT = USER_DATA_LIMIT_BYTES.toLocaleString('en-US');

const CONSEQUENCE =
  'ec2:CreateLaunchTemplate rejects it ("User data is limited to 16384 bytes"): Karpenter v1.14.1 reports ValidationSucceeded=False with reason UserDataSizeLimitExceeded, earlier releases leave validation Unknown, and no node launches from this EC2NodeClass.';

/** NodePools by cluster and the EC2NodeClass they launch through, indexed once per inventory. */
const poolsByClass = new WeakMap<
  NodeClassTarget['inventory']['nodePools'],
  Map<string, NodePool[]>
>();

/** The NodePools launching through the class: their labels and taints are in the userData. */
function nodePoolsOf(target: NodeClassTarget): NodePool[] {
  const all = target.inventory.nodePools;
  let index = poolsByClass.get(all);
  if (index === undefined) {
    index = new Map();
    for (const entry of all) {
      if (!entry.parsed.ok) continue;
      const pool = entry.parsed.value;
      const ref = pool.spec.template.spec.nodeClassRef;
      if (pool.apiVersion !== NODEPOOL_API_VERSION || ref.kind !== 'EC2NodeClass') continue;
      const key = `${entry.cluster}\u0000${ref.name}`;
      const pools = index.get(key);
      if (pools === undefined) index.set(key, [pool]);
      else pools.push(pool);
    }
    poolsByClass.set(all, index);
  }
  return index.get(`${target.entry.cluster}\u0000${target.entry.name}`) ?? [];
}

/**
 * What the estimate uses of the cluster: its name and the NodePools of the class. The endpoint is
 * assumed even when known (EKS endpoints differ by a few characters), so every way of scanning the
 * same cluster estimates the same size.
 */
function contextOf(target: NodeClassTarget): RenderContext {
  return {
    ...(target.cluster.name === '' ? {} : { clusterName: target.cluster.name }),
    nodePools: nodePoolsOf(target),
  };
}

function bytes(value: number): string {
  return `${value.toLocaleString('en-US')} bytes`;
}

function evidenceOf(family: AmiFamily, size: RenderedSize, basis: 'exact' | 'estimate') {
  return {
    amiFamily: family,
    basis,
    renderedBytes: size.totalBytes,
    userDataBytes: size.userBytes,
    limitBytes: USER_DATA_LIMIT_BYTES,
  };
}

function describeEstimate(size: RenderedSize): string {
  return `an estimate: Karpenter's own part assumes ${size.assumptions.join(', ')}`;
}

function verdict(family: AmiFamily, size: RenderedSize, target: NodeClassTarget): FindingDraft {
  const { resource } = target;
  const location = { path: 'spec.userData' };
  const remediation =
    'Shrink spec.userData below the limit: move large scripts or files to S3 or SSM Parameter Store and fetch them at boot, compress payloads (gzip + base64 in a MIME part), and drop comments.';
  if (size.userBytes > USER_DATA_LIMIT_BYTES) {
    const basis = size.exact || size.userExact ? 'exact' : 'estimate';
    return {
      status: 'fail',
      resource,
      severity: 'critical',
      message: `spec.userData alone comes to ${bytes(size.userBytes)} in the ${family} userData Karpenter renders${basis === 'estimate' ? ' (about: Karpenter rewrites the TOML)' : ''}, over EC2's ${LIMIT}-byte limit before Karpenter adds anything: ${CONSEQUENCE}`,
      remediation,
      evidence: evidenceOf(family, size, basis),
      location,
    };
  }
  if (size.totalBytes > USER_DATA_LIMIT_BYTES) {
    return {
      status: 'fail',
      resource,
      severity: size.exact ? 'critical' : 'high',
      message: size.exact
        ? `spec.userData is ${bytes(size.totalBytes)}, over EC2's ${LIMIT}-byte limit: ${CONSEQUENCE}`
        : `The ${family} userData Karpenter renders comes to about ${bytes(size.totalBytes)} (${describeEstimate(size)}; spec.userData itself is ${bytes(size.userBytes)}), over EC2's ${LIMIT}-byte limit: ${CONSEQUENCE}`,
      remediation,
      evidence: evidenceOf(family, size, size.exact ? 'exact' : 'estimate'),
      location,
    };
  }
  const summary = size.exact
    ? `spec.userData is ${bytes(size.totalBytes)}`
    : `The ${family} userData Karpenter renders comes to about ${bytes(size.totalBytes)} (${describeEstimate(size)})`;
  if (size.totalBytes >= USER_DATA_WARN_BYTES) {
    return {
      status: 'notice',
      resource,
      message: `${summary}: within EC2's ${LIMIT}-byte limit but above 90% of it, where Karpenter logs that the rendered user data approaches the limit. More NodePool labels or taints, or a larger script, can push it over.`,
      remediation,
      evidence: evidenceOf(family, size, size.exact ? 'exact' : 'estimate'),
      location,
    };
  }
  return {
    status: 'pass',
    resource,
    message: `${summary}, within EC2's ${LIMIT}-byte limit.`,
  };
}

/**
 * The userData Karpenter renders for the class fits EC2's 16 KB limit (raw bytes, before base64).
 * The user's part is measured as Karpenter writes it; Karpenter's own part (bootstrap command or
 * NodeConfig or settings, with the cluster CA, endpoint, labels and taints of the NodePools that
 * use the class) is estimated, and the message says so.
 */
export const userDataFitsLimit = defineCheck({
  id: 'user-data-fits-limit',
  title: "Rendered userData fits EC2's 16 KB limit",
  group: 'spec',
  severity: 'critical',
  inputs: ['spec'],
  rationale:
    'EC2 limits user data to 16 KB before base64 encoding, and Karpenter adds its bootstrap (with the cluster CA, labels and taints) to spec.userData: when the rendered userData is larger, every CreateLaunchTemplate call is rejected and the EC2NodeClass launches no node.',
  remediation:
    'Shrink spec.userData: fetch large scripts or files from S3 or SSM Parameter Store at boot, compress payloads, drop comments.',
  references: [
    'https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/instancedata-add-user-data.html',
    'https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/controllers/nodeclass/validation.go',
    'https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/providers/launchtemplate/metrics.go',
    '#9483',
  ],
  material: ['amiFamily', 'basis'],
  evaluate: (inventory) =>
    forEachNodeClass(inventory, ({ spec }, target): FindingDraft[] => {
      const { resource } = target;
      const family = userDataFamily(spec, resource, {
        noFamily: 'render userData for',
        redacted: 'its size is unknown',
      });
      if (typeof family !== 'string') return [family];
      return [verdict(family, renderedSize(spec, family, contextOf(target)), target)];
    }),
});
