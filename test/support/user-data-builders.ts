// EC2NodeClasses carrying userData for each AMI family, healthy and broken, for the user-data
// checks and the CLI tests that run them.
import type { AmiFamily } from '../../lambda/core/ami-family.js';
import { aNodeClassObject } from './builders.js';

/** An AMI selector that gives the class `family` (Custom: an id term and amiFamily: Custom). */
function amiSpec(family: AmiFamily): Record<string, unknown> {
  switch (family) {
    case 'AL2':
      return { amiSelectorTerms: [{ alias: 'al2@v20250101' }] };
    case 'AL2023':
      return { amiSelectorTerms: [{ alias: 'al2023@v20251001' }] };
    case 'Bottlerocket':
      return { amiSelectorTerms: [{ alias: 'bottlerocket@v1.40.0' }] };
    case 'Windows2019':
    case 'Windows2022':
    case 'Windows2025':
      return { amiSelectorTerms: [{ alias: `${family.toLowerCase()}@latest` }] };
    case 'Custom':
      return { amiFamily: 'Custom', amiSelectorTerms: [{ id: 'ami-0123456789abcdef0' }] };
  }
}

/** A valid EC2NodeClass of `family` with `userData` (none when undefined). */
export function aUserDataNodeClass(
  family: AmiFamily,
  userData: string | undefined,
  options: { name?: string; spec?: Record<string, unknown> } = {}
): Record<string, unknown> {
  return aNodeClassObject({
    name: options.name ?? `${family.toLowerCase()}-class`,
    spec: { ...amiSpec(family), ...(userData === undefined ? {} : { userData }), ...options.spec },
  });
}

/** Healthy userData of each family, as Karpenter's documentation shows it. */
export const GOOD_USER_DATA: Readonly<Record<AmiFamily, string>> = {
  AL2: '#!/bin/bash\necho "Running custom user data script (bash)"\n',
  AL2023: `MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="//"

--//
Content-Type: text/x-shellscript; charset="us-ascii"

#!/bin/bash
echo "Hello, AL2023!"

--//
Content-Type: application/node.eks.aws

apiVersion: node.eks.aws/v1alpha1
kind: NodeConfig
spec:
  kubelet:
    config:
      maxPods: 42
--//
`,
  Bottlerocket: `[settings.kubernetes]
"kube-api-qps" = 30
"shutdown-grace-period" = "30s"
"shutdown-grace-period-for-critical-pods" = "30s"
[settings.kubernetes.eviction-hard]
"memory.available" = "20%"
`,
  Windows2019: 'Write-Host "Running custom user data script"\n',
  Windows2022: 'Write-Host "Running custom user data script"\n',
  Windows2025: 'Write-Host "Running custom user data script"\n',
  Custom: `#!/bin/bash
/etc/eks/bootstrap.sh my-cluster --kubelet-extra-args '--register-with-taints=karpenter.sh/unregistered:NoExecute'
`,
};

/** Bottlerocket TOML with a YAML-style `key: value` on line 3 (Karpenter's decode fails). */
export const BROKEN_TOML = `[settings.kubernetes]
max-pods = 110
cluster-domain: "cluster.local"
`;

/** A MIME document whose boundary is not quoted: Go's media type parser refuses `/`. */
export const UNQUOTED_BOUNDARY_MIME = `MIME-Version: 1.0
Content-Type: multipart/mixed; boundary=//

--//
Content-Type: text/x-shellscript; charset="us-ascii"

#!/bin/bash
echo hello
--//--
`;

/** An AL2023 MIME document whose NodeConfig part nodeadm cannot decode (wrong kind, line 9). */
export const BAD_NODECONFIG_MIME = `MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="BOUNDARY"

--BOUNDARY
Content-Type: application/node.eks.aws

apiVersion: node.eks.aws/v1alpha1
kind: NodeConfiguration
spec:
  kubelet:
    config:
      maxPods: 42
--BOUNDARY--
`;
