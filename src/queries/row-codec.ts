import { isLosslessNumber, parse, stringify } from 'lossless-json';
import type { ResultColumn } from './query-types.ts';

/** Types whose values are sent as strings: 128- and 256-bit integers (DESIGN.md §6). */
const WIDE_INTEGER = /^(?:nullable\()?(?:low_cardinality\()?u?int(?:128|256)\b/;

/** Indexes of the header's columns whose values must be sent as strings. */
export function wideIntegerColumns(header: readonly ResultColumn[]): number[] {
  return header.flatMap((c, i) => (WIDE_INTEGER.test(c.type) ? [i] : []));
}

/** Indexes of the header's columns that hold floats, alone or inside arrays, tuples, maps. */
export function floatColumns(header: readonly ResultColumn[]): number[] {
  return header.flatMap((c, i) => (/\bfloat(32|64)\b|\bbfloat16\b/.test(c.type) ? [i] : []));
}

/** The engine writes a negative NaN as `"-nan"`; Proton prints every NaN as `nan` (issue 13). */
function positiveNan(v: unknown): unknown {
  if (v === '-nan') return 'nan';
  if (Array.isArray(v)) return v.map(positiveNan);
  if (v !== null && typeof v === 'object' && !isLosslessNumber(v)) {
    return Object.fromEntries(
      Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, positiveNan(x)]),
    );
  }
  return v;
}

/**
 * Rows from the engine are JSON array lines (JSONCompactEachRow). Most pass through untouched; when
 * the header has 128/256-bit integers those values are rewritten as strings, without losing digits,
 * and a `-nan` in a float column becomes `nan`.
 */
export function rowsFromLines(
  text: string,
  wide: readonly number[],
  floats: readonly number[] = [],
): string[] {
  const lines = text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  if (wide.length === 0 && (floats.length === 0 || !text.includes('"-nan"'))) return lines;
  return lines.map((line) => {
    const nan = floats.length > 0 && line.includes('"-nan"');
    if (wide.length === 0 && !nan) return line;
    const row = parse(line) as unknown[];
    for (const i of wide) {
      const v = row[i];
      if (isLosslessNumber(v)) row[i] = v.toString();
    }
    if (nan) for (const i of floats) row[i] = positiveNan(row[i]);
    return stringify(row) ?? line;
  });
}
