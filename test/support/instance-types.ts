// A small instance-type catalog in DescribeInstanceTypes' own shape (test/fixtures/instance-types.json:
// eleven us-east-1 types with the ENI, GPU and storage figures EC2 publishes), and its core form.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  instanceTypeFromSdk,
  type SdkInstanceTypeInfo,
} from '../../lambda/adapters/aws/sdk-shapes.js';
import type { InstanceTypeInfo, InstanceTypeOffering } from '../../lambda/core/facts/aws.js';

/** The SDK records, as a world file's `instanceTypes.<region>` holds them. */
export const INSTANCE_TYPE_RECORDS: readonly Record<string, unknown>[] = JSON.parse(
  readFileSync(join(import.meta.dirname, '../fixtures/instance-types.json'), 'utf8')
) as Record<string, unknown>[];

/** The catalog in core shape. */
export function catalog(): InstanceTypeInfo[] {
  return INSTANCE_TYPE_RECORDS.flatMap((record) => {
    const info = instanceTypeFromSdk(record as SdkInstanceTypeInfo);
    return info === undefined ? [] : [info];
  });
}

/** One type of the catalog by name. */
export function anInstanceType(name: string): InstanceTypeInfo {
  const info = catalog().find((candidate) => candidate.instanceType === name);
  if (info === undefined) throw new Error(`no ${name} in test/fixtures/instance-types.json`);
  return info;
}

/** Every catalog type offered in each zone, except `except` (type → zones it is offered in). */
export function offeringsIn(
  zones: readonly string[],
  except: Readonly<Record<string, readonly string[]>> = {}
): InstanceTypeOffering[] {
  return catalog().flatMap((info) =>
    (except[info.instanceType] ?? zones).map((zone) => ({ instanceType: info.instanceType, zone }))
  );
}
