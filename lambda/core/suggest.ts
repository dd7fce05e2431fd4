// "Did you mean …?" for a mistyped name: the candidate at the smallest edit distance.

/**
 * Edit distance counting insertions, deletions, substitutions and swaps of two neighbouring
 * letters (optimal string alignment), case-insensitive: `clustres` is 1 from `clusters`.
 */
export function editDistance(a: string, b: string): number {
  const left = a.toLowerCase();
  const right = b.toLowerCase();
  const rows: number[][] = [Array.from({ length: right.length + 1 }, (_, index) => index)];
  for (let i = 1; i <= left.length; i++) {
    const row = [i];
    for (let j = 1; j <= right.length; j++) {
      const above = rows[i - 1] ?? [];
      let distance = Math.min(
        (above[j] ?? 0) + 1,
        (row[j - 1] ?? 0) + 1,
        (above[j - 1] ?? 0) + (left[i - 1] === right[j - 1] ? 0 : 1)
      );
      if (i > 1 && j > 1 && left[i - 1] === right[j - 2] && left[i - 2] === right[j - 1]) {
        distance = Math.min(distance, (rows[i - 2]?.[j - 2] ?? 0) + 1);
      }
      row.push(distance);
    }
    rows.push(row);
  }
  return rows[left.length]?.[right.length] ?? 0;
}

/**
 * The candidate closest to `word`, when it is close enough to be a typo (at most a third of the
 * word's length, and at least 1); ties go to the earlier candidate.
 */
export function nearest(word: string, candidates: readonly string[]): string | undefined {
  const limit = Math.max(1, Math.floor(word.length / 3));
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(word, candidate);
    if (distance <= limit && (best === undefined || distance < best.distance)) {
      best = { candidate, distance };
    }
  }
  return best?.candidate;
}

/** ` (did you mean "x"?)`, or nothing when no candidate is close. */
export function didYouMean(word: string, candidates: readonly string[]): string {
  const match = nearest(word, candidates);
  return match === undefined ? '' : ` (did you mean "${match}"?)`;
}
