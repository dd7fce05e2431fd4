// spec.userData as Karpenter v1.14.1 merges it for each AMI family
// (https://github.com/aws/karpenter-provider-aws/tree/v1.14.1/pkg/providers/amifamily/bootstrap),
// and what the node's own bootstrap then makes of the merged document:
// - AL2: MIME multi-part (eksbootstrap.go). A userData starting with `MIME-Version:` or
//   `Content-Type:` is parsed as MIME (errors stop the render); anything else becomes one
//   text/x-shellscript part. Karpenter's bootstrap.sh part is appended.
// - AL2023: MIME multi-part (nodeadm.go, mime/mime.go). MIME is parsed the same way; otherwise
//   the text becomes a NodeConfig part when it parses as a YAML mapping (or is empty), a shell part
//   when not. Karpenter's NodeConfig part is appended. nodeadm on the node then decodes every
//   application/node.eks.aws part as a node.eks.aws/v1alpha1 NodeConfig and fails the boot on any
//   that does not decode (https://github.com/awslabs/amazon-eks-ami, nodeadm/internal/configprovider).
// - Bottlerocket: TOML, decoded and merged (bottlerocket.ts here).
// - Windows*: the text is placed inside Karpenter's own <powershell> block (windows.go).
// - Custom: passed through unchanged; Karpenter adds no bootstrap (custom.go).
import { parseAllDocuments } from 'yaml';
import type { AmiFamily } from '../ami-family.js';
import type { EC2NodeClassSpec, NodePool } from '../schema.js';
import { bottlerocketProblems, renderedTomlEstimate } from './bottlerocket.js';
import { looksLikeMime, type MimePart, parseMediaType, readMultipart } from './mime.js';
import { at, type UserDataProblem, utf8Length } from './problems.js';
import { parseToml } from './toml.js';

/**
 * What `nodeclass-scan snapshot` writes in place of spec.userData (lambda/adapters/world); world
 * files and snapshots carry it instead of the real script, which is not evaluated.
 */
export const REDACTED_USER_DATA = '<redacted by nodeclass-scan snapshot>';

/** EC2's user data limit, on the raw (base64-decoded) bytes. */
export const USER_DATA_LIMIT_BYTES = 16384;
/** Karpenter logs that the rendered user data approaches the limit from 90% of it. */
export const USER_DATA_WARN_BYTES = Math.floor((USER_DATA_LIMIT_BYTES * 9) / 10);

const NODE_CONFIG_MEDIA_TYPE = 'application/node.eks.aws';
const NODE_CONFIG_API_VERSION = 'node.eks.aws/v1alpha1';
const SHELL_CONTENT_TYPE = 'text/x-shellscript; charset="us-ascii"';

const MIME_REMEDIATION =
  'Fix the MIME document: `MIME-Version: 1.0`, a `Content-Type: multipart/mixed; boundary="…"` header with the boundary quoted, an empty line, then each part as `--boundary`, its headers, an empty line and its content, and a closing `--boundary--` line. Or drop the MIME wrapping and give the script (or, on AL2023, the NodeConfig) alone.';

// --- MIME-based families (AL2, AL2023) ----------------------------------------------------------

function mimeProblem(family: AmiFamily, userData: string): UserDataProblem | undefined {
  if (!looksLikeMime(userData)) return undefined;
  const read = readMultipart(userData);
  if (read.ok) return undefined;
  return {
    rule: 'mime',
    severity: 'critical',
    line: read.line,
    message: `spec.userData starts like a MIME document, so Karpenter parses it as one for ${family}, and the parse fails${at(read.line)}: ${read.message}. Karpenter cannot render the launch template: the EC2NodeClass never validates and no node launches from it.`,
    remediation: MIME_REMEDIATION,
  };
}

function contentTypeOf(part: MimePart): string {
  return part.headers.find(([key]) => key === 'Content-Type')?.[1] ?? '';
}

/**
 * nodeadm's decodeIfBase64: content that is valid standard base64 is decoded first. Undefined
 * for gzip-compressed content, which nodeadm inflates and the scanner does not check.
 */
function decodeIfBase64(content: string): string | undefined {
  const compact = content.replace(/[\r\n]/g, '');
  if (compact === '' || compact.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(compact)) {
    return content;
  }
  let bytes: Uint8Array;
  try {
    bytes = Uint8Array.from(atob(compact), (char) => char.charCodeAt(0));
  } catch {
    return content;
  }
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) return undefined;
  return new TextDecoder('utf-8', { fatal: false }).decode(bytes);
}

/** The first YAML document, read as Go's YAML-to-JSON path reads it (YAML 1.1, duplicates allowed). */
function firstYamlDocument(
  text: string
): { ok: true; value: unknown } | { ok: false; line?: number; message: string } {
  const documents = parseAllDocuments(text, { version: '1.1', uniqueKeys: false, merge: true });
  const first = Array.isArray(documents) ? documents[0] : undefined;
  if (first === undefined) return { ok: true, value: null };
  const error = first.errors[0];
  if (error !== undefined) {
    const line = error.linePos?.[0]?.line;
    return {
      ok: false,
      ...(line === undefined ? {} : { line }),
      message: (error.message.split('\n')[0] ?? error.message).replace(
        / at line \d+, column \d+:?$/,
        ''
      ),
    };
  }
  try {
    return { ok: true, value: first.toJS({ maxAliasCount: 100 }) as unknown };
  } catch (cause) {
    return { ok: false, message: cause instanceof Error ? cause.message : String(cause) };
  }
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Why nodeadm cannot decode `content` as a NodeConfig, or undefined when it can. `lineOffset`
 * maps the content's lines to spec.userData's.
 */
function nodeConfigError(
  content: string,
  lineOffset: number
): { line?: number; reason: string } | undefined {
  const decoded = decodeIfBase64(content);
  if (decoded === undefined) return undefined;
  const document = firstYamlDocument(decoded);
  const offset = decoded === content ? lineOffset : undefined;
  if (!document.ok) {
    const line =
      document.line === undefined || offset === undefined ? undefined : document.line + offset;
    return {
      ...(line === undefined ? {} : { line }),
      reason: `it is not valid YAML: ${document.message}`,
    };
  }
  const value = document.value;
  if (!isMapping(value)) {
    return {
      reason:
        value === null || value === undefined
          ? 'it is empty (or only comments), so it has no apiVersion and kind'
          : 'it is not a YAML mapping',
    };
  }
  if (value.apiVersion !== NODE_CONFIG_API_VERSION || value.kind !== 'NodeConfig') {
    const found = `apiVersion ${JSON.stringify(value.apiVersion ?? null)}, kind ${JSON.stringify(value.kind ?? null)}`;
    return {
      reason: `it has ${found}, not apiVersion ${NODE_CONFIG_API_VERSION} and kind NodeConfig`,
    };
  }
  if (value.spec !== undefined && !isMapping(value.spec))
    return { reason: 'its spec is not a mapping' };
  return undefined;
}

function nodeConfigProblem(
  where: string,
  content: string,
  lineOffset: number,
  subject?: string
): UserDataProblem | undefined {
  const error = nodeConfigError(content, lineOffset);
  if (error === undefined) return undefined;
  return {
    rule: 'nodeconfig',
    severity: 'critical',
    ...(subject === undefined ? {} : { subject }),
    ...(error.line === undefined ? {} : { line: error.line }),
    message: `${where} is passed to nodeadm as a NodeConfig (Content-Type ${NODE_CONFIG_MEDIA_TYPE}), but nodeadm cannot decode it${at(error.line)}: ${error.reason}. nodeadm fails on the node, which never joins the cluster.`,
    remediation: `Give a YAML document with apiVersion: ${NODE_CONFIG_API_VERSION} and kind: NodeConfig (https://awslabs.github.io/amazon-eks-ami/nodeadm/), or, for a shell script, a MIME part with Content-Type: text/x-shellscript.`,
  };
}

function al2023PartProblems(part: MimePart, index: number): UserDataProblem[] {
  const subject = `part ${index + 1}`;
  const contentType = contentTypeOf(part);
  const problems: UserDataProblem[] = [];
  if (contentType !== '') {
    const media = parseMediaType(contentType);
    if (!media.ok) {
      problems.push({
        rule: 'part-content-type',
        severity: 'critical',
        subject,
        line: part.line,
        message: `The Content-Type of MIME ${subject}${at(part.line)} is not a valid media type (${media.message}). Karpenter copies it as written; nodeadm parses every part's Content-Type on the node, fails, and the node never joins the cluster.`,
        remediation: 'Write the part header as `Content-Type: type/subtype; name="value"`.',
      });
      return problems;
    }
    if (media.mediaType === NODE_CONFIG_MEDIA_TYPE) {
      const headerLines = part.headers.length + 1;
      const problem = nodeConfigProblem(
        `MIME ${subject}${at(part.line)}`,
        part.body,
        part.line + headerLines,
        subject
      );
      if (problem) problems.push(problem);
      return problems;
    }
  }
  const encoding = part.headers.find(([key]) => key === 'Content-Transfer-Encoding')?.[1];
  if (
    encoding !== undefined &&
    !['7bit', '8bit', 'binary'].includes(encoding.trim().toLowerCase())
  ) {
    problems.push({
      rule: 'part-encoding',
      severity: 'high',
      subject,
      line: part.line,
      message: `MIME ${subject}${at(part.line)} declares Content-Transfer-Encoding: ${encoding.trim()}, but on AL2023 Karpenter keeps only each part's Content-Type when it merges the parts: cloud-init receives the still-encoded text and the part does not run as intended.`,
      remediation: 'Put the part content in plain text (no Content-Transfer-Encoding).',
    });
  }
  return problems;
}

/** How Karpenter classifies non-MIME AL2023 userData (sigs.k8s.io/yaml into a map). */
function classifiesAsNodeConfig(userData: string): boolean {
  const document = firstYamlDocument(userData);
  return (
    document.ok &&
    (document.value === null || document.value === undefined || isMapping(document.value))
  );
}

function looksLikeNodeConfig(text: string): boolean {
  return (
    /^\s*kind:\s*["']?NodeConfig\b/m.test(text) ||
    /^\s*apiVersion:\s*["']?node\.eks\.aws\//m.test(text)
  );
}

function looksLikeBottlerocketToml(text: string): boolean {
  const firstLine = text
    .split('\n')
    .find((line) => line.trim() !== '' && !line.trim().startsWith('#'));
  if (firstLine === undefined || !/^\s*(\[+\s*settings\b|settings\.)/.test(firstLine)) return false;
  const parsed = parseToml(text);
  return parsed.ok && parsed.root.entries.get('settings')?.kind === 'table';
}

function wrongFamilyProblem(family: AmiFamily, userData: string): UserDataProblem | undefined {
  if (looksLikeBottlerocketToml(userData)) {
    return {
      rule: 'other-family',
      severity: 'high',
      message: `spec.userData holds Bottlerocket TOML settings, but the AMI family is ${family}: Karpenter passes it on as a shell script, which fails on the node, and none of the settings apply.`,
      remediation: `Use amiFamily: Bottlerocket (or a bottlerocket@ alias) for these settings, or give ${family} userData (${family === 'AL2023' ? 'a nodeadm NodeConfig or a shell script' : family === 'AL2' ? 'a shell script or MIME' : 'PowerShell commands'}).`,
    };
  }
  if (family !== 'AL2023' && looksLikeNodeConfig(userData)) {
    return {
      rule: 'other-family',
      severity: 'high',
      message: `spec.userData holds an AL2023 nodeadm NodeConfig, but the AMI family is ${family}, which has no nodeadm: Karpenter passes it on as a script, which fails on the node, and none of the settings apply.`,
      remediation: `Use amiFamily: AL2023 (or an al2023@ alias) for a NodeConfig, or give ${family} userData.`,
    };
  }
  return undefined;
}

function al2Problems(userData: string): UserDataProblem[] {
  const mime = mimeProblem('AL2', userData);
  if (mime) return [mime];
  if (looksLikeMime(userData)) return [];
  const wrong = wrongFamilyProblem('AL2', userData);
  return wrong ? [wrong] : [];
}

function al2023Problems(userData: string): UserDataProblem[] {
  if (userData === '') return [];
  if (looksLikeMime(userData)) {
    const mime = mimeProblem('AL2023', userData);
    if (mime) return [mime];
    const read = readMultipart(userData);
    return read.ok ? read.parts.flatMap(al2023PartProblems) : [];
  }
  if (classifiesAsNodeConfig(userData)) {
    const problem = nodeConfigProblem(
      'spec.userData (not MIME, and it parses as YAML)',
      userData,
      0
    );
    return problem ? [problem] : [];
  }
  const wrong = wrongFamilyProblem('AL2023', userData);
  if (wrong) return [wrong];
  if (looksLikeNodeConfig(userData)) {
    const document = firstYamlDocument(userData);
    const line = document.ok ? undefined : document.line;
    const reason = document.ok ? 'it is not a YAML mapping' : document.message;
    return [
      {
        rule: 'nodeconfig-yaml',
        severity: 'high',
        ...(line === undefined ? {} : { line }),
        message: `spec.userData looks like a nodeadm NodeConfig but is not valid YAML${at(line)}: ${reason}. Karpenter therefore passes it on as a shell script: nodeadm never sees these settings and the script fails on the node.`,
        remediation: `Fix the YAML of the NodeConfig (apiVersion: ${NODE_CONFIG_API_VERSION}, kind: NodeConfig).`,
      },
    ];
  }
  return [];
}

const WINDOWS_TAG = /<\/?(powershell|script|persist|runAsLocalSystem|detach)>/i;

function windowsProblems(family: AmiFamily, userData: string): UserDataProblem[] {
  const lines = userData.split('\n');
  const index = lines.findIndex((line) => WINDOWS_TAG.test(line));
  if (index !== -1) {
    const tag = WINDOWS_TAG.exec(lines[index] ?? '')?.[0] ?? '<powershell>';
    return [
      {
        rule: 'powershell-tags',
        severity: 'critical',
        line: index + 1,
        message: `spec.userData contains the tag ${tag}${at(index + 1)}, but Karpenter already wraps the userData in its own <powershell> … </powershell> block for ${family}, ahead of its bootstrap command: the tag lands inside that script, which PowerShell cannot parse (or which ends before the bootstrap), so the node never joins the cluster.`,
        remediation:
          'Give only PowerShell commands in spec.userData, without <powershell>, <script> or <persist> tags; Karpenter adds the tags.',
      },
    ];
  }
  const wrong = wrongFamilyProblem(family, userData);
  return wrong ? [wrong] : [];
}

const UNREGISTERED_TAINT = 'karpenter.sh/unregistered';

function customProblems(userData: string | undefined): UserDataProblem[] {
  if (userData === undefined || userData.trim() === '') {
    return [
      {
        rule: 'custom-without-bootstrap',
        severity: 'critical',
        message:
          'amiFamily is Custom and spec.userData is empty: Karpenter adds no bootstrap for Custom, so nothing starts the kubelet and joins the node to the cluster. Instances launch, never register, and Karpenter terminates them when registration times out.',
        remediation:
          'Give spec.userData that bootstraps the node (joins the cluster and registers with the karpenter.sh/unregistered:NoExecute taint), or use an AMI family whose bootstrap Karpenter generates (an al2023@, bottlerocket@ or windows alias).',
      },
    ];
  }
  if (!userData.includes(UNREGISTERED_TAINT)) {
    return [
      {
        rule: 'custom-unregistered-taint',
        severity: 'medium',
        message: `amiFamily is Custom and spec.userData never mentions the ${UNREGISTERED_TAINT} taint: Karpenter requires Custom nodes to register with ${UNREGISTERED_TAINT}:NoExecute and does not register nodes without it. Unless a script the userData runs sets it, nodes join but Karpenter never takes them into service.`,
        remediation: `Register the kubelet with the taint ${UNREGISTERED_TAINT}:NoExecute (kubelet --register-with-taints or registerWithTaints in its configuration).`,
      },
    ];
  }
  return [];
}

/** What is wrong with the userData for `family`, as Karpenter and the node's bootstrap meet it. */
export function userDataProblems(spec: EC2NodeClassSpec, family: AmiFamily): UserDataProblem[] {
  const userData = spec.userData;
  if (family === 'Custom') return customProblems(userData);
  if (userData === undefined) return [];
  switch (family) {
    case 'AL2':
      return al2Problems(userData);
    case 'AL2023':
      return al2023Problems(userData);
    case 'Bottlerocket':
      return bottlerocketProblems(userData, spec);
    case 'Windows2019':
    case 'Windows2022':
    case 'Windows2025':
      return windowsProblems(family, userData);
  }
}

// --- Rendered size -----------------------------------------------------------------------------

/** What the size estimate knows about the cluster; unknown values are assumed (and said so). */
export interface RenderContext {
  readonly clusterName?: string;
  /** The NodePools that launch through the class (their labels and taints are rendered). */
  readonly nodePools: readonly NodePool[];
}

export interface RenderedSize {
  /** Bytes of the user's part as Karpenter writes it (exact, except Bottlerocket TOML). */
  readonly userBytes: number;
  /** The whole rendered userData, estimated. */
  readonly totalBytes: number;
  /** True when the total is exact (Custom: passed through unchanged). */
  readonly exact: boolean;
  /** True when the user's part is exactly what Karpenter writes (not an estimate). */
  readonly userExact: boolean;
  /** What the estimate assumed, for the message. */
  readonly assumptions: readonly string[];
}

/** A typical EKS cluster CA bundle, base64 (Karpenter writes it into every family's bootstrap). */
const ASSUMED_CA_BYTES = 1476;
const ASSUMED_ENDPOINT_BYTES = 80;
const ASSUMED_CLUSTER_NAME_BYTES = 40;
const CLUSTER_DNS = '10.100.0.10';
const CLUSTER_CIDR = '10.100.0.0/16';
const MAX_PODS = '110';

/** Keys Karpenter does not turn into node labels (well-known and restricted domains). */
const UNLABELLED_DOMAINS =
  /(^|\.)(kubernetes\.io|k8s\.io|karpenter\.sh|karpenter\.k8s\.aws|k8s\.aws)\//;

interface NodeSettings {
  readonly labels: string;
  readonly taints: readonly { key: string; value: string; effect: string }[];
}

/** The labels and taints of the NodePool whose rendering is longest (or Karpenter's minimum). */
function nodeSettings(nodePools: readonly NodePool[]): NodeSettings {
  const candidates = (nodePools.length > 0 ? nodePools : [undefined]).map((pool): NodeSettings => {
    const labels: Record<string, string> = {
      ...(pool?.spec.template.metadata?.labels ?? {}),
      'karpenter.sh/capacity-type': 'on-demand',
      'karpenter.sh/nodepool': pool?.metadata.name ?? 'default',
    };
    for (const requirement of pool?.spec.template.spec.requirements ?? []) {
      const [value] = requirement.values ?? [];
      if (
        requirement.operator === 'In' &&
        requirement.values?.length === 1 &&
        value !== undefined
      ) {
        if (!UNLABELLED_DOMAINS.test(requirement.key)) labels[requirement.key] = value;
      }
    }
    const taints = [
      ...(pool?.spec.template.spec.taints ?? []),
      ...(pool?.spec.template.spec.startupTaints ?? []),
      { key: UNREGISTERED_TAINT, effect: 'NoExecute' },
    ].map((taint) => ({ key: taint.key, value: taint.value ?? '', effect: taint.effect }));
    const text = Object.entries(labels)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([key, value]) => `${key}=${value}`)
      .join(',');
    return { labels: text, taints };
  });
  const weight = (settings: NodeSettings) =>
    settings.labels.length +
    settings.taints.reduce((sum, t) => sum + t.key.length + t.value.length + 12, 0);
  return candidates.reduce((best, next) => (weight(next) > weight(best) ? next : best));
}

/** Rough text of the spec.kubelet settings Karpenter renders (flags, YAML or TOML alike). */
function kubeletText(spec: EC2NodeClassSpec): string {
  return Object.entries(spec.kubelet ?? {})
    .filter(([key]) => key !== 'maxPods' && key !== 'clusterDNS')
    .map(([key, value]) => ` --${key}=${JSON.stringify(value)}`)
    .join('');
}

function kubeletArgs(settings: NodeSettings, spec: EC2NodeClassSpec): string {
  const taints = settings.taints
    .map((taint) => `${taint.key}${taint.value === '' ? '' : `=${taint.value}`}:${taint.effect}`)
    .join(',');
  return `--node-labels="${settings.labels}" --register-with-taints="${taints}" --max-pods=${MAX_PODS}${kubeletText(spec)}`;
}

function mimeDocument(parts: readonly { headers: readonly string[]; body: string }[]): string {
  const rendered = parts
    .map(
      (part, index) =>
        `${index === 0 ? '' : '\n'}--//\n${part.headers.map((header) => `${header}\n`).join('')}\n${part.body}`
    )
    .join('');
  return `MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="//"\n\n${rendered}\n--//--\n`;
}

/** Go's multipart writer: a part's header map, keys sorted, values in order. */
function sortedHeaders(part: MimePart): string[] {
  const byKey = new Map<string, string[]>();
  for (const [key, value] of part.headers) byKey.set(key, [...(byKey.get(key) ?? []), value]);
  return [...byKey.keys()]
    .sort()
    .flatMap((key) => (byKey.get(key) ?? []).map((value) => `${key}: ${value}`));
}

interface Cluster {
  readonly name: string;
  readonly endpoint: string;
  readonly ca: string;
}

function userParts(
  family: 'AL2' | 'AL2023',
  userData: string | undefined
): { headers: readonly string[]; body: string }[] {
  if (userData === undefined || userData === '') return [];
  if (looksLikeMime(userData)) {
    const read = readMultipart(userData);
    if (!read.ok) return [{ headers: [], body: userData }];
    return read.parts.map((part) => ({
      headers: family === 'AL2' ? sortedHeaders(part) : [`Content-Type: ${contentTypeOf(part)}`],
      body: part.body,
    }));
  }
  const contentType =
    family === 'AL2023' && classifiesAsNodeConfig(userData)
      ? NODE_CONFIG_MEDIA_TYPE
      : SHELL_CONTENT_TYPE;
  return [{ headers: [`Content-Type: ${contentType}`], body: userData }];
}

function al2Bootstrap(cluster: Cluster, settings: NodeSettings, spec: EC2NodeClassSpec): string {
  return [
    '#!/bin/bash -xe',
    'exec > >(tee /var/log/user-data.log|logger -t user-data -s 2>/dev/console) 2>&1',
    `/etc/eks/bootstrap.sh '${cluster.name}' --apiserver-endpoint '${cluster.endpoint}' --b64-cluster-ca '${cluster.ca}' \\`,
    `--dns-cluster-ip '${CLUSTER_DNS}' \\`,
    '--use-max-pods false \\',
    `--kubelet-extra-args '${kubeletArgs(settings, spec)}'`,
  ].join('\n');
}

function al2023NodeConfig(
  cluster: Cluster,
  settings: NodeSettings,
  spec: EC2NodeClassSpec
): string {
  const taints = settings.taints
    .map(
      (taint) =>
        `      - effect: ${taint.effect}\n        key: ${taint.key}\n${taint.value === '' ? '' : `        value: ${taint.value}\n`}`
    )
    .join('');
  const kubelet = Object.entries(spec.kubelet ?? {})
    .filter(([key]) => key !== 'maxPods' && key !== 'clusterDNS')
    .map(([key, value]) => `      ${key}: ${JSON.stringify(value)}\n`)
    .join('');
  return [
    '# Karpenter Generated NodeConfig',
    'apiVersion: node.eks.aws/v1alpha1',
    'kind: NodeConfig',
    'metadata:',
    '  creationTimestamp: null',
    'spec:',
    '  cluster:',
    `    apiServerEndpoint: ${cluster.endpoint}`,
    `    certificateAuthority: ${cluster.ca}`,
    `    cidr: ${CLUSTER_CIDR}`,
    `    name: ${cluster.name}`,
    '  containerd: {}',
    '  instance:',
    '    localStorage: {}',
    '  kubelet:',
    '    config:',
    '      clusterDNS:',
    `      - ${CLUSTER_DNS}`,
    `      maxPods: ${MAX_PODS}`,
    `      registerWithTaints:\n${taints}${kubelet}    flags:`,
    `    - --node-labels="${settings.labels}"`,
    '',
  ].join('\n');
}

function bottlerocketSettings(
  cluster: Cluster,
  settings: NodeSettings,
  spec: EC2NodeClassSpec
): string {
  const labels = settings.labels
    .split(',')
    .map((pair) => {
      const [key = '', value = ''] = pair.split('=');
      return `'${key}' = '${value}'`;
    })
    .join('\n');
  const taints = settings.taints
    .map((taint) => `'${taint.key}' = ['${taint.value}:${taint.effect}']`)
    .join('\n');
  const kubelet = Object.entries(spec.kubelet ?? {})
    .filter(([key]) => key !== 'maxPods' && key !== 'clusterDNS')
    .map(([key, value]) => `${key} = ${JSON.stringify(value)}`)
    .join('\n');
  return [
    '[settings.kubernetes]',
    `api-server = '${cluster.endpoint}'`,
    `cluster-certificate = '${cluster.ca}'`,
    `cluster-dns-ip = '${CLUSTER_DNS}'`,
    `cluster-name = '${cluster.name}'`,
    `max-pods = ${MAX_PODS}`,
    kubelet,
    '',
    '[settings.kubernetes.node-labels]',
    labels,
    '',
    '[settings.kubernetes.node-taints]',
    taints,
    '',
  ].join('\n');
}

function windowsScript(
  cluster: Cluster,
  settings: NodeSettings,
  spec: EC2NodeClassSpec,
  userData: string | undefined
): string {
  const custom = userData === undefined || userData === '' ? '' : `${userData}\n`;
  return [
    `<powershell>\n${custom}[string]$EKSBootstrapScriptFile = "$env:ProgramFiles\\Amazon\\EKS\\Start-EKSBootstrap.ps1"`,
    `& $EKSBootstrapScriptFile -EKSClusterName '${cluster.name}' -APIServerEndpoint '${cluster.endpoint}' -Base64ClusterCA '${cluster.ca}' -KubeletExtraArgs '${kubeletArgs(settings, spec)}' -DNSClusterIP '${CLUSTER_DNS}'`,
    '</powershell>',
  ].join('\n');
}

/**
 * The size of the userData Karpenter renders for the class, in bytes (what EC2 limits). The
 * user's part is written exactly as Karpenter writes it (Bottlerocket: approximately, Karpenter
 * re-serialises the TOML); Karpenter's own part is estimated from the cluster and NodePools known,
 * assuming typical values for the rest.
 */
export function renderedSize(
  spec: EC2NodeClassSpec,
  family: AmiFamily,
  context: RenderContext
): RenderedSize {
  const userData = spec.userData;
  if (family === 'Custom') {
    const bytes = utf8Length(userData ?? '');
    return { userBytes: bytes, totalBytes: bytes, exact: true, userExact: true, assumptions: [] };
  }
  const assumptions = [
    `a ${ASSUMED_CA_BYTES.toLocaleString('en-US')}-byte cluster CA bundle`,
    `an API endpoint of ${ASSUMED_ENDPOINT_BYTES} characters`,
  ];
  if (context.clusterName === undefined || context.clusterName === '') {
    assumptions.push(`a cluster name of ${ASSUMED_CLUSTER_NAME_BYTES} characters`);
  }
  const cluster: Cluster = {
    name: context.clusterName || 'x'.repeat(ASSUMED_CLUSTER_NAME_BYTES),
    endpoint: 'x'.repeat(ASSUMED_ENDPOINT_BYTES),
    ca: 'x'.repeat(ASSUMED_CA_BYTES),
  };
  const settings = nodeSettings(context.nodePools);
  switch (family) {
    case 'AL2':
    case 'AL2023': {
      const user = userParts(family, userData);
      const ours =
        family === 'AL2'
          ? {
              headers: [`Content-Type: ${SHELL_CONTENT_TYPE}`],
              body: al2Bootstrap(cluster, settings, spec),
            }
          : {
              headers: [`Content-Type: ${NODE_CONFIG_MEDIA_TYPE}`],
              body: al2023NodeConfig(cluster, settings, spec),
            };
      const strip = (text: string) => text.replaceAll('\r', '');
      const userBytes = user.length === 0 ? 0 : utf8Length(strip(mimeDocument(user)));
      const totalBytes = utf8Length(strip(mimeDocument([...user, ours])));
      return { userBytes, totalBytes, exact: false, userExact: true, assumptions };
    }
    case 'Bottlerocket': {
      const user = renderedTomlEstimate(userData ?? '');
      const ours = bottlerocketSettings(cluster, settings, spec);
      const userBytes = utf8Length(user);
      return {
        userBytes,
        totalBytes: userBytes + utf8Length(ours) + 1,
        exact: false,
        userExact: false,
        assumptions: [...assumptions, 'your TOML rewritten without comments and blank lines'],
      };
    }
    case 'Windows2019':
    case 'Windows2022':
    case 'Windows2025': {
      const userBytes = utf8Length(userData ?? '');
      const totalBytes = utf8Length(windowsScript(cluster, settings, spec, userData));
      return { userBytes, totalBytes, exact: false, userExact: true, assumptions };
    }
  }
}
