// The only place that reads the Lambdas' environment. The variables are parsed without zod in
// env-config.ts (the dispatch bundle uses that alone); the scanning functions' IGNORE_RULES, JSON
// written from the `ignore` context key, is parsed here with the core's zod schema.
import {
  annotationSuppressionIssues,
  annotationSuppressionProblems,
} from '../core/annotation-policy.js';
import { ignoreRulesSchema, issuePath } from '../core/ignore-rules.js';
import {
  type Config,
  type HandlerName,
  type IgnoreRulesParser,
  parseConfig,
} from './env-config.js';
import { ConfigError } from './errors.js';

export {
  CONFIG_ENV_KEYS,
  type Config,
  type EnvKey,
  HANDLER_ENV_KEYS,
  HANDLER_NAMES,
  type HandlerName,
} from './env-config.js';

/**
 * The Lambda environment holds at most 4 KB of variables per function: the ignore rules may take
 * this much of it (checked at synth).
 */
export const IGNORE_RULES_MAX_CHARS = 2500;

/**
 * Characters the annotationSuppression check list may take of the same environment (checked at
 * synth): with the ignore rules, the SSM prefixes and the other variables (about 700 characters,
 * names included), every function stays under 4 KB. Globs (`ami-*`) keep a list short.
 */
export const ANNOTATION_SUPPRESSION_MAX_CHARS = 256;

/** The CDK context key that lists them: findings about a parameter outside them name it. */
export const SSM_PARAMETER_PREFIXES_SETTING = 'the ssmParameterPrefixes CDK context key';

/** JSON text → ignore rules; given the catalog's ids, a rule naming no check is an error. */
function ignoreRulesParser(knownCheckIds?: readonly string[]): IgnoreRulesParser {
  return (text) => {
    let json: unknown;
    try {
      json = JSON.parse(text === undefined || text.trim() === '' ? '[]' : text);
    } catch {
      return { problems: ['IGNORE_RULES: must be a JSON array of ignore rules'] };
    }
    const parsed = ignoreRulesSchema(knownCheckIds).safeParse(json);
    return parsed.success
      ? { value: parsed.data }
      : {
          problems: parsed.error.issues.map(
            (issue) => `${issuePath('IGNORE_RULES', issue.path)}: ${issue.message}`
          ),
        };
  };
}

/**
 * Parses the variables `handler` needs. Variables a handler does not use are left empty in the
 * Config (`''`/`[]`), so each function only needs its own keys set. `checkIds` (the scanning
 * functions pass the catalog) makes an ignore rule, or an ANNOTATION_SUPPRESSION entry, naming no
 * check an error.
 */
export function loadConfig(
  env: Readonly<Record<string, string | undefined>>,
  handler: HandlerName,
  options: { readonly checkIds?: readonly string[] } = {}
): Config {
  const config = parseConfig(env, handler, ignoreRulesParser(options.checkIds));
  if (options.checkIds !== undefined) {
    const problems = annotationSuppressionProblems(config.annotationSuppression, options.checkIds);
    if (problems.length > 0) {
      throw new ConfigError(
        `Invalid configuration for the ${handler} function: ${annotationSuppressionIssues('ANNOTATION_SUPPRESSION', problems).join('; ')}`
      );
    }
  }
  return config;
}
