import { matchesFormat, objectNameProblem } from './admission/formats.js';
import { ALIAS_AMI_FAMILY, AMI_FAMILIES, splitAlias } from './ami-family.js';
import {
  allowedKarpenterAwsLabels,
  type CrdRuleRelease,
  crdRuleRelease,
  SINCE,
} from './crd-releases.js';
import type { EC2NodeClassSpec, NodePool } from './schema.js';
import { formatPath } from './schema.js';

// The EC2NodeClass CRD's validation rules (CEL and OpenAPI markers) of each Karpenter release
// v1.0.0 … v1.14.1 (see crd-releases.ts for the release each rule arrived in), evaluated on a
// structurally parsed spec. The API server enforces them at apply time; objects applied with
// validation bypassed, or manifests not yet applied (CI), can still break them. Messages are
// Karpenter's own where the CRD gives one, Kubernetes' OpenAPI wording otherwise. Rules of a field
// the release does not have are not evaluated: crd-fields.ts reports the field itself. `spec.kubelet`
// is kubelet-config-valid's: every release's CRD validates it, Karpenter's main branch leaves it to
// the controller.

/** One violated rule: where, which rule (stable, for finding ids), and the message. */
export interface CrdViolation {
  readonly path: string;
  readonly rule: string;
  readonly message: string;
}

type Path = readonly PropertyKey[];

const MAX_SELECTOR_TERMS = 30;
const MAX_SELECTOR_TAGS = 20;
const MAX_BLOCK_DEVICE_MAPPINGS = 50;
const MAX_NETWORK_INTERFACES = 150;
const MAX_ALIAS_LENGTH = 30;

const VOLUME_TYPES = ['standard', 'io1', 'io2', 'gp2', 'sc1', 'st1', 'gp3'] as const;
// Verbatim from the CRD, including its empty alternatives (`([1-9]||…)Ti` accepts a bare `Ti`).
const VOLUME_SIZE_PATTERN =
  '^((?:[1-9][0-9]{0,3}|[1-4][0-9]{4}|[5][0-8][0-9]{3}|59000)Gi|(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|[6][0-3][0-9]{3}|64000)G|([1-9]||[1-5][0-7]|58)Ti|([1-9]||[1-5][0-9]|6[0-3]|64)T)$';
/** RE2's `\s`: Go's regexp has no Unicode spaces and no vertical tab in it, JavaScript does. */
const RE2_SPACE = '\\t\\n\\f\\r ';

/**
 * A CRD `pattern` (RE2 syntax, as Go's regexp runs it) as an equivalent JavaScript RegExp for the
 * constructs these CRDs use: `\s`/`\S` with RE2's ASCII meaning, `.` matching any code point but
 * newline (the `u` flag makes JavaScript work on code points, as Go does on runes).
 */
function re2Compatible(pattern: string): RegExp {
  let out = '';
  let inClass = false;
  for (let index = 0; index < pattern.length; index += 1) {
    const char = pattern[index];
    if (char === '\\') {
      const next = pattern[index + 1] ?? '';
      index += 1;
      if (next === 's') out += inClass ? RE2_SPACE : `[${RE2_SPACE}]`;
      else if (next === 'S' && !inClass) out += `[^${RE2_SPACE}]`;
      else out += `\\${next}`;
      continue;
    }
    if (char === '[') inClass = true;
    else if (char === ']') inClass = false;
    out += char === '.' && !inClass ? '[^\\n]' : char;
  }
  return new RegExp(out, 'u');
}

const compiledPatterns = new Map<string, RegExp>();

function patternMatches(pattern: string, value: string): boolean {
  let regex = compiledPatterns.get(pattern);
  if (regex === undefined) {
    regex = re2Compatible(pattern);
    compiledPatterns.set(pattern, regex);
  }
  return regex.test(value);
}

class Collector {
  readonly violations: CrdViolation[] = [];

  constructor(readonly release: CrdRuleRelease) {}

  /** Whether the rule arriving in `since` applies at this release. */
  has(since: string): boolean {
    return this.release.has(since);
  }

  add(path: Path, rule: string, message: string): void {
    this.violations.push({ path: formatPath(path), rule, message });
  }

  enumValue(path: Path, value: string | undefined, allowed: readonly string[]): void {
    if (value === undefined || allowed.includes(value)) return;
    this.add(
      path,
      'enum',
      `Unsupported value: "${value}": supported values: ${allowed.map((v) => `"${v}"`).join(', ')}`
    );
  }

  pattern(path: Path, value: string | undefined, pattern: string): void {
    if (value === undefined || patternMatches(pattern, value)) return;
    this.add(path, 'pattern', `should match '${pattern}'`);
  }

  range(path: Path, value: number | undefined, minimum?: number, maximum?: number): void {
    if (value === undefined) return;
    if (minimum !== undefined && value < minimum) {
      this.add(path, 'minimum', `should be greater than or equal to ${minimum}`);
    }
    if (maximum !== undefined && value > maximum) {
      this.add(path, 'maximum', `should be less than or equal to ${maximum}`);
    }
  }

  maxItems(path: Path, items: readonly unknown[] | undefined, maximum: number): void {
    if (items !== undefined && items.length > maximum) {
      this.add(path, 'max-items', `must have at most ${maximum} items (has ${items.length})`);
    }
  }

  /** Selector `tags` maps: at most 20 entries, no empty keys or values. */
  selectorTags(path: Path, tags: Readonly<Record<string, string>> | undefined): void {
    if (tags === undefined) return;
    const entries = Object.entries(tags);
    if (entries.length > MAX_SELECTOR_TAGS) {
      // The API server reports too many properties as a TooMany error ("items").
      this.add(
        path,
        'max-properties',
        `must have at most ${MAX_SELECTOR_TAGS} items (has ${entries.length})`
      );
    }
    if (entries.some(([key, value]) => key === '' || value === '')) {
      this.add(path, 'tags-not-empty', "empty tag keys or values aren't supported");
    }
  }
}

/**
 * `metadata.name` as the API server validates it for any custom resource (a DNS subdomain). No
 * name (only `generateName`, which the parse requires otherwise): the API server generates one.
 */
export function objectNameViolations(name: string | undefined): CrdViolation[] {
  if (name === undefined || name === '') return [];
  const message = objectNameProblem(name);
  return message === undefined ? [] : [{ path: 'metadata.name', rule: 'metadata-name', message }];
}

function has(value: unknown): boolean {
  return value !== undefined;
}

function checkRoleAndProfile(spec: EC2NodeClassSpec, out: Collector): void {
  if (has(spec.role) === has(spec.instanceProfile)) {
    out.add(
      ['spec'],
      'role-or-instance-profile',
      "must specify exactly one of ['role', 'instanceProfile']"
    );
  }
  if (spec.role === '') out.add(['spec', 'role'], 'not-empty', 'role cannot be empty');
  if (spec.instanceProfile === '') {
    out.add(['spec', 'instanceProfile'], 'not-empty', 'instanceProfile cannot be empty');
  }
}

function checkSubnetTerms(spec: EC2NodeClassSpec, out: Collector): void {
  const path = ['spec', 'subnetSelectorTerms'];
  const terms = spec.subnetSelectorTerms;
  if (terms.length === 0) out.add(path, 'not-empty', 'subnetSelectorTerms cannot be empty');
  out.maxItems(path, terms, MAX_SELECTOR_TERMS);
  terms.forEach((term, index) => {
    if (!has(term.tags) && !has(term.id)) {
      out.add(
        [...path, index],
        'term-has-field',
        "expected at least one, got none, ['tags', 'id']"
      );
    }
    out.pattern([...path, index, 'id'], term.id, 'subnet-[0-9a-z]+');
    out.selectorTags([...path, index, 'tags'], term.tags);
  });
  // `!self.all(...)`: the CRD rejects the list only when EVERY term mixes id and tags.
  if (terms.length > 0 && terms.every((term) => has(term.id) && has(term.tags))) {
    out.add(
      path,
      'id-exclusive',
      `'id' is mutually exclusive, cannot be set with a combination of other fields in ${out.has(SINCE.selectorMessagesReworded) ? 'a subnet selector term' : 'subnetSelectorTerms'}`
    );
  }
}

function checkSecurityGroupTerms(spec: EC2NodeClassSpec, out: Collector): void {
  const path = ['spec', 'securityGroupSelectorTerms'];
  const terms = spec.securityGroupSelectorTerms;
  if (terms.length === 0) out.add(path, 'not-empty', 'securityGroupSelectorTerms cannot be empty');
  out.maxItems(path, terms, MAX_SELECTOR_TERMS);
  terms.forEach((term, index) => {
    if (!has(term.tags) && !has(term.id) && !has(term.name)) {
      out.add(
        [...path, index],
        'term-has-field',
        "expected at least one, got none, ['tags', 'id', 'name']"
      );
    }
    out.pattern([...path, index, 'id'], term.id, 'sg-[0-9a-z]+');
    out.selectorTags([...path, index, 'tags'], term.tags);
  });
  // Both rules use `!self.all(...)`: they fire only when every term breaks them.
  const where = out.has(SINCE.selectorMessagesReworded)
    ? 'a security group selector term'
    : 'securityGroupSelectorTerms';
  if (terms.length > 0 && terms.every((t) => has(t.id) && (has(t.tags) || has(t.name)))) {
    out.add(
      path,
      'id-exclusive',
      `'id' is mutually exclusive, cannot be set with a combination of other fields in ${where}`
    );
  }
  if (terms.length > 0 && terms.every((t) => has(t.name) && (has(t.tags) || has(t.id)))) {
    out.add(
      path,
      'name-exclusive',
      `'name' is mutually exclusive, cannot be set with a combination of other fields in ${where}`
    );
  }
}

/** The alias families (`al2023`…) the release's CRD accepts. */
function aliasFamilies(out: Collector): string[] {
  return Object.keys(ALIAS_AMI_FAMILY).filter(
    (family) => family !== 'windows2025' || out.has(SINCE.windows2025)
  );
}

function checkAlias(path: Path, alias: string, out: Collector): void {
  if (alias.length > MAX_ALIAS_LENGTH) {
    out.add(path, 'max-length', `may not be longer than ${MAX_ALIAS_LENGTH}`);
  }
  if (!/^[a-zA-Z0-9]+@.+$/.test(alias)) {
    out.add(
      path,
      'alias-format',
      "'alias' is improperly formatted, must match the format 'family@version'"
    );
  }
  const { family, version } = splitAlias(alias);
  const families = aliasFamilies(out);
  if (!families.includes(family)) {
    out.add(
      path,
      'alias-family',
      `family is not supported, must be one of the following: ${families.map((f) => `'${f}'`).join(', ')}`
    );
  }
  if (family.startsWith('windows') && families.includes(family) && version !== 'latest') {
    out.add(path, 'windows-alias-latest', "windows families may only specify version 'latest'");
  }
}

function checkAmiTerms(spec: EC2NodeClassSpec, out: Collector): void {
  const path = ['spec', 'amiSelectorTerms'];
  const terms = spec.amiSelectorTerms;
  if (terms.length < 1) out.add(path, 'min-items', 'should have at least 1 items');
  out.maxItems(path, terms, MAX_SELECTOR_TERMS);
  terms.forEach((term, index) => {
    const termPath = [...path, index];
    // Before ssmParameter existed the API server pruned it, so it does not count.
    const ssm = out.has(SINCE.amiSsmParameter);
    if (
      ![term.tags, term.id, term.name, term.alias, ssm ? term.ssmParameter : undefined].some(has)
    ) {
      out.add(
        termPath,
        'term-has-field',
        `expected at least one, got none, ['tags', 'id', 'name', 'alias'${ssm ? ", 'ssmParameter'" : ''}]`
      );
    }
    if (has(term.id) && [term.alias, term.tags, term.name, term.owner].some(has)) {
      out.add(
        termPath,
        'id-exclusive',
        "'id' is mutually exclusive, cannot be set with a combination of other fields in amiSelectorTerms"
      );
    }
    if (has(term.alias) && [term.id, term.tags, term.name, term.owner].some(has)) {
      out.add(
        termPath,
        'alias-exclusive',
        "'alias' is mutually exclusive, cannot be set with a combination of other fields in amiSelectorTerms"
      );
    }
    if (term.alias !== undefined) checkAlias([...termPath, 'alias'], term.alias, out);
    out.pattern([...termPath, 'id'], term.id, 'ami-[0-9a-z]+');
    out.selectorTags([...termPath, 'tags'], term.tags);
  });
  if (terms.some((term) => has(term.alias)) && terms.length !== 1) {
    out.add(
      path,
      'alias-only-term',
      "'alias' is mutually exclusive, cannot be set with a combination of other amiSelectorTerms"
    );
  }
}

function checkAmiFamily(spec: EC2NodeClassSpec, out: Collector): void {
  out.enumValue(
    ['spec', 'amiFamily'],
    spec.amiFamily,
    AMI_FAMILIES.filter((family) => family !== 'Windows2025' || out.has(SINCE.windows2025))
  );
  const aliases = spec.amiSelectorTerms.flatMap((term) =>
    term.alias === undefined ? [] : [term.alias]
  );
  if (aliases.length === 0) {
    if (!has(spec.amiFamily)) {
      out.add(
        ['spec'],
        'ami-family-required',
        'must specify amiFamily if amiSelectorTerms does not contain an alias'
      );
    }
    return;
  }
  if (spec.amiFamily === undefined) return;
  // One CRD rule per alias family; the CEL compares the part before '@' case-sensitively.
  for (const [aliasFamily, amiFamily] of Object.entries(ALIAS_AMI_FAMILY)) {
    if (!aliasFamilies(out).includes(aliasFamily)) continue;
    const used = aliases.some((alias) => /^[^@]+/.exec(alias)?.[0] === aliasFamily);
    if (used && spec.amiFamily !== 'Custom' && spec.amiFamily !== amiFamily) {
      const article = /^[AEIOU]/.test(amiFamily) ? 'an' : 'a';
      out.add(
        ['spec', 'amiFamily'],
        `alias-compatible-${aliasFamily}`,
        `if set, amiFamily must be '${amiFamily}' or 'Custom' when using ${article} ${amiFamily} alias`
      );
    }
  }
}

function checkCapacityReservationTerms(spec: EC2NodeClassSpec, out: Collector): void {
  const terms = spec.capacityReservationSelectorTerms;
  if (terms === undefined || !out.has(SINCE.capacityReservationTerms)) return;
  const path = ['spec', 'capacityReservationSelectorTerms'];
  // Before instanceMatchCriteria existed the API server pruned it: it neither counts nor mixes.
  const matchCriteria = out.has(SINCE.instanceMatchCriteria);
  const criteriaOf = (t: (typeof terms)[number]) =>
    matchCriteria ? t.instanceMatchCriteria : undefined;
  out.maxItems(path, terms, MAX_SELECTOR_TERMS);
  terms.forEach((term, index) => {
    if (!has(term.tags) && !has(term.id) && !has(criteriaOf(term))) {
      out.add(
        [...path, index],
        'term-has-field',
        `expected at least one, got none, ['tags', 'id'${matchCriteria ? ", 'instanceMatchCriteria'" : ''}]`
      );
    }
    out.pattern([...path, index, 'id'], term.id, '^cr-[0-9a-z]+$');
    out.pattern([...path, index, 'ownerID'], term.ownerID, '^[0-9]{12}$');
    out.enumValue([...path, index, 'instanceMatchCriteria'], criteriaOf(term), [
      'open',
      'targeted',
    ]);
    out.selectorTags([...path, index, 'tags'], term.tags);
  });
  // `!self.all(...)`: only when every term mixes id with another field, and (vacuous truth) on an
  // empty list, which nothing else here refuses.
  const mixesId = (t: (typeof terms)[number]) =>
    has(t.id) && [t.tags, t.ownerID, criteriaOf(t)].some(has);
  if (terms.every(mixesId)) {
    out.add(
      path,
      'id-exclusive',
      `'id' is mutually exclusive, cannot be set along with ${matchCriteria ? 'other fields' : 'tags'} in a capacity reservation selector term`
    );
  }
}

function checkPlacementGroup(spec: EC2NodeClassSpec, out: Collector): void {
  const selector = spec.placementGroupSelector;
  if (selector === undefined || !out.has(SINCE.placementGroupSelector)) return;
  const path = ['spec', 'placementGroupSelector'];
  if (!has(selector.name) && !has(selector.id)) {
    out.add(path, 'has-field', "expected at least one, got none, ['name', 'id']");
  }
  if (has(selector.name) && has(selector.id)) {
    out.add(path, 'name-id-exclusive', "'name' and 'id' are mutually exclusive");
  }
  out.pattern([...path, 'id'], selector.id, '^pg-[0-9a-z]+$');
  if (selector.name === '')
    out.add([...path, 'name'], 'min-length', 'should be at least 1 chars long');
}

function checkTags(spec: EC2NodeClassSpec, out: Collector): void {
  // The restricted-key rules of this map are reported by tags-not-restricted.
  if (spec.tags !== undefined && Object.hasOwn(spec.tags, '')) {
    out.add(['spec', 'tags'], 'key-not-empty', "empty tag keys aren't supported");
  }
}

function checkBlockDeviceMappings(spec: EC2NodeClassSpec, out: Collector): void {
  const mappings = spec.blockDeviceMappings;
  if (mappings === undefined) return;
  const path = ['spec', 'blockDeviceMappings'];
  out.maxItems(path, mappings, MAX_BLOCK_DEVICE_MAPPINGS);
  if (mappings.filter((mapping) => mapping.rootVolume === true).length > 1) {
    out.add(path, 'one-root-volume', 'must have only one blockDeviceMappings with rootVolume');
  }
  mappings.forEach((mapping, index) => {
    const ebs = mapping.ebs;
    if (ebs === undefined) return;
    const ebsPath = [...path, index, 'ebs'];
    if (!has(ebs.snapshotID) && !has(ebs.volumeSize)) {
      out.add(ebsPath, 'size-or-snapshot', 'snapshotID or volumeSize must be defined');
    }
    const rate = out.has(SINCE.volumeInitializationRate) ? ebs.volumeInitializationRate : undefined;
    if (has(rate) && (ebs.snapshotID ?? '') === '') {
      out.add(
        ebsPath,
        'snapshot-for-initialization-rate',
        'snapshotID must be set when volumeInitializationRate is set'
      );
    }
    out.enumValue([...ebsPath, 'volumeType'], ebs.volumeType, VOLUME_TYPES);
    out.range([...ebsPath, 'volumeInitializationRate'], rate, 100, 300);
    if (typeof ebs.volumeSize === 'number') {
      // The CRD types volumeSize as a string with a unit; a bare YAML number is rejected.
      out.add(
        [...ebsPath, 'volumeSize'],
        'type',
        `must be of type string with a unit (Gi, G, Ti or T), e.g. "${ebs.volumeSize}Gi"`
      );
    } else {
      out.pattern([...ebsPath, 'volumeSize'], ebs.volumeSize, VOLUME_SIZE_PATTERN);
    }
  });
}

function checkMetadataOptions(spec: EC2NodeClassSpec, out: Collector): void {
  const options = spec.metadataOptions;
  if (options === undefined) return;
  const path = ['spec', 'metadataOptions'];
  out.enumValue([...path, 'httpEndpoint'], options.httpEndpoint, ['enabled', 'disabled']);
  out.enumValue([...path, 'httpProtocolIPv6'], options.httpProtocolIPv6, ['enabled', 'disabled']);
  out.range([...path, 'httpPutResponseHopLimit'], options.httpPutResponseHopLimit, 1, 64);
  out.enumValue([...path, 'httpTokens'], options.httpTokens, ['required', 'optional']);
}

function checkNetworkInterfaces(spec: EC2NodeClassSpec, out: Collector): void {
  const interfaces = spec.networkInterfaces;
  if (interfaces === undefined || !out.has(SINCE.networkInterfaces)) return;
  const path = ['spec', 'networkInterfaces'];
  out.maxItems(path, interfaces, MAX_NETWORK_INTERFACES);
  interfaces.forEach((nic, index) => {
    for (const field of ['networkCardIndex', 'deviceIndex', 'interfaceType'] as const) {
      if (!has(nic[field])) out.add([...path, index, field], 'required', 'Required value');
    }
    out.range([...path, index, 'networkCardIndex'], nic.networkCardIndex, 0);
    out.range([...path, index, 'deviceIndex'], nic.deviceIndex, 0);
    out.enumValue([...path, index, 'interfaceType'], nic.interfaceType, ['interface', 'efa-only']);
  });
  const primary = interfaces.some(
    (nic) =>
      nic.deviceIndex === 0 && nic.networkCardIndex === 0 && nic.interfaceType === 'interface'
  );
  if (interfaces.length > 0 && !primary) {
    out.add(
      path,
      'primary-interface',
      "networkInterfaces must include a primary interface with interfaceType='interface'"
    );
  }
  // Counted in maps: the CEL rule is quadratic, an unvalidated object may hold any number of items.
  const slots = new Map<string, number>();
  const efaPerCard = new Map<number | undefined, number>();
  for (const nic of interfaces) {
    const slot = `${nic.networkCardIndex}/${nic.deviceIndex}`;
    slots.set(slot, (slots.get(slot) ?? 0) + 1);
    if (nic.interfaceType === 'efa-only') {
      efaPerCard.set(nic.networkCardIndex, (efaPerCard.get(nic.networkCardIndex) ?? 0) + 1);
    }
  }
  const clash =
    [...slots.values()].some((count) => count > 1) ||
    [...efaPerCard.values()].some((count) => count > 1);
  if (clash) {
    out.add(
      path,
      'unique-interfaces',
      'networkInterfaces must not have duplicate networkCardIndex and deviceIndex pairs, and can have at most one efa device per network card'
    );
  }
}

/** An integer field of an untyped map (connectionTracking): checks its type, returns it. */
function integerField(
  record: Readonly<Record<string, unknown>>,
  key: string,
  path: Path,
  out: Collector
): number | undefined {
  const value = record[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    out.add([...path, key], 'type', 'must be of type integer');
    return undefined;
  }
  return value;
}

function checkConnectionTracking(spec: EC2NodeClassSpec, out: Collector): void {
  const tracking = spec.connectionTracking;
  if (tracking === undefined || !out.has(SINCE.connectionTracking)) return;
  const path = ['spec', 'connectionTracking'];
  const ranges: readonly [string, number, number][] = [
    ['tcpEstablishedTimeout', 60, 432000],
    ['udpStreamTimeout', 60, 180],
    ['udpTimeout', 30, 60],
  ];
  for (const [field, minimum, maximum] of ranges) {
    out.range([...path, field], integerField(tracking, field, path, out), minimum, maximum);
  }
  if (ranges.every(([field]) => tracking[field] === undefined)) {
    out.add(
      path,
      'at-least-one',
      'at least one of tcpEstablishedTimeout, udpStreamTimeout, or udpTimeout must be set'
    );
  }
}

function checkScalars(spec: EC2NodeClassSpec, out: Collector): void {
  if (out.has(SINCE.ipPrefixCount)) out.range(['spec', 'ipPrefixCount'], spec.ipPrefixCount, 0);
  out.enumValue(['spec', 'instanceStorePolicy'], spec.instanceStorePolicy, ['RAID0']);
  const nested = out.has(SINCE.cpuOptions) ? spec.cpuOptions?.nestedVirtualization : undefined;
  if (nested !== undefined) {
    if (typeof nested === 'string') {
      out.enumValue(['spec', 'cpuOptions', 'nestedVirtualization'], nested, [
        'enabled',
        'disabled',
      ]);
    } else {
      out.add(['spec', 'cpuOptions', 'nestedVirtualization'], 'type', 'must be of type string');
    }
  }
}

/**
 * Every CRD rule the spec breaks at `release` (default: the newest known release), in spec field
 * order. Empty when the spec is valid.
 */
export function crdViolations(
  spec: EC2NodeClassSpec,
  release: CrdRuleRelease = crdRuleRelease(undefined)
): CrdViolation[] {
  const out = new Collector(release);
  checkRoleAndProfile(spec, out);
  checkSubnetTerms(spec, out);
  checkSecurityGroupTerms(spec, out);
  checkCapacityReservationTerms(spec, out);
  checkPlacementGroup(spec, out);
  checkAmiTerms(spec, out);
  checkAmiFamily(spec, out);
  checkTags(spec, out);
  checkBlockDeviceMappings(spec, out);
  checkMetadataOptions(spec, out);
  checkNetworkInterfaces(spec, out);
  checkConnectionTracking(spec, out);
  checkScalars(spec, out);
  return out.violations;
}

// ---------------------------------------------------------------------------------------------
// NodePool (karpenter.sh/v1): the rules of Karpenter's NodePool CRD
// (pkg/apis/crds/karpenter.sh_nodepools.yaml), on a structurally parsed NodePool.

const LABEL_KEY_PATTERN =
  '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(\\/))?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$';
const LABEL_VALUE_PATTERN = '^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$';
const DURATION_OR_NEVER_PATTERN = '^(([0-9]+(s|m|h))+|Never)$';
// Before v1.4.0: the alternation is not anchored as a whole (a string that starts with a duration
// or ends with "Never" matches).
const LOOSE_DURATION_OR_NEVER_PATTERN = '^(([0-9]+(s|m|h))+)|(Never)$';
const DURATION_PATTERN = '^([0-9]+(s|m|h))+$';
const BUDGET_DURATION_PATTERN = '^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$';
const BUDGET_NODES_PATTERN = '^((100|[0-9]{1,2})%|[0-9]+)$';
const BUDGET_SCHEDULE_PATTERN =
  '^(@(annually|yearly|monthly|weekly|daily|midnight|hourly))|((.+)\\s(.+)\\s(.+)\\s(.+)\\s(.+))$';
const QUANTITY_PATTERN =
  '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$';
const REQUIREMENT_OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt'];
const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];
const CONSOLIDATION_POLICIES = ['WhenEmpty', 'WhenEmptyOrUnderutilized'];
const DISRUPTION_REASONS = ['Underutilized', 'Empty', 'Drifted'];
const MAX_REQUIREMENTS = 100;
const MAX_BUDGETS = 50;
const MAX_TEMPLATE_LABELS = 100;
const MAX_LABEL_KEY_LENGTH = 316;
const MAX_LABEL_VALUE_LENGTH = 63;
/** karpenter.sh keys a NodePool may use. */
const KARPENTER_SH_LABELS = ['karpenter.sh/capacity-type', 'karpenter.sh/nodepool'];
/** kubernetes.io keys a NodePool may use before v1.9.0 (the CRD's exception list). */
const KUBERNETES_IO_LABELS = [
  'beta.kubernetes.io/instance-type',
  'failure-domain.beta.kubernetes.io/region',
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/arch',
  'failure-domain.beta.kubernetes.io/zone',
  'topology.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'node.kubernetes.io/instance-type',
  'kubernetes.io/arch',
  'kubernetes.io/os',
  'node.kubernetes.io/windows-build',
];

const INT64_MAX = 2n ** 63n - 1n;

/**
 * CEL `int(value) >= 0` as the API server evaluates it: Go's strconv.ParseInt (an optional sign,
 * decimal digits, within int64; "-0" is 0). A value it cannot parse fails the rule.
 */
function nonNegativeGoInt(value: string): boolean {
  if (!/^[+-]?[0-9]+$/.test(value)) return false;
  const parsed = BigInt(value);
  return parsed >= 0n && parsed <= INT64_MAX;
}

/** The CRD's restricted-label rules for a requirement or template label key. */
function restrictedLabel(path: Path, key: string, out: Collector): void {
  // CEL `key.find("^([^/]+)")`: the prefix before the first '/', or the whole key.
  const domain = /^([^/]+)/.exec(key)?.[1] ?? '';
  if (!out.has(SINCE.kubernetesLabelDomainsOpen)) {
    const kubernetesIo =
      KUBERNETES_IO_LABELS.includes(key) ||
      domain.endsWith('node.kubernetes.io') ||
      domain.endsWith('node-restriction.kubernetes.io') ||
      !domain.endsWith('kubernetes.io');
    if (!kubernetesIo) {
      out.add(path, 'restricted-domain', 'label domain "kubernetes.io" is restricted');
    }
    if (!domain.endsWith('kops.k8s.io') && domain.endsWith('k8s.io')) {
      out.add(path, 'restricted-domain-k8s-io', 'label domain "k8s.io" is restricted');
    }
  }
  if (!KARPENTER_SH_LABELS.includes(key) && domain.endsWith('karpenter.sh')) {
    out.add(path, 'restricted-domain', 'label domain "karpenter.sh" is restricted');
  }
  if (key === 'karpenter.sh/nodepool') {
    out.add(path, 'restricted-label', 'label "karpenter.sh/nodepool" is restricted');
  }
  if (key === 'kubernetes.io/hostname') {
    out.add(path, 'restricted-label', 'label "kubernetes.io/hostname" is restricted');
  }
  if (
    !allowedKarpenterAwsLabels(out.release).includes(key) &&
    domain.endsWith('karpenter.k8s.aws')
  ) {
    out.add(path, 'restricted-domain', 'label domain "karpenter.k8s.aws" is restricted');
  }
}

function labelValue(path: Path, value: string, out: Collector): void {
  if (value.length > MAX_LABEL_VALUE_LENGTH) {
    out.add(path, 'max-length', `may not be longer than ${MAX_LABEL_VALUE_LENGTH}`);
  }
  out.pattern(path, value, LABEL_VALUE_PATTERN);
}

function checkRequirements(pool: NodePool, out: Collector): void {
  const path = ['spec', 'template', 'spec', 'requirements'];
  const requirements = pool.spec.template.spec.requirements;
  const bounds = out.has(SINCE.boundOperatorsGteLte);
  const boundOperators = bounds ? ['Gt', 'Lt', 'Gte', 'Lte'] : ['Gt', 'Lt'];
  const operators = bounds ? ['Gte', 'Lte', ...REQUIREMENT_OPERATORS] : REQUIREMENT_OPERATORS;
  out.maxItems(path, requirements, MAX_REQUIREMENTS);
  requirements.forEach((requirement, index) => {
    const itemPath = [...path, index];
    const keyPath = [...itemPath, 'key'];
    if (requirement.key.length > MAX_LABEL_KEY_LENGTH) {
      out.add(keyPath, 'max-length', `may not be longer than ${MAX_LABEL_KEY_LENGTH}`);
    }
    out.pattern(keyPath, requirement.key, LABEL_KEY_PATTERN);
    restrictedLabel(keyPath, requirement.key, out);
    out.enumValue([...itemPath, 'operator'], requirement.operator, operators);
    out.range([...itemPath, 'minValues'], requirement.minValues, 1, 50);
    // The CRD puts maxLength and pattern on the `values` array, not its items: the API server
    // applies string validations to strings only, so any value is admitted.
    const values = requirement.values ?? [];
    // The list's CEL rules, reported on the requirement that breaks them. An absent `values` makes
    // the CEL `x.values.size()` fail, which the API server rejects like a false rule.
    if (requirement.operator === 'In' && values.length === 0) {
      out.add(
        itemPath,
        'in-has-values',
        "requirements with operator 'In' must have a value defined"
      );
    }
    if (
      boundOperators.includes(requirement.operator) &&
      !(values.length === 1 && nonNegativeGoInt(values[0] ?? ''))
    ) {
      out.add(
        itemPath,
        'single-integer-value',
        bounds
          ? "requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value"
          : "requirements operator 'Gt' or 'Lt' must have a single positive integer value"
      );
    }
    if (
      requirement.operator === 'In' &&
      requirement.minValues !== undefined &&
      values.length > 0 &&
      values.length < requirement.minValues
    ) {
      out.add(
        itemPath,
        'min-values',
        "requirements with 'minValues' must have at least that many values specified in the 'values' field"
      );
    }
  });
}

function checkTemplateMetadata(pool: NodePool, out: Collector): void {
  const labels = pool.spec.template.metadata?.labels;
  if (labels === undefined) return;
  const path = ['spec', 'template', 'metadata', 'labels'];
  const entries = Object.entries(labels);
  if (entries.length > MAX_TEMPLATE_LABELS) {
    out.add(
      path,
      'max-properties',
      `must have at most ${MAX_TEMPLATE_LABELS} items (has ${entries.length})`
    );
  }
  for (const [key, value] of entries) {
    restrictedLabel([...path, key], key, out);
    labelValue([...path, key], value, out);
  }
}

function checkTaints(pool: NodePool, out: Collector): void {
  for (const field of ['taints', 'startupTaints'] as const) {
    const path = ['spec', 'template', 'spec', field];
    pool.spec.template.spec[field]?.forEach((taint, index) => {
      const keyPath = [...path, index, 'key'];
      if (taint.key === '') out.add(keyPath, 'min-length', 'should be at least 1 chars long');
      else out.pattern(keyPath, taint.key, LABEL_KEY_PATTERN);
      out.pattern([...path, index, 'value'], taint.value, LABEL_KEY_PATTERN);
      out.enumValue([...path, index, 'effect'], taint.effect, TAINT_EFFECTS);
      const { timeAdded } = taint;
      if (timeAdded !== undefined && !matchesFormat('date-time', timeAdded)) {
        out.add(
          [...path, index, 'timeAdded'],
          'format',
          `must be of type date-time: ${JSON.stringify(timeAdded)}`
        );
      }
    });
  }
}

function checkTemplateSpec(pool: NodePool, out: Collector): void {
  const path = ['spec', 'template', 'spec'];
  const spec = pool.spec.template.spec;
  const ref = spec.nodeClassRef;
  for (const field of ['group', 'kind', 'name'] as const) {
    if (ref[field] === '' && out.has(SINCE.nodeClassRefNotEmpty)) {
      out.add([...path, 'nodeClassRef', field], 'not-empty', `${field} may not be empty`);
    }
  }
  out.pattern([...path, 'nodeClassRef', 'group'], ref.group, '^[^/]*$');
  out.pattern([...path, 'expireAfter'], spec.expireAfter, durationOrNever(out));
  out.pattern([...path, 'terminationGracePeriod'], spec.terminationGracePeriod, DURATION_PATTERN);
}

function checkDisruption(pool: NodePool, out: Collector): void {
  const disruption = pool.spec.disruption;
  if (disruption === undefined) return;
  const path = ['spec', 'disruption'];
  // Defaulted only when `disruption` itself is absent.
  if (disruption.consolidateAfter === undefined) {
    out.add([...path, 'consolidateAfter'], 'required', 'Required value');
  }
  out.pattern([...path, 'consolidateAfter'], disruption.consolidateAfter, durationOrNever(out));
  out.enumValue(
    [...path, 'consolidationPolicy'],
    disruption.consolidationPolicy,
    out.has(SINCE.balancedConsolidation)
      ? [...CONSOLIDATION_POLICIES, 'Balanced']
      : CONSOLIDATION_POLICIES
  );
  const budgets = disruption.budgets;
  if (budgets === undefined) return;
  out.maxItems([...path, 'budgets'], budgets, MAX_BUDGETS);
  budgets.forEach((budget, index) => {
    const budgetPath = [...path, 'budgets', index];
    if (typeof budget.nodes === 'number') {
      out.add(
        [...budgetPath, 'nodes'],
        'type',
        `must be of type string: quote it ("${budget.nodes}") or use a percentage such as "10%"`
      );
    } else {
      out.pattern([...budgetPath, 'nodes'], budget.nodes, BUDGET_NODES_PATTERN);
    }
    out.pattern([...budgetPath, 'schedule'], budget.schedule, BUDGET_SCHEDULE_PATTERN);
    out.pattern([...budgetPath, 'duration'], budget.duration, BUDGET_DURATION_PATTERN);
    if ((budget.schedule === undefined) !== (budget.duration === undefined)) {
      out.add(budgetPath, 'schedule-with-duration', "'schedule' must be set with 'duration'");
    }
    const reasons = budget.reasons;
    if (reasons === undefined) return;
    if (out.has(SINCE.budgetReasonsMaxItems)) {
      out.maxItems([...budgetPath, 'reasons'], reasons, MAX_BUDGETS);
    }
    reasons.forEach((reason, reasonIndex) => {
      out.enumValue([...budgetPath, 'reasons', reasonIndex], reason, DISRUPTION_REASONS);
    });
    // A list-type set (duplicates rejected) only from v1.13.0; an atomic list before.
    const duplicate = reasons.find((reason, i) => reasons.indexOf(reason) !== i);
    if (duplicate !== undefined && out.has(SINCE.budgetReasonsUnique)) {
      out.add([...budgetPath, 'reasons'], 'unique', `Duplicate value: "${duplicate}"`);
    }
  });
}

function checkLimitsAndWeight(pool: NodePool, out: Collector): void {
  const spec = pool.spec;
  for (const [resource, value] of Object.entries(spec.limits ?? {})) {
    const path = ['spec', 'limits', resource];
    if (typeof value === 'number') {
      if (!Number.isInteger(value))
        out.add(path, 'type', 'must be an integer or a quantity string');
    } else {
      out.pattern(path, value, QUANTITY_PATTERN);
    }
  }
  out.range(['spec', 'weight'], spec.weight, 1, 100);
  // Before replicas existed the API server pruned it (crd-fields reports it): no static rules.
  if (!out.has(SINCE.staticNodePools)) return;
  out.range(['spec', 'replicas'], spec.replicas, 0);
  if (spec.replicas !== undefined) {
    const limitKeys = Object.keys(spec.limits ?? {});
    if (limitKeys.some((key) => key !== 'nodes')) {
      out.add(['spec'], 'static-limits', "only 'limits.nodes' is supported on static NodePools");
    }
    if (spec.weight !== undefined) {
      out.add(['spec'], 'static-weight', "'weight' is not supported on static NodePools");
    }
  }
}

/** The expireAfter/consolidateAfter pattern of the release. */
function durationOrNever(out: Collector): string {
  return out.has(SINCE.anchoredDurations)
    ? DURATION_OR_NEVER_PATTERN
    : LOOSE_DURATION_OR_NEVER_PATTERN;
}

/**
 * Every NodePool CRD rule the object breaks at `release` (default: the newest known release), in
 * spec field order. Empty when it is valid.
 */
export function nodePoolCrdViolations(
  pool: NodePool,
  release: CrdRuleRelease = crdRuleRelease(undefined)
): CrdViolation[] {
  const out = new Collector(release);
  checkTemplateMetadata(pool, out);
  checkRequirements(pool, out);
  checkTaints(pool, out);
  checkTemplateSpec(pool, out);
  checkDisruption(pool, out);
  checkLimitsAndWeight(pool, out);
  return out.violations;
}

// ---------------------------------------------------------------------------------------------
// spec.kubelet as the EC2NodeClass CRD of every release v1.0.0 … v1.14.1 types and validates it
// (Karpenter's main branch after v1.14.1 makes it an open map; kubelet-config-valid picks the set).

/** The kubelet fields the release CRDs declare; any other key is an unknown field. */
export const KUBELET_CRD_FIELDS = [
  'clusterDNS',
  'cpuCFSQuota',
  'evictionHard',
  'evictionMaxPodGracePeriod',
  'evictionSoft',
  'evictionSoftGracePeriod',
  'imageGCHighThresholdPercent',
  'imageGCLowThresholdPercent',
  'kubeReserved',
  'maxPods',
  'podsPerCore',
  'systemReserved',
] as const;

/**
 * The eviction signals and reservable resources the kubelet's maps take: the CRD's key lists, and
 * the same lists Karpenter's nodeclass controller checks once the CRD leaves spec.kubelet open.
 */
export const KUBELET_EVICTION_SIGNALS: readonly string[] = [
  'memory.available',
  'nodefs.available',
  'nodefs.inodesFree',
  'imagefs.available',
  'imagefs.inodesFree',
  'pid.available',
];
export const KUBELET_RESERVED_RESOURCES: readonly string[] = [
  'cpu',
  'memory',
  'ephemeral-storage',
  'pid',
];
// Verbatim from the CRD, including its empty alternative (an empty threshold is admitted).
const EVICTION_THRESHOLD_PATTERN =
  '^((\\d{1,2}(\\.\\d{1,2})?|100(\\.0{1,2})?)%||(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?)$';

/** The CRD's `self.all(x, x in [...])` key message: `['a','b']` without spaces. */
function keyList(keys: readonly string[]): string {
  return `[${keys.map((key) => `'${key}'`).join(',')}]`;
}

function isPlainObject(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A typed string map of the kubelet; returns it when its values are all strings. */
function kubeletStringMap(
  kubelet: Readonly<Record<string, unknown>>,
  field: string,
  out: Collector
): Readonly<Record<string, string>> | undefined {
  const value = kubelet[field];
  if (value === undefined) return undefined;
  const path = ['spec', 'kubelet', field];
  if (!isPlainObject(value)) {
    out.add(path, 'type', 'must be of type object');
    return undefined;
  }
  let typed = true;
  for (const [key, item] of Object.entries(value)) {
    if (typeof item !== 'string') {
      out.add([...path, key], 'type', 'must be of type string');
      typed = false;
    }
  }
  return typed ? (value as Readonly<Record<string, string>>) : undefined;
}

function kubeletInteger(
  kubelet: Readonly<Record<string, unknown>>,
  field: string,
  out: Collector,
  minimum?: number,
  maximum?: number
): number | undefined {
  const value = kubelet[field];
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    out.add(['spec', 'kubelet', field], 'type', 'must be of type integer');
    return undefined;
  }
  out.range(['spec', 'kubelet', field], value, minimum, maximum);
  return value;
}

/**
 * Every rule of the release CRDs' `spec.kubelet` schema the map breaks: unknown fields (rule
 * `unknown-field`), types, bounds, patterns and the CEL rules, with the CRD's messages.
 */
export function kubeletCrdViolations(kubelet: Readonly<Record<string, unknown>>): CrdViolation[] {
  const out = new Collector(crdRuleRelease(undefined));
  const known: readonly string[] = KUBELET_CRD_FIELDS;
  for (const key of Object.keys(kubelet)) {
    if (!known.includes(key)) {
      out.add(['spec', 'kubelet', key], 'unknown-field', 'not a field of spec.kubelet');
    }
  }
  const dns = kubelet.clusterDNS;
  if (dns !== undefined) {
    if (!Array.isArray(dns))
      out.add(['spec', 'kubelet', 'clusterDNS'], 'type', 'must be of type array');
    else {
      dns.forEach((ip, index) => {
        if (typeof ip !== 'string') {
          out.add(['spec', 'kubelet', 'clusterDNS', index], 'type', 'must be of type string');
        }
      });
    }
  }
  if (kubelet.cpuCFSQuota !== undefined && typeof kubelet.cpuCFSQuota !== 'boolean') {
    out.add(['spec', 'kubelet', 'cpuCFSQuota'], 'type', 'must be of type boolean');
  }
  const maps: Record<string, Readonly<Record<string, string>> | undefined> = {};
  for (const field of ['evictionHard', 'evictionSoft', 'evictionSoftGracePeriod']) {
    const map = kubeletStringMap(kubelet, field, out);
    maps[field] = map;
    if (map === undefined) continue;
    if (!Object.keys(map).every((key) => KUBELET_EVICTION_SIGNALS.includes(key))) {
      out.add(
        ['spec', 'kubelet', field],
        'eviction-signal',
        `valid keys for ${field} are ${keyList(KUBELET_EVICTION_SIGNALS)}`
      );
    }
    if (field === 'evictionSoftGracePeriod') continue;
    for (const [key, value] of Object.entries(map)) {
      out.pattern(['spec', 'kubelet', field, key], value, EVICTION_THRESHOLD_PATTERN);
    }
  }
  kubeletInteger(kubelet, 'evictionMaxPodGracePeriod', out);
  const high = kubeletInteger(kubelet, 'imageGCHighThresholdPercent', out, 0, 100);
  const low = kubeletInteger(kubelet, 'imageGCLowThresholdPercent', out, 0, 100);
  for (const field of ['kubeReserved', 'systemReserved']) {
    const map = kubeletStringMap(kubelet, field, out);
    if (map === undefined) continue;
    if (!Object.keys(map).every((key) => KUBELET_RESERVED_RESOURCES.includes(key))) {
      out.add(
        ['spec', 'kubelet', field],
        'reservable-resource',
        `valid keys for ${field} are ${keyList(KUBELET_RESERVED_RESOURCES)}`
      );
    }
    if (Object.values(map).some((value) => value.startsWith('-'))) {
      out.add(
        ['spec', 'kubelet', field],
        'not-negative',
        `${field} value cannot be a negative resource quantity`
      );
    }
    for (const [key, value] of Object.entries(map)) {
      out.pattern(['spec', 'kubelet', field, key], value, QUANTITY_PATTERN);
    }
  }
  kubeletInteger(kubelet, 'maxPods', out, 0);
  kubeletInteger(kubelet, 'podsPerCore', out, 0);
  // The kubelet-level CEL rules.
  if (high !== undefined && low !== undefined && high <= low) {
    out.add(
      ['spec', 'kubelet'],
      'image-gc-thresholds',
      'imageGCHighThresholdPercent must be greater than imageGCLowThresholdPercent'
    );
  }
  const soft = maps.evictionSoft;
  const grace = maps.evictionSoftGracePeriod;
  // A missing counterpart map makes the CEL `e in self.…` fail, which rejects like a false rule.
  if (soft !== undefined && Object.keys(soft).some((key) => !grace || !Object.hasOwn(grace, key))) {
    out.add(
      ['spec', 'kubelet'],
      'eviction-soft-grace-period',
      'evictionSoft OwnerKey does not have a matching evictionSoftGracePeriod'
    );
  }
  if (grace !== undefined && Object.keys(grace).some((key) => !soft || !Object.hasOwn(soft, key))) {
    out.add(
      ['spec', 'kubelet'],
      'eviction-grace-period-soft',
      'evictionSoftGracePeriod OwnerKey does not have a matching evictionSoft'
    );
  }
  return out.violations;
}
