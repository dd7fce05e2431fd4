// AwsFactsPort over a world file: the recorded lists, filtered with the same EC2 filter semantics
// the live API applies (core's matcher, not a second copy), so a snapshot replays the live scan.

import type { AwsFactsPort } from '../../core/ports/aws-facts.js';
import { UnsupportedFilterError } from '../../core/selectors/ec2-filter.js';
import { SourceUnavailableError } from '../../shared/errors.js';
import { EBS_ENCRYPTION_DEFAULTS } from '../aws/ebs-encryption-defaults.js';
import { ec2ListMethods, regionMethods, selectRegionRecords } from '../aws/fact-descriptors.js';
import { type KeyedWorldView, keyedMethods } from '../aws/keyed-fact-descriptors.js';
import type { World } from './schema.js';

export interface WorldFactsOptions {
  readonly world: World;
  /** Deprecation is relative to the scan's clock (only matters when IncludeDeprecated is false). */
  readonly now: Date;
}

/** Runs an offline match; a filter the matcher does not implement is an invalid response. */
function offline<T>(source: string, match: () => T): T {
  try {
    return match();
  } catch (error) {
    if (error instanceof UnsupportedFilterError) {
      throw new SourceUnavailableError(source, 'invalid-response', error.message, { cause: error });
    }
    throw error;
  }
}

export function createWorldAwsFacts(options: WorldFactsOptions): AwsFactsPort {
  const { world, now } = options;
  const context = { accountId: world.account, now };
  // Every keyed fact's index reads its part of the parsed file.
  const view: KeyedWorldView = world;
  return {
    // Each EC2 list: its recorded section, matched with the descriptor's filter semantics.
    ...ec2ListMethods((fact, key) => {
      const section: readonly object[] = world.ec2[key];
      const items = section.map((item) => fact.fromSdk(item));
      return async (query) =>
        offline(fact.action, () => items.filter((item) => fact.matches(item, query, context)));
    }),

    // Each region-wide fact: the world region's records, as the fact's own query selects them.
    ...regionMethods((fact, key) => async () => {
      // Own keys only, like SSM parameters: a region named `constructor` is not a prototype's.
      const byRegion: Readonly<Record<string, readonly object[]>> | undefined = world[key];
      if (byRegion === undefined || !Object.hasOwn(byRegion, world.region)) return undefined;
      const records = byRegion[world.region] ?? [];
      return offline(fact.action, () =>
        selectRegionRecords(fact, records, fact.query).map(({ item }) => item)
      );
    }),

    // The region's EBS encryption settings; none recorded stands for AWS's account defaults,
    // as the live API (and the bench's emulated one) answers for an account that never set them.
    async getEbsEncryptionDefaults() {
      const byRegion = world.kms.ebsEncryptionDefaults;
      const recorded =
        byRegion !== undefined && Object.hasOwn(byRegion, world.region)
          ? byRegion[world.region]
          : undefined;
      return EBS_ENCRYPTION_DEFAULTS.fromWorld(recorded);
    },

    // Each keyed fact: the recorded item its name stands for, translated; a batch answers each
    // name so.
    ...keyedMethods((fact) => {
      const find = fact.index(view as never);
      return async (name) => {
        const item = find(name);
        return item === undefined ? undefined : fact.fromWorld(item);
      };
    }),
  };
}
