import type { ResultColumn } from '../queries/query-types.ts';
import type { StreamColumn } from '../stream/stream-definition.ts';

/**
 * A view's conditions answer `bool` (bool-results.ts) while its target stream may keep them in
 * another type (a `uint8` column made before streaming results answered bool, or declared so).
 * Proton writes a bool into such a column as its number (1/0), or its text into a string column;
 * the ingest path refuses JSON true/false for numeric columns, so the writer converts them first.
 * Answers, per result column index, the conversion its values need (none for bool targets).
 */
export function boolConversions(
  header: readonly ResultColumn[],
  targetColumns: readonly StreamColumn[],
): Map<number, (v: unknown) => unknown> {
  const out = new Map<number, (v: unknown) => unknown>();
  header.forEach((h, i) => {
    if (!/^(nullable\()?bool\)?$/.test(h.type)) return;
    const target = targetColumns.find((c) => c.name === h.name);
    if (!target) return;
    const type = target.type.replace(/^(nullable|low_cardinality)\((.*)\)$/, '$2');
    if (/^(u?int\d+|float\d+|decimal)/.test(type))
      out.set(i, (v) => (typeof v === 'boolean' ? Number(v) : v));
    else if (/^(string|fixed_string)/.test(type)) out.set(i, (v) => (typeof v === 'boolean' ? String(v) : v));
  });
  return out;
}
