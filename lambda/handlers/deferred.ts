// Loading on first use. The bundles are split (scripts/build-lambdas.ts): a module reached only
// through `import()` is parsed when a phase first needs it, not at cold start.

/** The value of `load`, computed once; a failed load is retried by the next call. */
export function once<T>(load: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () => {
    pending ??= load().catch((error: unknown) => {
      pending = undefined;
      throw error;
    });
    return pending;
  };
}

// biome-ignore lint/suspicious/noExplicitAny: ports' methods take any arguments.
type AsyncMethod = (...args: any[]) => Promise<unknown>;

/**
 * A port whose implementation is loaded (with its SDK client) on its first call. `methods` lists
 * every method, checked against the port's type, so a method added to the port cannot be missed.
 */
export function deferredPort<T extends { [K in keyof T]: AsyncMethod }>(
  load: () => Promise<T>,
  methods: Readonly<Record<keyof T, true>>
): T {
  const loaded = once(load);
  const port: Partial<Record<keyof T, AsyncMethod>> = {};
  for (const name of Object.keys(methods) as (keyof T)[]) {
    port[name] = async (...args: unknown[]) => {
      const implementation = await loaded();
      return implementation[name].apply(implementation, args);
    };
  }
  return port as T;
}
