import { distance } from 'fastest-levenshtein';

/** The known name closest to `name` (edit distance at most 2, or a prefix), for "did you mean". */
export function closestName(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const k of known) {
    const d = k.startsWith(name) || name.startsWith(k) ? 1 : distance(name, k);
    if (d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  return bestDistance <= 2 ? best : undefined;
}
