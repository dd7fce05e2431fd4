import { ALIAS_AMI_FAMILY, AMI_FAMILIES, splitAlias } from './ami-family.js';
import type { EC2NodeClassSpec } from './schema.js';
import { formatPath } from './schema.js';

// The EC2NodeClass CRD's validation rules (CEL and OpenAPI markers) of Karpenter v1.14.1, evaluated
// on a structurally parsed spec. The API server enforces them at apply time; objects applied with
// validation bypassed, or manifests not yet applied (CI), can still break them. Messages are
// Karpenter's own where the CRD gives one, Kubernetes' OpenAPI wording otherwise.

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
const EVICTION_SIGNALS = [
  'memory.available',
  'nodefs.available',
  'nodefs.inodesFree',
  'imagefs.available',
  'imagefs.inodesFree',
  'pid.available',
];
const RESERVED_RESOURCES = ['cpu', 'memory', 'ephemeral-storage', 'pid'];

function quoteList(values: readonly string[]): string {
  return `[${values.map((value) => `'${value}'`).join(',')}]`;
}

class Collector {
  readonly violations: CrdViolation[] = [];

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
    if (value === undefined || new RegExp(pattern).test(value)) return;
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
      this.add(path, 'max-properties', `must have at most ${MAX_SELECTOR_TAGS} properties`);
    }
    if (entries.some(([key, value]) => key === '' || value === '')) {
      this.add(path, 'tags-not-empty', "empty tag keys or values aren't supported");
    }
  }
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
      "'id' is mutually exclusive, cannot be set with a combination of other fields in a subnet selector term"
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
  if (terms.length > 0 && terms.every((t) => has(t.id) && (has(t.tags) || has(t.name)))) {
    out.add(
      path,
      'id-exclusive',
      "'id' is mutually exclusive, cannot be set with a combination of other fields in a security group selector term"
    );
  }
  if (terms.length > 0 && terms.every((t) => has(t.name) && (has(t.tags) || has(t.id)))) {
    out.add(
      path,
      'name-exclusive',
      "'name' is mutually exclusive, cannot be set with a combination of other fields in a security group selector term"
    );
  }
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
  const families = Object.keys(ALIAS_AMI_FAMILY);
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
    if (![term.tags, term.id, term.name, term.alias, term.ssmParameter].some(has)) {
      out.add(
        termPath,
        'term-has-field',
        "expected at least one, got none, ['tags', 'id', 'name', 'alias', 'ssmParameter']"
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
  out.enumValue(['spec', 'amiFamily'], spec.amiFamily, AMI_FAMILIES);
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
  if (terms === undefined) return;
  const path = ['spec', 'capacityReservationSelectorTerms'];
  out.maxItems(path, terms, MAX_SELECTOR_TERMS);
  terms.forEach((term, index) => {
    if (!has(term.tags) && !has(term.id) && !has(term.instanceMatchCriteria)) {
      out.add(
        [...path, index],
        'term-has-field',
        "expected at least one, got none, ['tags', 'id', 'instanceMatchCriteria']"
      );
    }
    out.pattern([...path, index, 'id'], term.id, '^cr-[0-9a-z]+$');
    out.pattern([...path, index, 'ownerID'], term.ownerID, '^[0-9]{12}$');
    out.enumValue([...path, index, 'instanceMatchCriteria'], term.instanceMatchCriteria, [
      'open',
      'targeted',
    ]);
    out.selectorTags([...path, index, 'tags'], term.tags);
  });
  // `!self.all(...)` as for subnets: only when every term mixes id with another field.
  const mixesId = (t: (typeof terms)[number]) =>
    has(t.id) && [t.tags, t.ownerID, t.instanceMatchCriteria].some(has);
  if (terms.length > 0 && terms.every(mixesId)) {
    out.add(
      path,
      'id-exclusive',
      "'id' is mutually exclusive, cannot be set along with other fields in a capacity reservation selector term"
    );
  }
}

function checkPlacementGroup(spec: EC2NodeClassSpec, out: Collector): void {
  const selector = spec.placementGroupSelector;
  if (selector === undefined) return;
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
    if (has(ebs.volumeInitializationRate) && (ebs.snapshotID ?? '') === '') {
      out.add(
        ebsPath,
        'snapshot-for-initialization-rate',
        'snapshotID must be set when volumeInitializationRate is set'
      );
    }
    out.enumValue([...ebsPath, 'volumeType'], ebs.volumeType, VOLUME_TYPES);
    out.range([...ebsPath, 'volumeInitializationRate'], ebs.volumeInitializationRate, 100, 300);
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
  if (interfaces === undefined) return;
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

/** An integer field of an untyped map (kubelet, connectionTracking): checks its type, returns it. */
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

/** A string map field of an untyped map: checks its type, returns its keys and values. */
function stringMapField(
  record: Readonly<Record<string, unknown>>,
  key: string,
  path: Path,
  out: Collector
): Record<string, string> | undefined {
  const value = record[key];
  if (value === undefined) return undefined;
  const isMap = typeof value === 'object' && value !== null && !Array.isArray(value);
  if (!isMap || Object.values(value).some((entry) => typeof entry !== 'string')) {
    out.add([...path, key], 'type', 'must be a map of strings');
    return undefined;
  }
  return value as Record<string, string>;
}

function checkConnectionTracking(spec: EC2NodeClassSpec, out: Collector): void {
  const tracking = spec.connectionTracking;
  if (tracking === undefined) return;
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

function checkKubelet(spec: EC2NodeClassSpec, out: Collector): void {
  const kubelet = spec.kubelet;
  if (kubelet === undefined) return;
  const path = ['spec', 'kubelet'];
  const high = integerField(kubelet, 'imageGCHighThresholdPercent', path, out);
  const low = integerField(kubelet, 'imageGCLowThresholdPercent', path, out);
  out.range([...path, 'imageGCHighThresholdPercent'], high, 0, 100);
  out.range([...path, 'imageGCLowThresholdPercent'], low, 0, 100);
  if (high !== undefined && low !== undefined && high <= low) {
    out.add(
      path,
      'image-gc-thresholds',
      'imageGCHighThresholdPercent must be greater than imageGCLowThresholdPercent'
    );
  }
  out.range([...path, 'maxPods'], integerField(kubelet, 'maxPods', path, out), 0);
  out.range([...path, 'podsPerCore'], integerField(kubelet, 'podsPerCore', path, out), 0);
  for (const field of ['systemReserved', 'kubeReserved']) {
    const reserved = stringMapField(kubelet, field, path, out);
    if (reserved === undefined) continue;
    if (Object.keys(reserved).some((key) => !RESERVED_RESOURCES.includes(key))) {
      out.add(
        [...path, field],
        'keys',
        `valid keys for ${field} are ${quoteList(RESERVED_RESOURCES)}`
      );
    }
    if (Object.values(reserved).some((value) => value.startsWith('-'))) {
      out.add(
        [...path, field],
        'not-negative',
        `${field} value cannot be a negative resource quantity`
      );
    }
  }
  const eviction: Record<string, Record<string, string> | undefined> = {};
  for (const field of ['evictionHard', 'evictionSoft', 'evictionSoftGracePeriod']) {
    const signals = stringMapField(kubelet, field, path, out);
    eviction[field] = signals;
    if (signals && Object.keys(signals).some((key) => !EVICTION_SIGNALS.includes(key))) {
      out.add(
        [...path, field],
        'keys',
        `valid keys for ${field} are ${quoteList(EVICTION_SIGNALS)}`
      );
    }
  }
  const soft = eviction.evictionSoft;
  const grace = eviction.evictionSoftGracePeriod;
  if (soft && Object.keys(soft).some((key) => !grace || !Object.hasOwn(grace, key))) {
    out.add(
      path,
      'eviction-soft-grace-period',
      'evictionSoft OwnerKey does not have a matching evictionSoftGracePeriod'
    );
  }
  if (grace && Object.keys(grace).some((key) => !soft || !Object.hasOwn(soft, key))) {
    out.add(
      path,
      'eviction-grace-period-soft',
      'evictionSoftGracePeriod OwnerKey does not have a matching evictionSoft'
    );
  }
}

function checkScalars(spec: EC2NodeClassSpec, out: Collector): void {
  out.range(['spec', 'ipPrefixCount'], spec.ipPrefixCount, 0);
  out.enumValue(['spec', 'instanceStorePolicy'], spec.instanceStorePolicy, ['RAID0']);
  const nested = spec.cpuOptions?.nestedVirtualization;
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

/** Every CRD rule the spec breaks, in spec field order. Empty when the spec is valid. */
export function crdViolations(spec: EC2NodeClassSpec): CrdViolation[] {
  const out = new Collector();
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
  checkKubelet(spec, out);
  checkScalars(spec, out);
  return out.violations;
}
