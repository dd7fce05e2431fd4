// A NodeClass the live-AWS CLI tests scan: a pinned image id, subnets and security groups by tag.
export const EDGE_MANIFEST = [
  'apiVersion: karpenter.k8s.aws/v1',
  'kind: EC2NodeClass',
  'metadata: { name: edge }',
  'spec:',
  '  amiFamily: AL2023',
  '  amiSelectorTerms: [{ id: ami-0123456789abcdef0 }]',
  '  role: KarpenterNodeRole-demo',
  '  subnetSelectorTerms: [{ tags: { network: edge } }]',
  '  securityGroupSelectorTerms: [{ tags: { karpenter.sh/discovery: demo } }]',
  '',
].join('\n');
