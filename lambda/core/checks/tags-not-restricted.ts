import { defineCheck, type FindingDraft, forEachNodeClass } from '../check.js';
import { formatPath } from '../schema.js';

/** Karpenter's `RestrictedTagPatterns` (labels.go): checked at runtime → `TagValidationFailed`. */
export const RUNTIME_RESTRICTED_TAG_PATTERNS: readonly RegExp[] = [
  /^kubernetes\.io\/cluster\/[0-9A-Za-z][A-Za-z0-9\-_]*$/,
  /^karpenter\.sh\/nodepool$/,
  /^eks:eks-cluster-name$/,
  /^karpenter\.k8s\.aws\/ec2nodeclass$/,
  /^karpenter\.sh\/nodeclaim$/,
];

/** The CRD's CEL rules on `spec.tags`, with Karpenter's messages: checked by the API server. */
export const CEL_RESTRICTED_TAG_RULES: readonly {
  readonly rule: string;
  readonly matches: (key: string) => boolean;
  readonly message: string;
}[] = [
  {
    rule: "k != 'eks:eks-cluster-name'",
    matches: (key) => key === 'eks:eks-cluster-name',
    message: 'tag contains a restricted tag matching eks:eks-cluster-name',
  },
  {
    // A prefix match: it also rejects `kubernetes.io/clusterx`, which the runtime pattern allows.
    rule: "!k.startsWith('kubernetes.io/cluster')",
    matches: (key) => key.startsWith('kubernetes.io/cluster'),
    message: 'tag contains a restricted tag matching kubernetes.io/cluster/',
  },
  {
    rule: "k != 'karpenter.sh/nodepool'",
    matches: (key) => key === 'karpenter.sh/nodepool',
    message: 'tag contains a restricted tag matching karpenter.sh/nodepool',
  },
  {
    rule: "k != 'karpenter.sh/nodeclaim'",
    matches: (key) => key === 'karpenter.sh/nodeclaim',
    message: 'tag contains a restricted tag matching karpenter.sh/nodeclaim',
  },
  {
    rule: "k != 'karpenter.k8s.aws/ec2nodeclass'",
    matches: (key) => key === 'karpenter.k8s.aws/ec2nodeclass',
    message: 'tag contains a restricted tag matching karpenter.k8s.aws/ec2nodeclass',
  },
];

// The CEL rules reject a superset of the runtime patterns, so every restricted key has a CEL rule.
function restrictedKeyDraft(
  key: string,
  celRule: (typeof CEL_RESTRICTED_TAG_RULES)[number],
  resource: FindingDraft['resource']
): FindingDraft {
  const runtimePattern = RUNTIME_RESTRICTED_TAG_PATTERNS.find((pattern) => pattern.test(key));
  const consequence = runtimePattern
    ? `the API server rejects it ("${celRule.message}") and, where CRD validation was bypassed, Karpenter sets ValidationSucceeded=False (TagValidationFailed)`
    : `the API server's CEL rule ${celRule.rule} rejects it ("${celRule.message}"), although Karpenter's runtime pattern would accept it`;
  return {
    status: 'fail',
    resource,
    message: `spec.tags has the restricted key "${key}": ${consequence}.`,
    remediation: `Remove "${key}" from spec.tags; Karpenter adds its own cluster, NodePool, NodeClaim and EC2NodeClass tags.`,
    evidence: {
      key,
      celRule: celRule.rule,
      celMessage: celRule.message,
      ...(runtimePattern ? { runtimePattern: runtimePattern.source } : {}),
    },
    discriminator: `spec.tags#${key}`,
    location: { path: formatPath(['spec', 'tags', key]) },
  };
}

/**
 * No key in `spec.tags` is empty or restricted, by the CRD's CEL rules (apply time) or by
 * Karpenter's runtime patterns (`TagValidationFailed`, for objects whose validation was bypassed).
 * One finding per offending key.
 */
export const tagsNotRestricted = defineCheck({
  id: 'tags-not-restricted',
  title: 'Tags contain no restricted or empty keys',
  group: 'spec',
  severity: 'high',
  inputs: ['spec'],
  rationale:
    "Karpenter sets the cluster, NodePool, NodeClaim and EC2NodeClass tags itself and relies on them to find and clean up its instances. The CRD's CEL rules reject these keys and empty keys at apply time; an object that bypassed validation gets ValidationSucceeded=False (TagValidationFailed) and launches nothing.",
  remediation:
    'Remove restricted keys (kubernetes.io/cluster/*, karpenter.sh/nodepool, karpenter.sh/nodeclaim, eks:eks-cluster-name, karpenter.k8s.aws/ec2nodeclass) and empty keys from spec.tags.',
  references: [
    'https://karpenter.sh/docs/concepts/nodeclasses/#spectags',
    'https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/apis/v1/labels.go',
    '#7404',
    '#3784',
    '#4582',
  ],
  material: ['key'],
  evaluate: (inventory) =>
    forEachNodeClass(inventory, ({ spec }, { resource }) => {
      const keys = Object.keys(spec.tags ?? {});
      const drafts: FindingDraft[] = [];
      for (const key of keys) {
        if (key === '') {
          drafts.push({
            status: 'fail',
            resource,
            message: "spec.tags has an empty key: empty tag keys aren't supported.",
            remediation: 'Remove the empty key from spec.tags.',
            evidence: { key },
            discriminator: 'spec.tags#',
            location: { path: 'spec.tags' },
          });
          continue;
        }
        const celRule = CEL_RESTRICTED_TAG_RULES.find((rule) => rule.matches(key));
        if (celRule) drafts.push(restrictedKeyDraft(key, celRule, resource));
      }
      if (drafts.length > 0) return drafts;
      return [
        {
          status: 'pass',
          resource,
          message:
            keys.length === 0
              ? 'No custom tags.'
              : `None of the ${keys.length} tag keys is restricted.`,
        },
      ];
    }),
});
