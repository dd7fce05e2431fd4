// A remediation is prose, sometimes with a JSON document to paste (an IAM policy). Rendering keeps
// the JSON whole and valid: it goes in a block of its own, never cut, never Markdown-escaped.
import { POLICY_LIMITS, sanitizeDeep } from './sanitize.js';

export type RemediationPart = { readonly text: string } | { readonly json: unknown };

/** The index just past the JSON value that starts at `start` (a `{`), or -1. Strings are skipped. */
function endOfObject(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let index = start; index < text.length; index++) {
    const char = text[index];
    if (inString) {
      if (char === '\\') index++;
      else if (char === '"') inString = false;
      continue;
    }
    if (char === '"') inString = true;
    else if (char === '{' || char === '[') depth++;
    else if (char === '}' || char === ']') {
      depth--;
      if (depth === 0) return index + 1;
      if (depth < 0) return -1;
    }
  }
  return -1;
}

function parseObject(candidate: string): unknown {
  try {
    const value: unknown = JSON.parse(candidate);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Splits a remediation into prose and the JSON objects embedded in it, in order. */
export function remediationParts(remediation: string): RemediationPart[] {
  const parts: RemediationPart[] = [];
  let textStart = 0;
  let index = remediation.indexOf('{');
  while (index !== -1) {
    const end = endOfObject(remediation, index);
    const json = end === -1 ? undefined : parseObject(remediation.slice(index, end));
    if (json === undefined) {
      index = remediation.indexOf('{', index + 1);
      continue;
    }
    const before = remediation.slice(textStart, index).trim();
    if (before !== '') parts.push({ text: before });
    // Sanitised like evidence, with the limits that keep a policy whole.
    parts.push({ json: sanitizeDeep(json, POLICY_LIMITS) });
    textStart = end;
    index = remediation.indexOf('{', end);
  }
  const rest = remediation.slice(textStart).trim();
  if (rest !== '') parts.push({ text: rest });
  return parts;
}

/** The prose of a remediation, its JSON left out. */
export function remediationProse(parts: readonly RemediationPart[]): string[] {
  return parts.flatMap((part) => ('text' in part ? [part.text] : []));
}

/** Pretty JSON to paste: indented when short enough to read, compact otherwise. */
export function pasteableJson(value: unknown, prettyUpTo = 2_000): string {
  const pretty = JSON.stringify(value, null, 2);
  return pretty.length <= prettyUpTo ? pretty : JSON.stringify(value);
}
