import { err } from '../errors/tributary-error.ts';
import type { PreparedBatch } from './ingest-batch.ts';
import type { ProducerTag } from './producer-marks.ts';
import type { StreamSchema } from './stream-schema.ts';

/**
 * A batch of rows the engine itself wrote (JSONCompactEachRow lines of `columns`, a materialized
 * view's step output): its payload is the lines as they are, comma-separated as in a compact
 * body's `data`, so the same writer groups it with compact ingests of the same columns. The values
 * are not parsed or checked here (the engine made them from values of its own types, and its
 * insert refuses any that do not fit the stream's columns); the column names are checked.
 */
export function engineRowsBatch(
  schema: StreamSchema,
  columns: readonly string[],
  lines: readonly string[],
  options: { producer?: ProducerTag } = {},
): PreparedBatch {
  const stream = schema.streamName;
  const seen = new Set<string>();
  for (const c of columns) {
    if (seen.has(c)) throw err('INGEST_MALFORMED', { detail: `column ${c} appears twice in "columns"` });
    seen.add(c);
    const rule = schema.rule(c);
    if (!rule) throw err('INGEST_UNKNOWN_COLUMN', { column: c, stream, at: '' });
    if (!rule.writable) throw err('INGEST_READ_ONLY_COLUMN', { column: c, stream, detail: rule.reason });
  }
  return {
    rows: lines.length,
    shape: `C\u0001${columns.join('\u0001')}`,
    format: 'JSONCompactEachRow',
    columns,
    payload: Buffer.from(lines.join(',')),
    ...(options.producer ? { producer: options.producer } : {}),
  };
}
