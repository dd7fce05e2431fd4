// Cold-start floor: a handler that does nothing, bundled with the handlers' esbuild options and
// run by the same harness. What the Node runtime itself costs.
export const handler = async (): Promise<Record<string, never>> => ({});
