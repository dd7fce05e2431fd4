// Runs a composite action's `run:` steps the way a GitHub runner does, for tests: inputs with their
// defaults, `${{ }}` substitution, `if:` conditions, `bash --noprofile --norc -eo pipefail`, and
// the GITHUB_OUTPUT / GITHUB_ENV / GITHUB_PATH files between steps. `uses:` steps are not run (no
// network): they are reported with their resolved `with:` so a test can check their wiring.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod';

const stepSchema = z
  .object({
    name: z.string(),
    id: z.string().optional(),
    if: z.string().optional(),
    shell: z.string().optional(),
    run: z.string().optional(),
    uses: z.string().optional(),
    env: z.record(z.string(), z.string()).optional(),
    with: z.record(z.string(), z.string()).optional(),
  })
  .strict()
  .refine((step) => (step.run === undefined) !== (step.uses === undefined), {
    message: 'a step has exactly one of run and uses',
  })
  .refine((step) => step.run === undefined || step.shell !== undefined, {
    message: 'a composite run step must name its shell',
  });

const actionSchema = z.object({
  name: z.string(),
  description: z.string(),
  inputs: z.record(
    z.string(),
    z.object({ description: z.string(), required: z.boolean(), default: z.string() }).strict()
  ),
  outputs: z.record(z.string(), z.object({ description: z.string(), value: z.string() }).strict()),
  runs: z.object({ using: z.literal('composite'), steps: z.array(stepSchema) }),
});
export type Action = z.infer<typeof actionSchema>;

export function loadAction(file: string): Action {
  return actionSchema.parse(parse(readFileSync(file, 'utf8')));
}

export interface StepResult {
  readonly name: string;
  /** `skipped` when its `if:` was false; `not-run` for a `uses:` step whose `if:` was true. */
  readonly outcome: 'success' | 'failure' | 'skipped' | 'not-run';
  readonly with?: Readonly<Record<string, string>>;
  readonly stdout: string;
  readonly stderr: string;
  readonly exitCode?: number;
}

export interface ActionRun {
  readonly conclusion: 'success' | 'failure';
  readonly steps: readonly StepResult[];
  readonly outputs: Readonly<Record<string, string>>;
}

interface Contexts {
  readonly inputs: Record<string, string>;
  readonly github: Readonly<Record<string, string>>;
  readonly steps: Record<string, { outputs: Record<string, string> }>;
  jobFailed: boolean;
}

/**
 * The value of one context path (`inputs.x`, `steps.a.outputs.b`, `github.action_ref`); '' when
 * absent, as GitHub.
 */
function lookup(path: string, contexts: Contexts): string {
  const [root, ...rest] = path.split('.');
  if (root === 'inputs' && rest.length === 1) return contexts.inputs[rest[0] as string] ?? '';
  if (root === 'github' && rest.length === 1) return contexts.github[rest[0] as string] ?? '';
  if (root === 'steps' && rest.length === 3 && rest[1] === 'outputs') {
    return contexts.steps[rest[0] as string]?.outputs[rest[2] as string] ?? '';
  }
  throw new Error(`unsupported context ${path} (only inputs.*, github.* and steps.*.outputs.*)`);
}

/** `${{ context.path }}` → its value; any other expression is refused. */
function substitute(text: string, contexts: Contexts): string {
  return text.replace(/\$\{\{\s*([^}]*?)\s*\}\}/g, (_, expression: string) => {
    if (!/^[A-Za-z][\w.-]*$/.test(expression)) {
      throw new Error(`unsupported expression \${{ ${expression} }}`);
    }
    return lookup(expression, contexts);
  });
}

/**
 * An `if:` condition: `&&` of terms, each `always()`, `success()`, `failure()`, or
 * `context.path == 'literal'` / `!= 'literal'`. Without a status function, `success()` is implied.
 */
function condition(text: string | undefined, contexts: Contexts): boolean {
  const terms = (text ?? 'success()').split('&&').map((term) => term.trim());
  const statusTerms = terms.filter((term) => /^(always|success|failure)\(\)$/.test(term));
  const status = statusTerms.length === 0 ? ['success()'] : statusTerms;
  const statusOk = status.every((term) =>
    term === 'always()' ? true : term === 'success()' ? !contexts.jobFailed : contexts.jobFailed
  );
  return (
    statusOk &&
    terms
      .filter((term) => !statusTerms.includes(term))
      .every((term) => {
        const comparison = /^([A-Za-z][\w.-]*)\s*(==|!=)\s*'([^']*)'$/.exec(term);
        if (!comparison) throw new Error(`unsupported if: term ${term}`);
        const [, path, operator, literal] = comparison;
        const equal = lookup(path as string, contexts) === literal;
        return operator === '==' ? equal : !equal;
      })
  );
}

/** `key=value` lines of a GITHUB_OUTPUT / GITHUB_ENV file (the heredoc form is not used here). */
function keyValues(file: string): Record<string, string> {
  const values: Record<string, string> = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line === '') continue;
    const at = line.indexOf('=');
    if (at <= 0) throw new Error(`unsupported line in ${file}: ${line}`);
    values[line.slice(0, at)] = line.slice(at + 1);
  }
  return values;
}

export interface RunOptions {
  /** Values given in the workflow's `with:`; the others take the action's defaults. */
  readonly with: Readonly<Record<string, string>>;
  /** The job's working directory (GITHUB_WORKSPACE). */
  readonly workspace: string;
  /** The runner's environment (PATH and the like). */
  readonly env: NodeJS.ProcessEnv;
  /** RUNNER_TEMP; a new directory by default. */
  readonly runnerTemp?: string;
  /** The `github` context (`action_ref`, …); empty by default. */
  readonly github?: Readonly<Record<string, string>>;
}

export function runCompositeAction(action: Action, options: RunOptions): ActionRun {
  for (const name of Object.keys(options.with)) {
    if (!(name in action.inputs)) throw new Error(`the action has no input ${name}`);
  }
  const contexts: Contexts = {
    inputs: Object.fromEntries(
      Object.entries(action.inputs).map(([name, input]) => [
        name,
        options.with[name] ?? input.default,
      ])
    ),
    github: options.github ?? {},
    steps: {},
    jobFailed: false,
  };
  const files = mkdtempSync(join(tmpdir(), 'composite-action-'));
  const runnerTemp = options.runnerTemp ?? mkdtempSync(join(tmpdir(), 'runner-temp-'));
  let env: NodeJS.ProcessEnv = {
    ...options.env,
    GITHUB_WORKSPACE: options.workspace,
    RUNNER_TEMP: runnerTemp,
    RUNNER_OS: 'Linux',
    CI: 'true',
    GITHUB_ACTIONS: 'true',
  };
  const results: StepResult[] = [];
  action.runs.steps.forEach((step, index) => {
    if (!condition(step.if, contexts)) {
      results.push({ name: step.name, outcome: 'skipped', stdout: '', stderr: '' });
      return;
    }
    if (step.uses !== undefined) {
      const resolved = Object.fromEntries(
        Object.entries(step.with ?? {}).map(([key, value]) => [key, substitute(value, contexts)])
      );
      results.push({ name: step.name, outcome: 'not-run', with: resolved, stdout: '', stderr: '' });
      return;
    }
    const output = join(files, `output-${index}`);
    const envFile = join(files, `env-${index}`);
    const pathFile = join(files, `path-${index}`);
    for (const file of [output, envFile, pathFile]) writeFileSync(file, '');
    const script = join(files, `step-${index}.sh`);
    writeFileSync(script, substitute(step.run ?? '', contexts));
    if (step.shell !== 'bash') throw new Error(`unsupported shell ${step.shell}`);
    const stepEnv = Object.fromEntries(
      Object.entries(step.env ?? {}).map(([key, value]) => [key, substitute(value, contexts)])
    );
    const ran = spawnSync('bash', ['--noprofile', '--norc', '-eo', 'pipefail', script], {
      cwd: options.workspace,
      env: {
        ...env,
        ...stepEnv,
        GITHUB_OUTPUT: output,
        GITHUB_ENV: envFile,
        GITHUB_PATH: pathFile,
      },
      encoding: 'utf8',
      timeout: 240_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    const exitCode = ran.status ?? -1;
    if (step.id !== undefined) contexts.steps[step.id] = { outputs: keyValues(output) };
    env = { ...env, ...keyValues(envFile) };
    const added = readFileSync(pathFile, 'utf8').split('\n').filter(Boolean);
    if (added.length > 0) env.PATH = [...added.reverse(), env.PATH].join(':');
    if (exitCode !== 0) contexts.jobFailed = true;
    results.push({
      name: step.name,
      outcome: exitCode === 0 ? 'success' : 'failure',
      stdout: ran.stdout ?? '',
      stderr: ran.stderr ?? '',
      exitCode,
    });
  });
  return {
    conclusion: contexts.jobFailed ? 'failure' : 'success',
    steps: results,
    outputs: Object.fromEntries(
      Object.entries(action.outputs).map(([name, output]) => [
        name,
        substitute(output.value, contexts),
      ])
    ),
  };
}
