// Bottlerocket userData as Karpenter v1.14.1 merges it
// (https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/providers/amifamily/bootstrap/bottlerocket.go
// and bottlerocketsettings.go): the TOML is decoded with go-toml v2 into `settings` (kept as an
// untyped map) and into typed structs for `settings.kubernetes` and `settings.bootstrap-commands`.
// A syntax error, or a value of the wrong TOML type for a typed field, fails the decode: Karpenter
// cannot render the launch template. Keys the typed structs do not have are dropped when Karpenter
// writes the merged TOML (the unknown `settings.kubernetes` keys are logged as errors), anything
// outside `settings` is dropped too, and a few settings are always overwritten by Karpenter.
import type { EC2NodeClassSpec } from '../schema.js';
import { at, type UserDataProblem } from './problems.js';
import { parseToml, type TomlNode, type TomlTable } from './toml.js';

/** The Go type a field decodes into (go-toml v2's rules for each). */
type GoType =
  | { readonly t: 'string' | 'int' | 'uint32' | 'bool' }
  | { readonly t: 'map' | 'slice'; readonly of: GoType }
  | { readonly t: 'struct'; readonly fields: Readonly<Record<string, GoType>> };

const STRING: GoType = { t: 'string' };
const INT: GoType = { t: 'int' };
const BOOL: GoType = { t: 'bool' };
const STRING_MAP: GoType = { t: 'map', of: STRING };
const STRINGS: GoType = { t: 'slice', of: STRING };

/** `BottlerocketKubernetes` of Karpenter v1.14.1, by TOML key. */
const KUBERNETES: Readonly<Record<string, GoType>> = {
  'api-server': STRING,
  'cloud-provider': STRING,
  'cluster-certificate': STRING,
  'cluster-name': STRING,
  'cluster-dns-ip': STRING,
  'credential-providers': {
    t: 'map',
    of: {
      t: 'struct',
      fields: {
        enabled: BOOL,
        'cache-duration': STRING,
        'image-patterns': STRINGS,
        environment: STRING_MAP,
      },
    },
  },
  'node-labels': STRING_MAP,
  'node-taints': { t: 'map', of: STRINGS },
  'max-pods': INT,
  'static-pods': {
    t: 'map',
    of: { t: 'struct', fields: { enabled: BOOL, manifest: STRING } },
  },
  'eviction-hard': STRING_MAP,
  'eviction-soft': STRING_MAP,
  'eviction-soft-grace-period': STRING_MAP,
  'eviction-max-pod-grace-period': INT,
  'kube-reserved': STRING_MAP,
  'system-reserved': STRING_MAP,
  'allowed-unsafe-sysctls': STRINGS,
  'server-tls-bootstrap': BOOL,
  'registry-qps': INT,
  'registry-burst': INT,
  'event-qps': INT,
  'event-burst': INT,
  'kube-api-qps': INT,
  'kube-api-burst': INT,
  'container-log-max-size': STRING,
  'container-log-max-files': INT,
  'cpu-manager-policy': STRING,
  'cpu-manager-policy-options': STRINGS,
  'cpu-manager-reconcile-period': STRING,
  'memory-manager-policy': STRING,
  'topology-manager-scope': STRING,
  'topology-manager-policy': STRING,
  'topology-manager-policy-options': {
    t: 'struct',
    fields: { 'prefer-closest-numa-nodes': BOOL, 'max-allowable-numa-nodes': INT },
  },
  'image-gc-high-threshold-percent': STRING,
  'image-gc-low-threshold-percent': STRING,
  'ids-per-pod': INT,
  'cpu-cfs-quota-enforced': BOOL,
  'shutdown-grace-period': STRING,
  'shutdown-grace-period-for-critical-pods': STRING,
  'cluster-domain': STRING,
  'seccomp-default': BOOL,
  'pod-pids-limit': INT,
  'device-ownership-from-security-context': BOOL,
  'single-process-oom-kill': BOOL,
  'container-log-max-workers': INT,
  'container-log-monitor-interval': STRING,
  'hostname-override-source': STRING,
  'log-level': { t: 'uint32' },
};

const BOOTSTRAP_COMMANDS: GoType = {
  t: 'map',
  of: {
    t: 'struct',
    fields: { commands: { t: 'slice', of: STRINGS }, mode: STRING, essential: BOOL },
  },
};

/** Settings Karpenter always writes over the user's value. */
const ALWAYS_SET: Readonly<Record<string, string>> = {
  'api-server': "the cluster's API endpoint",
  'cluster-name': "the cluster's name",
  'cluster-certificate': "the cluster's CA bundle",
  'max-pods': 'spec.kubelet.maxPods, or the maximum Karpenter computes for each instance type',
  'node-taints': "the NodePool's taints and startupTaints (replacing the whole table)",
  'cluster-dns-ip': 'spec.kubelet.clusterDNS, or the cluster DNS address Karpenter discovers',
};

/** spec.kubelet field → the Bottlerocket setting Karpenter writes from it when it is set. */
const FROM_KUBELET: Readonly<Record<string, string>> = {
  systemReserved: 'system-reserved',
  kubeReserved: 'kube-reserved',
  evictionHard: 'eviction-hard',
  evictionSoft: 'eviction-soft',
  evictionSoftGracePeriod: 'eviction-soft-grace-period',
  evictionMaxPodGracePeriod: 'eviction-max-pod-grace-period',
  imageGCHighThresholdPercent: 'image-gc-high-threshold-percent',
  imageGCLowThresholdPercent: 'image-gc-low-threshold-percent',
  cpuCFSQuota: 'cpu-cfs-quota-enforced',
};

const TOML_REFERENCE =
  'Fix the TOML (https://toml.io/en/v1.0.0; Karpenter parses TOML 1.0), e.g. with `tomlq` or a TOML linter, and keep every Bottlerocket setting under [settings.*] tables.';

function tomlType(node: TomlNode): string {
  switch (node.kind) {
    case 'table':
      return node.inline ? 'an inline table' : 'a table';
    case 'table-array':
      return 'an array of tables ([[…]])';
    case 'array':
      return 'an array';
    case 'integer':
      return 'an integer';
    case 'float':
      return 'a float';
    case 'boolean':
      return 'a boolean';
    case 'string':
      return 'a string';
    default:
      return `a ${node.kind}`;
  }
}

function goTypeName(type: GoType): string {
  switch (type.t) {
    case 'string':
      return 'a string';
    case 'int':
      return 'an integer';
    case 'uint32':
      return 'a non-negative 32-bit integer';
    case 'bool':
      return 'a boolean';
    case 'map':
      return `a table of ${goTypeName(type.of).replace(/^an? /, '')} values`;
    case 'slice':
      return `an array of ${goTypeName(type.of).replace(/^an? /, '')} values`;
    case 'struct':
      return 'a table';
  }
}

/** A hint when a quoted number or an unquoted value is the likely mistake. */
function typeHint(node: TomlNode, type: GoType): string {
  if (type.t === 'string' && (node.kind === 'integer' || node.kind === 'float')) {
    return ` Quote it: "${String(node.value)}".`;
  }
  if ((type.t === 'int' || type.t === 'uint32') && node.kind === 'string') {
    return ' Remove the quotes.';
  }
  if (type.t === 'string' && node.kind === 'table' && !node.inline) {
    return ' A key holding dots must be quoted ("example.com/team" = "a"): unquoted, TOML reads it as nested tables.';
  }
  return '';
}

interface Decoder {
  readonly problems: UserDataProblem[];
}

function mismatch(out: Decoder, path: string, node: TomlNode, type: GoType): void {
  out.problems.push({
    rule: 'toml-type',
    severity: 'critical',
    subject: path,
    line: node.line,
    message: `${path} is ${tomlType(node)}, where Karpenter decodes ${goTypeName(type)}${at(node.line)}: the decode fails, Karpenter cannot render the launch template and launches no node from this EC2NodeClass.${typeHint(node, type)}`,
    remediation: `Give ${path} ${goTypeName(type)}, as Karpenter's Bottlerocket settings type declares it.`,
  });
}

function dropped(out: Decoder, path: string, node: TomlNode, why: string): void {
  out.problems.push({
    rule: 'toml-dropped',
    severity: 'medium',
    subject: path,
    line: node.line,
    message: `${path}${at(node.line)} ${why}: Karpenter leaves it out of the userData it renders, so the node never gets it.`,
    remediation: `Remove ${path}, or set it through a field Karpenter passes on (see the Bottlerocket section of https://karpenter.sh/docs/concepts/nodeclasses/#specuserdata).`,
  });
}

/** The tables an entry decodes as a map or struct from (an array of tables never does). */
function decode(out: Decoder, path: string, node: TomlNode, type: GoType): void {
  switch (type.t) {
    case 'string':
      if (node.kind !== 'string') mismatch(out, path, node, type);
      return;
    case 'bool':
      if (node.kind !== 'boolean') mismatch(out, path, node, type);
      return;
    case 'int':
    case 'uint32': {
      if (node.kind !== 'integer') {
        mismatch(out, path, node, type);
        return;
      }
      const value = node.integer ?? 0n;
      if (type.t === 'uint32' && (value < 0n || value > 4294967295n))
        mismatch(out, path, node, type);
      return;
    }
    case 'slice':
      if (node.kind !== 'array') {
        mismatch(out, path, node, type);
        return;
      }
      node.items.forEach((item, index) => {
        decode(out, `${path}[${index}]`, item, type.of);
      });
      return;
    case 'map':
      if (node.kind !== 'table') {
        mismatch(out, path, node, type);
        return;
      }
      for (const [key, value] of node.entries)
        decode(out, `${path}.${quoteKey(key)}`, value, type.of);
      return;
    case 'struct':
      if (node.kind !== 'table') {
        mismatch(out, path, node, type);
        return;
      }
      for (const [key, value] of node.entries) {
        const field = type.fields[key];
        const fieldPath = `${path}.${quoteKey(key)}`;
        if (field === undefined) {
          dropped(out, fieldPath, value, 'is not a setting Karpenter v1.14.1 knows');
        } else decode(out, fieldPath, value, field);
      }
      return;
  }
}

function quoteKey(key: string): string {
  return /^[A-Za-z0-9_-]+$/.test(key) ? key : JSON.stringify(key);
}

function overridden(out: Decoder, kubernetes: TomlTable, spec: EC2NodeClassSpec): void {
  const kubelet = spec.kubelet ?? {};
  const setByKarpenter = new Map(Object.entries(ALWAYS_SET));
  for (const [field, setting] of Object.entries(FROM_KUBELET)) {
    if (kubelet[field] !== undefined) setByKarpenter.set(setting, `spec.kubelet.${field}`);
  }
  for (const [key, source] of setByKarpenter) {
    const node = kubernetes.entries.get(key);
    if (node === undefined) continue;
    const path = `settings.kubernetes.${key}`;
    out.problems.push({
      rule: 'toml-overridden',
      severity: key === 'node-taints' ? 'medium' : 'low',
      subject: path,
      line: node.line,
      message: `${path}${at(node.line)} is overwritten by Karpenter with ${source}: the value in userData has no effect.`,
      remediation:
        key === 'max-pods' || source.startsWith('spec.kubelet')
          ? `Remove ${path} from userData and set it in spec.kubelet instead.`
          : key === 'node-taints'
            ? `Remove ${path} from userData and declare the taints on the NodePool (spec.template.spec.taints).`
            : `Remove ${path} from userData; Karpenter sets it.`,
    });
  }
}

/** What Karpenter's decode of Bottlerocket userData finds wrong, most severe first. */
export function bottlerocketProblems(userData: string, spec: EC2NodeClassSpec): UserDataProblem[] {
  const parsed = parseToml(userData);
  if (!parsed.ok) {
    const { line, column, message } = parsed.error;
    return [
      {
        rule: 'toml-syntax',
        severity: 'critical',
        line,
        column,
        message: `spec.userData is not valid TOML${at(line, column)}: ${message}. Karpenter cannot parse it, so it cannot render the launch template: the EC2NodeClass never validates and no node launches from it.${notTomlHint(userData)}`,
        remediation: TOML_REFERENCE,
      },
    ];
  }
  const out: Decoder = { problems: [] };
  for (const [key, node] of parsed.root.entries) {
    if (key !== 'settings') {
      dropped(out, quoteKey(key), node, 'is outside [settings]');
    }
  }
  const settings = parsed.root.entries.get('settings');
  if (settings === undefined) return out.problems;
  if (settings.kind !== 'table') {
    mismatch(out, 'settings', settings, { t: 'struct', fields: {} });
    return out.problems;
  }
  const kubernetes = settings.entries.get('kubernetes');
  if (kubernetes !== undefined) {
    decode(out, 'settings.kubernetes', kubernetes, { t: 'struct', fields: KUBERNETES });
    if (kubernetes.kind === 'table') overridden(out, kubernetes, spec);
  }
  const commands = settings.entries.get('bootstrap-commands');
  if (commands !== undefined)
    decode(out, 'settings.bootstrap-commands', commands, BOOTSTRAP_COMMANDS);
  return out.problems;
}

/** Why the text is not TOML, when it is plainly another family's userData. */
function notTomlHint(userData: string): string {
  const trimmed = userData.trimStart();
  if (trimmed.startsWith('#!')) {
    return ' It is a shell script: Bottlerocket userData is TOML settings only (run commands with [settings.bootstrap-commands] or a bootstrap container).';
  }
  if (trimmed.startsWith('MIME-Version:') || trimmed.startsWith('Content-Type:')) {
    return ' It is a MIME document: Bottlerocket userData is TOML settings only.';
  }
  if (/^\s*kind:\s*NodeConfig\b/m.test(userData) || /node\.eks\.aws\//.test(userData)) {
    return ' It is an AL2023 nodeadm NodeConfig: Bottlerocket userData is TOML settings only.';
  }
  if (/^\s*<powershell>/i.test(trimmed)) {
    return ' It is a Windows PowerShell script: Bottlerocket userData is TOML settings only.';
  }
  return '';
}

/** The TOML as Karpenter writes it back, roughly: without comments and blank lines. */
export function renderedTomlEstimate(userData: string): string {
  return userData
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .join('\n');
}
