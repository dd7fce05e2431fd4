// What a snapshot's recordings become once written and read back: the world file `snapshot`
// writes (buildWorld, through JSON), parsed as `scan --world` parses it, and the two ways of
// answering from it (the world adapter, and the live adapters over the bench's emulated SDK).
import { createWorldSdk } from '../../bench/world-sdk.js';
import { createLiveAwsFacts } from '../../lambda/adapters/aws/aws-facts-adapter.js';
import { buildWorld } from '../../lambda/adapters/world/build-world.js';
import type { AwsRecorder } from '../../lambda/adapters/world/recorder.js';
import { type World, WorldSchema } from '../../lambda/adapters/world/schema.js';
import { createWorldAwsFacts } from '../../lambda/adapters/world/world-facts.js';
import type { AwsFactsPort } from '../../lambda/core/ports/aws-facts.js';
import { SCAN_TIME } from './aws-builders.js';

export const RECORDED_ACCOUNT = '111122223333';

export function recordedWorld(recorder: Pick<AwsRecorder, 'recorded'>): {
  readonly world: World;
  /** The world adapter (`scan --world`). */
  readonly replay: AwsFactsPort;
  /** The live adapters over the bench's world SDK. */
  readonly bench: AwsFactsPort;
} {
  const world = WorldSchema.parse(
    JSON.parse(
      JSON.stringify(
        buildWorld({
          account: RECORDED_ACCOUNT,
          region: 'us-east-1',
          partition: 'aws',
          recordedAt: SCAN_TIME,
          recorded: recorder.recorded(),
          loaded: { clusters: [], nodeClasses: [], nodePools: [] },
        })
      )
    )
  );
  return {
    world,
    replay: createWorldAwsFacts({ world, now: SCAN_TIME }),
    bench: createLiveAwsFacts(createWorldSdk(world, { now: SCAN_TIME })),
  };
}
