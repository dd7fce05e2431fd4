/** A Karpenter release version such as `v1.7.0`, `1.2.1` or `1.7.0-rc.1`. */
export interface KarpenterVersion {
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
  /** Pre-release tag (`rc.1`); a pre-release sorts before its release. */
  readonly prerelease?: string;
  readonly raw: string;
}

const VERSION_PATTERN = /^v?(\d+)\.(\d+)(?:\.(\d+))?(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/;

/** Parses a version, or returns undefined for anything else (unknown versions are handled by callers). */
export function parseKarpenterVersion(raw: string | undefined): KarpenterVersion | undefined {
  if (raw === undefined) return undefined;
  const trimmed = raw.trim();
  const match = VERSION_PATTERN.exec(trimmed);
  if (!match) return undefined;
  const [, major, minor, patch, prerelease] = match;
  return {
    major: Number(major),
    minor: Number(minor),
    patch: Number(patch ?? '0'),
    ...(prerelease === undefined ? {} : { prerelease }),
    raw: trimmed,
  };
}

function comparePrerelease(a: string | undefined, b: string | undefined): number {
  if (a === b) return 0;
  if (a === undefined) return 1;
  if (b === undefined) return -1;
  const left = a.split('.');
  const right = b.split('.');
  for (let i = 0; i < Math.max(left.length, right.length); i++) {
    const l = left[i];
    const r = right[i];
    if (l === undefined) return -1;
    if (r === undefined) return 1;
    const ln = /^\d+$/.test(l) ? Number(l) : undefined;
    const rn = /^\d+$/.test(r) ? Number(r) : undefined;
    if (ln !== undefined && rn !== undefined) {
      if (ln !== rn) return ln < rn ? -1 : 1;
    } else if (ln !== undefined) {
      return -1;
    } else if (rn !== undefined) {
      return 1;
    } else if (l !== r) {
      return l < r ? -1 : 1;
    }
  }
  return 0;
}

/** Semver ordering: negative when a < b. */
export function compareVersions(a: KarpenterVersion, b: KarpenterVersion): number {
  return (
    a.major - b.major ||
    a.minor - b.minor ||
    a.patch - b.patch ||
    comparePrerelease(a.prerelease, b.prerelease)
  );
}

/** True when `version` is at least `minimum` (e.g. `'1.7.0'`). */
export function isAtLeast(version: KarpenterVersion, minimum: string): boolean {
  const floor = parseKarpenterVersion(minimum);
  if (!floor) throw new RangeError(`invalid version literal ${minimum}`);
  return compareVersions(version, floor) >= 0;
}
