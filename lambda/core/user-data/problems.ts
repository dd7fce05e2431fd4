import type { Severity } from '../model.js';

/** One thing wrong with an EC2NodeClass's userData, as Karpenter or the node would meet it. */
export interface UserDataProblem {
  /** Stable id of the rule (part of the finding id). */
  readonly rule: string;
  readonly severity: Severity;
  readonly message: string;
  readonly remediation: string;
  /** 1-based line (and column) in spec.userData, when the problem has one. */
  readonly line?: number;
  readonly column?: number;
  /** The setting or part concerned (a TOML key path, `part 2`…), for the finding id. */
  readonly subject?: string;
}

/** Bytes of `text` encoded as UTF-8 (what EC2 counts). */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
  }
  return bytes;
}

/** `at line 3` / `at line 3, column 7`, for messages. */
export function at(line: number | undefined, column?: number): string {
  if (line === undefined) return '';
  return column === undefined ? ` (line ${line})` : ` (line ${line}, column ${column})`;
}
