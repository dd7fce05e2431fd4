// The construct's props that carry a table setting (lambda/shared/settings.ts): their type, their
// defaults and their validation, all derived from the table, so a prop is checked exactly as its
// cdk.json key is and a new setting needs no code here.
import { Duration, Token } from 'aws-cdk-lib';
import {
  envText,
  namedProblems,
  relatedProblems,
  SETTING_NAMES,
  SETTINGS,
  type SettingName,
  type SettingSpec,
  type SettingValue,
  valueProblems,
} from '../../lambda/shared/settings.js';

type Spec<N extends SettingName> = (typeof SETTINGS)[N];

/** Settings with a construct prop whose value the table describes (not `json`). */
type PropSetting = {
  [N in SettingName]: Spec<N> extends { prop: string }
    ? Spec<N> extends { type: 'json' }
      ? never
      : N
    : never;
}[SettingName];

type PropValue<N extends SettingName> =
  Spec<N> extends { unit: string } ? Duration : SettingValue<N>;

/**
 * The props the settings table declares, each as in README's Configuration table (durations as
 * `Duration`s). Ranges and defaults are the table's.
 */
export type SettingProps = {
  readonly [N in PropSetting as Spec<N>['prop']]?: PropValue<N> | undefined;
};

/** Each prop setting's value, the default when the prop is unset (undefined: no default). */
export type PropSettingValues = { readonly [N in PropSetting]: SettingValue<N> | undefined };

function propSettings(): PropSetting[] {
  return SETTING_NAMES.filter((name): name is PropSetting => {
    const spec: SettingSpec = SETTINGS[name];
    return spec.prop !== undefined && spec.type !== 'json';
  });
}

/** A Duration in the setting's unit; fractions stay fractions, for the range check to refuse. */
function inUnit(duration: Duration, unit: 'minutes' | 'hours' | 'days'): number {
  if (unit === 'minutes') return duration.toMinutes({ integral: false });
  if (unit === 'hours') return duration.toHours({ integral: false });
  return duration.toDays({ integral: false });
}

/**
 * The props' settings with defaults applied, validated as the cdk.json keys are (ranges, patterns,
 * clusters named once, at least one cluster or discovery); throws one error naming every prop.
 * `homeRegion`: the stack's region, when known at synth.
 */
export function propSettingValues(
  props: Readonly<Record<string, unknown>>,
  homeRegion: string | undefined
): PropSettingValues {
  const values: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const name of propSettings()) {
    const spec: SettingSpec = SETTINGS[name];
    const prop = spec.prop ?? name;
    const given = props[prop];
    if (given === undefined) {
      values[name] = 'default' in spec ? spec.default : undefined;
      continue;
    }
    const value =
      spec.unit !== undefined && given instanceof Duration ? inUnit(given, spec.unit) : given;
    if (typeof value === 'string' && Token.isUnresolved(value)) {
      values[name] = value;
      continue;
    }
    const found = namedProblems(prop, valueProblems(spec, value));
    if (found.length > 0) problems.push(...found);
    values[name] = value;
  }
  const settings = values as PropSettingValues;
  if (problems.length === 0) {
    for (const { setting, message } of relatedProblems({
      clusters: settings.clusters ?? [],
      discoverClusters: settings.discoverClusters ?? '',
      homeRegion:
        homeRegion === undefined || Token.isUnresolved(homeRegion) ? undefined : homeRegion,
      scanConcurrency: settings.scanConcurrency ?? SETTINGS.scanConcurrency.default,
      reservedScanConcurrency: settings.reservedScanConcurrency,
      accessEntries: settings.accessEntries ?? false,
      eksAdminViewPolicy: settings.eksAdminViewPolicy ?? false,
    })) {
      const spec: SettingSpec = SETTINGS[setting];
      problems.push(`${spec.prop ?? setting}: ${message}`);
    }
  }
  if (problems.length > 0) {
    throw new Error(`NodeClassScanner: invalid props:\n  - ${problems.join('\n  - ')}`);
  }
  return settings;
}

/** The variables of the prop settings that travel to the Lambdas, as text. */
export function settingVariables(values: PropSettingValues): Record<string, string> {
  const variables: Record<string, string> = {};
  for (const name of propSettings()) {
    const spec: SettingSpec = SETTINGS[name];
    const value = values[name];
    if (spec.env !== undefined) variables[spec.env] = value === undefined ? '' : envText(value);
  }
  return variables;
}

/** Context values → the props (durations in the table's unit). */
export function propsOfSettings(
  config: Readonly<Record<string, unknown>>
): Record<string, unknown> {
  const props: Record<string, unknown> = {};
  for (const name of propSettings()) {
    const spec: SettingSpec = SETTINGS[name];
    const value = config[name];
    if (value === undefined || spec.prop === undefined) continue;
    props[spec.prop] = spec.unit === undefined ? value : Duration[spec.unit](value as number);
  }
  return props;
}
