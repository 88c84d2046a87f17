import type { Query } from '../sql/ast/query.ts';
import { NO_SPAN } from '../sql/ast/span.ts';

/**
 * The source of a session aggregation over a versioned_kv stream: the stream's changelog (its
 * latest row per key, then each new version as -1 of the previous one and +1 of itself), run as a
 * query of its own (`SELECT *, _tp_time FROM s EMIT CHANGELOG`) whose rows each get their own
 * sequence number. A session keeps its rows by sequence number and reads them again when it is
 * emitted; read directly, a retraction would carry the sequence number of the version it takes
 * back (changelog-rows.ts), which a later read does not give back.
 */
export function sessionChangelogSource(db: string | undefined, name: string): Query {
  return {
    kind: 'Select',
    distinct: false,
    columns: [{ kind: 'Asterisk', span: NO_SPAN }],
    from: { kind: 'Table', ...(db !== undefined ? { database: db } : {}), name, span: NO_SPAN },
    emit: { kind: 'Emit', afterWatermark: false, onUpdate: false, mode: 'CHANGELOG', span: NO_SPAN },
    span: NO_SPAN,
  };
}
