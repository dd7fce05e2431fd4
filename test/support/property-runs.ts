// The slow property tests draw a fifth of their random cases in the default run and all of them
// under `npm run test:thorough` (FC_THOROUGH=1). What each property asserts is the same; only how
// many cases one run samples changes (the seed stays fixed, see setup.ts).
export function propertyRuns(thorough: number): number {
  return process.env.FC_THOROUGH === '1' ? thorough : Math.max(20, Math.ceil(thorough / 5));
}
