import type { ScanReport } from '../../core/report.js';

/**
 * The report as `JSON.stringify(report, null, 2)` writes it, in pieces: one per top-level key and
 * one per element of a top-level array (a finding), so no single string holds the whole report
 * (it is about 22 KB per NodeClass; one string doubles the CLI's peak memory).
 */
export function* jsonChunks(report: ScanReport): Generator<string> {
  const entries = Object.entries(report).flatMap(([key, value]) => {
    const json = toJson(value);
    return omitted(json) ? [] : [[key, json] as const];
  });
  if (entries.length === 0) {
    yield '{}\n';
    return;
  }
  yield '{';
  for (const [index, [key, json]] of entries.entries()) {
    const separator = index === 0 ? '' : ',';
    if (Array.isArray(json) && json.length > 0) {
      yield `${separator}\n  ${JSON.stringify(key)}: [`;
      for (const [position, element] of json.entries()) {
        yield `${position === 0 ? '' : ','}\n    ${atDepthTwo(toJson(element))}`;
      }
      yield '\n  ]';
    } else {
      yield `${separator}\n  ${JSON.stringify(key)}: ${indented(JSON.stringify(json, null, 2), '  ')}`;
    }
  }
  yield '\n}\n';
}

export function formatJson(report: ScanReport): string {
  return [...jsonChunks(report)].join('');
}

/** What JSON.stringify does with a value before writing it. */
function toJson(value: unknown): unknown {
  const withToJson = value as { toJSON?: () => unknown } | null | undefined;
  return typeof withToJson?.toJSON === 'function' ? withToJson.toJSON() : value;
}

/** Values JSON.stringify leaves out of an object. */
function omitted(json: unknown): boolean {
  return json === undefined || typeof json === 'function' || typeof json === 'symbol';
}

const DEPTH_TWO_OPEN = '[\n  [\n    '.length;
const DEPTH_TWO_CLOSE = '\n  ]\n]'.length;

/**
 * An array element's JSON as it sits at depth two (`indented(…, '    ')`), written there by
 * JSON.stringify itself inside two arrays: no second copy of the text to indent it.
 */
function atDepthTwo(element: unknown): string {
  const wrapped = JSON.stringify([[element]], null, 2);
  return wrapped.slice(DEPTH_TWO_OPEN, wrapped.length - DEPTH_TWO_CLOSE);
}

/** Nested text at its depth: line breaks only occur between tokens (strings escape them). */
function indented(text: string, indent: string): string {
  return text.replaceAll('\n', `\n${indent}`);
}
