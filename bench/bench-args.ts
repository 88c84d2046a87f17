/** Small helpers every bench uses. */

/** The value after `--name` in `args`, or `fallback`. */
export function option(args: string[], name: string, fallback: string): string {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? (args[i + 1] as string) : fallback;
}

/** The `p`-th percentile (0-100) of ascending `sorted` values (nearest rank, NaN when empty). */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}
