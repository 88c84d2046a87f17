import { isLosslessNumber, parse, stringify } from 'lossless-json';
import type { ResultColumn } from './query-types.ts';

/** Types whose values are sent as strings: 128- and 256-bit integers (DESIGN.md §6). */
const WIDE_INTEGER = /^(?:nullable\()?(?:low_cardinality\()?u?int(?:128|256)\b/;

/** Indexes of the header's columns whose values must be sent as strings. */
export function wideIntegerColumns(header: readonly ResultColumn[]): number[] {
  return header.flatMap((c, i) => (WIDE_INTEGER.test(c.type) ? [i] : []));
}

/**
 * Rows from the engine are JSON array lines (JSONCompactEachRow). Most pass through untouched; when
 * the header has 128/256-bit integers those values are rewritten as strings, without losing digits.
 */
export function rowsFromLines(text: string, wide: readonly number[]): string[] {
  const lines = text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  if (wide.length === 0) return lines;
  return lines.map((line) => {
    const row = parse(line) as unknown[];
    for (const i of wide) {
      const v = row[i];
      if (isLosslessNumber(v)) row[i] = v.toString();
    }
    return stringify(row) ?? line;
  });
}
