// One descriptor per EC2 list fact: the SDK command and its paging, the SDK→core translation, the
// IAM action, the world-file item schema and its replay matcher (keyed facts, read by name, are in
// keyed-fact-descriptors.ts). The live readers, the declared actions, the snapshot recorder, the
// world schema, the world replay and the bench's emulated SDK (bench/world-sdk.ts) are built from
// the tables. Adding an EC2, SSM or IAM fact: its core type, port method and SDK translation
// (sdk-shapes.ts), one entry here or there, its sharing entry (app/fact-sharing.ts, which builds the
// memo; it does not compile without one), then the collection and checks that use it. A fact of
// another service also needs its client in the readers, the recorder and the bench.
// `AWS_FACT_ACTIONS` covers every port method.
import {
  type _InstanceType,
  DescribeCapacityReservationsCommand,
  type DescribeCapacityReservationsCommandInput,
  type DescribeCapacityReservationsCommandOutput,
  DescribeImagesCommand,
  type DescribeImagesCommandInput,
  type DescribeImagesCommandOutput,
  DescribeInstanceTypeOfferingsCommand,
  type DescribeInstanceTypeOfferingsCommandOutput,
  DescribeInstanceTypesCommand,
  type DescribeInstanceTypesCommandOutput,
  DescribeSecurityGroupsCommand,
  type DescribeSecurityGroupsCommandInput,
  type DescribeSecurityGroupsCommandOutput,
  DescribeSubnetsCommand,
  type DescribeSubnetsCommandInput,
  type DescribeSubnetsCommandOutput,
  type Filter,
  type LocationType,
} from '@aws-sdk/client-ec2';
import * as z from 'zod';
import { imageMatchesQuery } from '../../core/ami/queries.js';
import type { InstanceTypeInfo, InstanceTypeOffering } from '../../core/facts/aws.js';
import type { Ec2Filter, FilterQuery, ImageQuery } from '../../core/facts/queries.js';
import type { AwsFactsPort } from '../../core/ports/aws-facts.js';
import { capacityReservationMatchesQuery } from '../../core/selectors/capacity-reservations.js';
import {
  INSTANCE_TYPE_OFFERINGS_LOCATION,
  INSTANCE_TYPES_QUERY,
  instanceTypeMatchesQuery,
} from '../../core/selectors/instance-types.js';
import { securityGroupMatchesQuery } from '../../core/selectors/security-groups.js';
import { subnetMatchesQuery } from '../../core/selectors/subnets.js';
import { EBS_ENCRYPTION_DEFAULTS } from './ebs-encryption-defaults.js';
import {
  type AnyKeyedFact,
  type BatchMethodOf,
  KEYED_FACTS,
  KEYED_KEYS,
  type KeyedFacts,
  type KeyedKey,
} from './keyed-fact-descriptors.js';
import {
  capacityReservationFromSdk,
  imageFromSdk,
  instanceTypeFromSdk,
  instanceTypeOfferingFromSdk,
  type SdkInstanceTypeInfo,
  securityGroupFromSdk,
  subnetFromSdk,
} from './sdk-shapes.js';

/** Page sizes Karpenter uses (https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/providers/). */
const IMAGES_PAGE_SIZE = 1000;
const SUBNETS_PAGE_SIZE = 500;
const SECURITY_GROUPS_PAGE_SIZE = 500;
const CAPACITY_RESERVATIONS_PAGE_SIZE = 1000;

/** What a replayed query is matched with: the world's account (`self` owner) and the scan clock. */
export interface ReplayContext {
  readonly accountId: string;
  readonly now: Date;
}

/**
 * A filtered EC2 Describe* list, read page by page (`NextToken`). Method syntax on purpose: any
 * entry is then an `AnyEc2ListFact`, so the builders below can walk the table.
 */
export interface Ec2ListFact<Method extends string, Query, Item, WorldItem extends z.ZodType> {
  /** The AwsFactsPort method that answers it. */
  readonly method: Method;
  /** The IAM action the read needs (also the source named by `SourceUnavailableError`). */
  readonly action: string;
  /** The SDK command of one page; `token` is undefined for the first. */
  command(query: Query, token: string | undefined): object;
  /** True for this fact's SDK commands (the recorder sees every command a sender passes). */
  isCommand(command: unknown): boolean;
  /** One page's SDK items (as the SDK returns them: what a world file records) and next token. */
  page(output: unknown): { readonly items: readonly object[]; readonly nextToken?: string };
  /** The query a command of this fact asks (the inverse of `command`; the bench answers it). */
  queryOf(command: unknown): object;
  /** The SDK output of one page of recorded items (the inverse of `page`). */
  output(items: readonly object[], nextToken: string | undefined): object;
  /** The id a recorded item is kept under (one record per resource). */
  recordId(item: object): string | undefined;
  /** An item of `page` or of the world section → core fact. */
  fromSdk(item: object): Item;
  /** Schema of one recorded item in the world file's `ec2` section. */
  readonly worldItem: WorldItem;
  /** The live API's filter semantics, for replay (core's matcher, not a second copy). */
  matches(item: Item, query: Query, context: ReplayContext): boolean;
}

/** Any entry of the table, as the generic builders see it. */
export type AnyEc2ListFact = Ec2ListFact<string, never, unknown, z.ZodType>;

/**
 * Types one entry: the SDK input and output of the command tie `request` to `items`, and the
 * world item schema to `fromSdk`. The descriptor keeps only what its builders need.
 */
function ec2ListFact<
  const Method extends string,
  Query,
  Input,
  Output extends { readonly NextToken?: string | undefined },
  const ListKey extends keyof Output & string,
  Shape extends object,
  SdkItem extends Shape,
  Item,
  WorldItem extends z.ZodType<Shape>,
>(spec: {
  readonly method: Method;
  readonly action: string;
  readonly Command: new (input: NoInfer<Input>) => { readonly input: Input };
  readonly request: (query: Query, token: string | undefined) => Input;
  readonly query: (input: NoInfer<Input>) => NoInfer<Query>;
  /** The output field holding a page's items. */
  readonly list: ListKey;
  readonly items: (output: Output) => readonly SdkItem[] | undefined;
  readonly recordId: (item: SdkItem) => string | undefined;
  /** Takes what both the SDK and the world schema give (sdk-shapes.ts). */
  readonly fromSdk: (item: Shape) => Item;
  readonly worldItem: WorldItem;
  readonly matches: (item: Item, query: Query, context: ReplayContext) => boolean;
}): Ec2ListFact<Method, Query, Item, WorldItem> {
  const { Command } = spec;
  return {
    method: spec.method,
    action: spec.action,
    command: (query, token) => new Command(spec.request(query, token)),
    isCommand: (command) => command instanceof Command,
    page(output) {
      const typed = output as Output;
      const nextToken = typed.NextToken;
      return { items: spec.items(typed) ?? [], ...(nextToken === undefined ? {} : { nextToken }) };
    },
    queryOf: (command) => spec.query((command as InstanceType<typeof Command>).input) as object,
    output: (items, token) => ({ [spec.list]: items, NextToken: token }),
    recordId: (item) => spec.recordId(item as SdkItem),
    fromSdk: (item) => spec.fromSdk(item as Shape),
    worldItem: spec.worldItem,
    matches: spec.matches,
  };
}

function sdkFilters(filters: readonly Ec2Filter[]): Filter[] {
  return filters.map((filter) => ({ Name: filter.name, Values: [...filter.values] }));
}

function queryFilters(filters: readonly Filter[] | undefined): Ec2Filter[] {
  return (filters ?? []).map((filter) => ({
    name: filter.Name ?? '',
    values: [...(filter.Values ?? [])],
  }));
}

function nextToken(token: string | undefined): { NextToken?: string } {
  return token === undefined ? {} : { NextToken: token };
}

// World-file items: the SDK's own response shapes (PascalCase). Only the fields the scanner reads
// are typed; everything else is kept as recorded. Untrusted input: parsed, never assumed.
const tag = z.looseObject({ Key: z.string().optional(), Value: z.string().optional() });
const tags = z.array(tag).optional();
const isoDate = z.union([z.string(), z.date()]).optional();

export const EC2_LIST_FACTS = {
  images: ec2ListFact({
    method: 'describeImages',
    action: 'ec2:DescribeImages',
    Command: DescribeImagesCommand,
    request: (query: ImageQuery, token: string | undefined): DescribeImagesCommandInput => ({
      Filters: sdkFilters(query.filters),
      ...(query.owners === undefined ? {} : { Owners: [...query.owners] }),
      IncludeDeprecated: query.includeDeprecated,
      MaxResults: IMAGES_PAGE_SIZE,
      ...nextToken(token),
    }),
    query: (input): ImageQuery => ({
      filters: queryFilters(input.Filters),
      ...(input.Owners === undefined ? {} : { owners: input.Owners }),
      includeDeprecated: input.IncludeDeprecated ?? false,
    }),
    list: 'Images',
    items: (output: DescribeImagesCommandOutput) => output.Images,
    recordId: (image) => image.ImageId,
    fromSdk: imageFromSdk,
    worldItem: z.looseObject({
      ImageId: z.string(),
      Name: z.string().optional(),
      OwnerId: z.string().optional(),
      ImageOwnerAlias: z.string().optional(),
      State: z.string().optional(),
      Architecture: z.string().optional(),
      CreationDate: z.string().optional(),
      DeprecationTime: z.string().optional(),
      ImageAllowed: z.boolean().optional(),
      Public: z.boolean().optional(),
      RootDeviceName: z.string().optional(),
      BlockDeviceMappings: z
        .array(
          z.looseObject({
            DeviceName: z.string().optional(),
            Ebs: z
              .looseObject({
                SnapshotId: z.string().optional(),
                VolumeSize: z.number().optional(),
                Encrypted: z.boolean().optional(),
              })
              .optional(),
          })
        )
        .optional(),
      Tags: tags,
    }),
    matches: (image, query, context) => imageMatchesQuery(image, query, context),
  }),

  subnets: ec2ListFact({
    method: 'describeSubnets',
    action: 'ec2:DescribeSubnets',
    Command: DescribeSubnetsCommand,
    request: (query: FilterQuery, token: string | undefined): DescribeSubnetsCommandInput => ({
      Filters: sdkFilters(query.filters),
      MaxResults: SUBNETS_PAGE_SIZE,
      ...nextToken(token),
    }),
    query: (input): FilterQuery => ({ filters: queryFilters(input.Filters) }),
    list: 'Subnets',
    items: (output: DescribeSubnetsCommandOutput) => output.Subnets,
    recordId: (subnet) => subnet.SubnetId,
    fromSdk: subnetFromSdk,
    worldItem: z.looseObject({
      SubnetId: z.string(),
      VpcId: z.string().optional(),
      AvailabilityZone: z.string().optional(),
      AvailabilityZoneId: z.string().optional(),
      AvailableIpAddressCount: z.number().optional(),
      CidrBlock: z.string().optional(),
      State: z.string().optional(),
      Tags: tags,
    }),
    matches: (subnet, query) => subnetMatchesQuery(subnet, query),
  }),

  securityGroups: ec2ListFact({
    method: 'describeSecurityGroups',
    action: 'ec2:DescribeSecurityGroups',
    Command: DescribeSecurityGroupsCommand,
    request: (
      query: FilterQuery,
      token: string | undefined
    ): DescribeSecurityGroupsCommandInput => ({
      Filters: sdkFilters(query.filters),
      MaxResults: SECURITY_GROUPS_PAGE_SIZE,
      ...nextToken(token),
    }),
    query: (input): FilterQuery => ({ filters: queryFilters(input.Filters) }),
    list: 'SecurityGroups',
    items: (output: DescribeSecurityGroupsCommandOutput) => output.SecurityGroups,
    recordId: (group) => group.GroupId,
    fromSdk: securityGroupFromSdk,
    worldItem: z.looseObject({
      GroupId: z.string(),
      GroupName: z.string().optional(),
      VpcId: z.string().optional(),
      OwnerId: z.string().optional(),
      Tags: tags,
    }),
    matches: (group, query) => securityGroupMatchesQuery(group, query),
  }),

  capacityReservations: ec2ListFact({
    method: 'describeCapacityReservations',
    action: 'ec2:DescribeCapacityReservations',
    Command: DescribeCapacityReservationsCommand,
    // By id Karpenter sends CapacityReservationIds without MaxResults
    // (https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/providers/capacityreservation/).
    request: (
      query: FilterQuery,
      token: string | undefined
    ): DescribeCapacityReservationsCommandInput => ({
      Filters: sdkFilters(query.filters),
      ...(query.ids === undefined
        ? { MaxResults: CAPACITY_RESERVATIONS_PAGE_SIZE }
        : { CapacityReservationIds: [...query.ids] }),
      ...nextToken(token),
    }),
    query: (input): FilterQuery => ({
      filters: queryFilters(input.Filters),
      ...(input.CapacityReservationIds === undefined ? {} : { ids: input.CapacityReservationIds }),
    }),
    list: 'CapacityReservations',
    items: (output: DescribeCapacityReservationsCommandOutput) => output.CapacityReservations,
    recordId: (reservation) => reservation.CapacityReservationId,
    fromSdk: capacityReservationFromSdk,
    worldItem: z.looseObject({
      CapacityReservationId: z.string(),
      OwnerId: z.string().optional(),
      State: z.string().optional(),
      InstanceType: z.string().optional(),
      AvailabilityZone: z.string().optional(),
      InstanceMatchCriteria: z.string().optional(),
      EndDate: isoDate,
      EndDateType: z.string().optional(),
      ReservationType: z.string().optional(),
      AvailableInstanceCount: z.number().int().optional(),
      TotalInstanceCount: z.number().int().optional(),
      Interruptible: z.boolean().optional(),
      Tags: tags,
    }),
    matches: (reservation, query) => capacityReservationMatchesQuery(reservation, query),
  }),
};

export type Ec2ListFacts = typeof EC2_LIST_FACTS;
export type Ec2ListKey = keyof Ec2ListFacts;

/** The table's keys, in its order (the order actions are declared in). */
export const EC2_LIST_KEYS = Object.keys(EC2_LIST_FACTS) as Ec2ListKey[];

type QueryOf<F> = F extends Ec2ListFact<string, infer Query, unknown, z.ZodType> ? Query : never;
type ItemOf<F> = F extends Ec2ListFact<string, never, infer Item, z.ZodType> ? Item : never;

/** The port methods the table answers, by method name. */
export type Ec2ListMethods = {
  readonly [K in Ec2ListKey as Ec2ListFacts[K]['method']]: (
    query: QueryOf<Ec2ListFacts[K]>
  ) => Promise<ItemOf<Ec2ListFacts[K]>[]>;
};

/** One port method per entry, each built by `build` from its descriptor and table key. */
export function ec2ListMethods(
  build: (fact: AnyEc2ListFact, key: Ec2ListKey) => (query: never) => Promise<unknown[]>
): Ec2ListMethods {
  // The mapped type cannot be checked entry by entry; `build` keeps each method's query and item.
  return Object.fromEntries(
    EC2_LIST_KEYS.map((key) => {
      const fact: AnyEc2ListFact = EC2_LIST_FACTS[key];
      return [fact.method, build(fact, key)];
    })
  ) as unknown as Ec2ListMethods;
}

/** The world file's `ec2` section: one list per entry, empty when absent. */
export function ec2WorldSection() {
  const lists = Object.fromEntries(
    EC2_LIST_KEYS.map((key) => [key, z.array(EC2_LIST_FACTS[key].worldItem).default([])])
  ) as unknown as {
    readonly [K in Ec2ListKey]: z.ZodDefault<z.ZodArray<Ec2ListFacts[K]['worldItem']>>;
  };
  return z.looseObject(lists);
}

/** An `ec2` section with every list empty (a world file without one). */
export function emptyEc2Section(): { [K in Ec2ListKey]: [] } {
  return Object.fromEntries(EC2_LIST_KEYS.map((key) => [key, []])) as unknown as {
    [K in Ec2ListKey]: [];
  };
}

/**
 * A region-wide EC2 list: one fixed query (Karpenter's) per region, read page by page, serving
 * every NodeClass. Recorded under the world file's `<worldKey>.<region>`. Method syntax on
 * purpose, as for the lists above.
 */
export interface RegionFact<Method extends string, Query, Item, WorldItem extends z.ZodType> {
  readonly method: Method;
  readonly action: string;
  /** The query the scanner sends (Karpenter's). */
  readonly query: Query;
  /** The SDK command of one page; `token` is undefined for the first. */
  command(query: Query, token: string | undefined): object;
  isCommand(command: unknown): boolean;
  /** The query a command of this fact asks (the inverse of `command`; the bench answers it). */
  queryOf(command: unknown): Query;
  /** One page's records (what the world file keeps) and the next token. */
  page(output: unknown): { readonly items: readonly object[]; readonly nextToken?: string };
  /** The SDK output of one page of records (the inverse of `page`). */
  output(records: readonly object[], nextToken: string | undefined): object;
  /** The id a record is kept under (one record per row). */
  recordId(record: object): string;
  /** A record of `page` or of the world section → core fact; undefined for rows the scan drops. */
  fromWorld(record: object): Item | undefined;
  /** Schema of one record in the world file's section. */
  readonly worldItem: WorldItem;
  /** The live API's filter semantics, for replay and the bench (core's matcher). */
  matches(item: Item, query: Query): boolean;
}

/** Any entry of the table, as the generic builders see it. */
export type AnyRegionFact = RegionFact<string, never, unknown, z.ZodType>;

/** The API's maximum: a region's few thousand zone offerings in a handful of pages. */
const INSTANCE_TYPE_OFFERINGS_PAGE_SIZE = 1000;
/** The API's maximum for DescribeInstanceTypes (Karpenter asks for it too). */
const INSTANCE_TYPES_PAGE_SIZE = 100;

interface OfferingsQuery {
  readonly locationType: string;
}

const instanceTypeInfoItem = z.looseObject({
  InstanceType: z.string().min(1),
  SupportedVirtualizationTypes: z.array(z.string()).optional(),
  ProcessorInfo: z
    .looseObject({
      SupportedArchitectures: z.array(z.string()).optional(),
      Manufacturer: z.string().optional(),
      SustainedClockSpeedInGhz: z.number().optional(),
    })
    .optional(),
  VCpuInfo: z.looseObject({ DefaultVCpus: z.number().int().optional() }).optional(),
  MemoryInfo: z.looseObject({ SizeInMiB: z.number().int().optional() }).optional(),
  Hypervisor: z.string().optional(),
  BareMetal: z.boolean().optional(),
  SupportedUsageClasses: z.array(z.string()).optional(),
  GpuInfo: z
    .looseObject({
      Gpus: z
        .array(
          z.looseObject({
            Name: z.string().optional(),
            Manufacturer: z.string().optional(),
            Count: z.number().int().optional(),
            MemoryInfo: z.looseObject({ SizeInMiB: z.number().int().optional() }).optional(),
          })
        )
        .optional(),
    })
    .optional(),
  InferenceAcceleratorInfo: z
    .looseObject({
      Accelerators: z
        .array(
          z.looseObject({
            Name: z.string().optional(),
            Manufacturer: z.string().optional(),
            Count: z.number().int().optional(),
          })
        )
        .optional(),
    })
    .optional(),
  NeuronInfo: z
    .looseObject({
      NeuronDevices: z
        .array(
          z.looseObject({
            Name: z.string().optional(),
            Count: z.number().int().optional(),
            CoreInfo: z.looseObject({ Count: z.number().int().optional() }).optional(),
          })
        )
        .optional(),
    })
    .optional(),
  NetworkInfo: z
    .looseObject({
      DefaultNetworkCardIndex: z.number().int().optional(),
      NetworkCards: z
        .array(
          z.looseObject({
            NetworkCardIndex: z.number().int().optional(),
            MaximumNetworkInterfaces: z.number().int().optional(),
          })
        )
        .optional(),
      MaximumNetworkInterfaces: z.number().int().optional(),
      Ipv4AddressesPerInterface: z.number().int().optional(),
      EfaInfo: z.looseObject({ MaximumEfaInterfaces: z.number().int().optional() }).optional(),
      EncryptionInTransitSupported: z.boolean().optional(),
      EnaSupport: z.string().optional(),
    })
    .optional(),
  InstanceStorageInfo: z
    .looseObject({
      TotalSizeInGB: z.number().int().optional(),
      NvmeSupport: z.string().optional(),
    })
    .optional(),
  EbsInfo: z
    .looseObject({
      EbsOptimizedSupport: z.string().optional(),
      EbsOptimizedInfo: z
        .looseObject({ MaximumBandwidthInMbps: z.number().int().optional() })
        .optional(),
    })
    .optional(),
});

function regionFact<
  const Method extends string,
  Query,
  Item,
  Shape extends object,
  WorldItem extends z.ZodType<Shape>,
>(spec: RegionFact<Method, Query, Item, WorldItem>): RegionFact<Method, Query, Item, WorldItem> {
  return spec;
}

export const REGION_FACTS = {
  /**
   * Every zone offering of the client's region, unfiltered. Recorded in core shape
   * (`{instanceType, zone}`): what the scan keeps of a row.
   */
  instanceTypeOfferings: regionFact({
    method: 'describeInstanceTypeOfferings',
    action: 'ec2:DescribeInstanceTypeOfferings',
    query: { locationType: INSTANCE_TYPE_OFFERINGS_LOCATION } as OfferingsQuery,
    command: (query: OfferingsQuery, token) =>
      new DescribeInstanceTypeOfferingsCommand({
        LocationType: query.locationType as LocationType,
        MaxResults: INSTANCE_TYPE_OFFERINGS_PAGE_SIZE,
        ...nextToken(token),
      }),
    isCommand: (command) => command instanceof DescribeInstanceTypeOfferingsCommand,
    queryOf: (command) => ({
      locationType:
        (command as DescribeInstanceTypeOfferingsCommand).input.LocationType ?? 'region',
    }),
    /** Zone rows only, translated (rows of another location type are dropped). */
    page(output) {
      const typed = output as DescribeInstanceTypeOfferingsCommandOutput;
      const items = (typed.InstanceTypeOfferings ?? []).flatMap((offering) => {
        const mapped = instanceTypeOfferingFromSdk(offering);
        return mapped ? [mapped] : [];
      });
      return { items, ...(typed.NextToken === undefined ? {} : { nextToken: typed.NextToken }) };
    },
    output: (records, token) => ({
      InstanceTypeOfferings: (records as InstanceTypeOffering[]).map((offering) => ({
        InstanceType: offering.instanceType,
        LocationType: INSTANCE_TYPE_OFFERINGS_LOCATION,
        Location: offering.zone,
      })),
      NextToken: token,
    }),
    recordId: (record) => {
      const offering = record as InstanceTypeOffering;
      return `${offering.zone} ${offering.instanceType}`;
    },
    fromWorld: (record): InstanceTypeOffering => {
      const offering = record as InstanceTypeOffering;
      return { instanceType: offering.instanceType, zone: offering.zone };
    },
    worldItem: z.looseObject({ instanceType: z.string().min(1), zone: z.string().min(1) }),
    // The world holds zone rows; another location type answers none (AWS always has zones).
    matches: (_offering: InstanceTypeOffering, query) =>
      query.locationType === INSTANCE_TYPE_OFFERINGS_LOCATION,
  }),

  /** Karpenter's DescribeInstanceTypes, recorded as the SDK returns each `InstanceTypeInfo`. */
  instanceTypes: regionFact({
    method: 'describeInstanceTypes',
    action: 'ec2:DescribeInstanceTypes',
    query: INSTANCE_TYPES_QUERY,
    command: (query: FilterQuery, token) =>
      new DescribeInstanceTypesCommand({
        Filters: sdkFilters(query.filters),
        ...(query.ids === undefined ? {} : { InstanceTypes: [...query.ids] as _InstanceType[] }),
        MaxResults: INSTANCE_TYPES_PAGE_SIZE,
        ...nextToken(token),
      }),
    isCommand: (command) => command instanceof DescribeInstanceTypesCommand,
    queryOf: (command): FilterQuery => {
      const input = (command as DescribeInstanceTypesCommand).input;
      return {
        filters: queryFilters(input.Filters),
        ...(input.InstanceTypes === undefined ? {} : { ids: input.InstanceTypes }),
      };
    },
    page(output) {
      const typed = output as DescribeInstanceTypesCommandOutput;
      return {
        items: typed.InstanceTypes ?? [],
        ...(typed.NextToken === undefined ? {} : { nextToken: typed.NextToken }),
      };
    },
    output: (records, token) => ({ InstanceTypes: records, NextToken: token }),
    recordId: (record) => String((record as { InstanceType?: string }).InstanceType),
    fromWorld: (record) => instanceTypeFromSdk(record as SdkInstanceTypeInfo),
    worldItem: instanceTypeInfoItem,
    matches: (info: InstanceTypeInfo, query) => instanceTypeMatchesQuery(info, query),
  }),
};

export type RegionFacts = typeof REGION_FACTS;
export type RegionKey = keyof RegionFacts;

/** The table's keys, in its order (the world file's sections too). */
export const REGION_KEYS = Object.keys(REGION_FACTS) as RegionKey[];

type RegionItemOf<F> = F extends RegionFact<string, never, infer Item, z.ZodType> ? Item : never;

/** The port methods the table answers, by method name (undefined: the source records none). */
export type RegionMethods = {
  readonly [K in RegionKey as RegionFacts[K]['method']]: () => Promise<
    readonly RegionItemOf<RegionFacts[K]>[] | undefined
  >;
};

/** One port method per entry, each built by `build` from its descriptor and table key. */
export function regionMethods(
  build: (fact: AnyRegionFact, key: RegionKey) => () => Promise<readonly unknown[] | undefined>
): RegionMethods {
  return Object.fromEntries(
    REGION_KEYS.map((key) => {
      const fact = REGION_FACTS[key] as unknown as AnyRegionFact;
      return [fact.method, build(fact, key)];
    })
  ) as unknown as RegionMethods;
}

/** Records of one region fact that its query selects, translated (replay and the bench). */
export function selectRegionRecords(
  fact: AnyRegionFact,
  records: readonly object[],
  query: unknown
): { readonly record: object; readonly item: unknown }[] {
  return records.flatMap((record) => {
    const item = fact.fromWorld(record);
    return item !== undefined && fact.matches(item as never, query as never)
      ? [{ record, item }]
      : [];
  });
}

/** The world file's region sections: `<worldKey>: { <region>: [records] }`, each optional. */
export function regionWorldFields() {
  return Object.fromEntries(
    REGION_KEYS.map((key) => [
      key,
      z.record(z.string(), z.array(REGION_FACTS[key].worldItem)).optional(),
    ])
  ) as unknown as {
    readonly [K in RegionKey]: z.ZodOptional<
      z.ZodRecord<z.ZodString, z.ZodArray<RegionFacts[K]['worldItem']>>
    >;
  };
}

type KeyedActions = {
  readonly [K in KeyedKey as KeyedFacts[K]['method']]: readonly string[];
} & {
  readonly [K in KeyedKey as BatchMethodOf<KeyedFacts[K]>]: readonly string[];
};

/** Each keyed lookup's actions, and each batch's: its own action, then the lookup's fallback. */
const keyedActions = Object.fromEntries(
  KEYED_KEYS.flatMap((key) => {
    const fact: AnyKeyedFact = KEYED_FACTS[key];
    const batch =
      fact.batch === undefined ? [] : [[fact.batch.method, [fact.batch.action, ...fact.actions]]];
    return [[fact.method, fact.actions], ...batch];
  })
) as unknown as KeyedActions;

/**
 * Every AwsFactsPort method and the IAM actions its read needs, from the descriptors (EC2 lists,
 * offerings, keyed facts). Keyed by method, so a new method does not compile without its actions;
 * the readers' declared actions are taken from here.
 */
export const AWS_FACT_ACTIONS = {
  ...(Object.fromEntries(
    EC2_LIST_KEYS.map((key) => [EC2_LIST_FACTS[key].method, [EC2_LIST_FACTS[key].action]])
  ) as unknown as Record<Ec2ListFacts[Ec2ListKey]['method'], readonly string[]>),
  ...(Object.fromEntries(
    REGION_KEYS.map((key) => [REGION_FACTS[key].method, [REGION_FACTS[key].action]])
  ) as unknown as Record<RegionFacts[RegionKey]['method'], readonly string[]>),
  ...keyedActions,
  [EBS_ENCRYPTION_DEFAULTS.method]: EBS_ENCRYPTION_DEFAULTS.actions,
} as const satisfies Record<keyof AwsFactsPort, readonly string[]>;
