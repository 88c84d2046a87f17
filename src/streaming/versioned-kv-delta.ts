import type { Expr } from '../sql/ast/expression.ts';
import type { SelectQuery } from '../sql/ast/query.ts';
import { NO_SPAN } from '../sql/ast/span.ts';
import { TP_DELTA } from '../stream/stream-definition.ts';
import type { BoundSource, StreamSource } from './stream-bindings.ts';

/**
 * `_tp_delta` of a versioned_kv stream. Such a stream stores versions, not signed rows: read on its
 * own (a tail, `table(s)`, a view or CTE that picks its columns) each row is the insert of its
 * version, so `_tp_delta` reads as 1, as in Proton, where `SELECT i, _tp_delta FROM vk` is valid.
 * Where the sign matters the stream is read as a changelog instead (changelog-rows.ts): under a
 * retracting aggregation, and in a tail with `EMIT CHANGELOG`, where a new version of a key first
 * retracts the previous one (`-1`), then adds itself (`+1`).
 */
export function withVersionedDelta(read: string): string {
  return `(SELECT *, toInt8(1) AS ${TP_DELTA} FROM ${read})`;
}

/** A source read as a plain versioned_kv stream, whose range read then carries `_tp_delta` = 1. */
export function readsVersionedDelta(source: BoundSource): boolean {
  return source.kind === 'stream' && source.definition.mode === 'versioned_kv';
}

/**
 * The versioned_kv stream an `EMIT CHANGELOG` tail reads alone (directly, or through subqueries,
 * views or CTEs that filter and project it), which it then reads as its changelog.
 */
export function changelogTailSource(
  select: SelectQuery,
  sources: readonly BoundSource[],
): StreamSource | undefined {
  const only = sources.length === 1 ? sources[0] : undefined;
  if (only?.kind !== 'stream' || only.definition.mode !== 'versioned_kv') return undefined;
  if (select.from?.kind === 'Join') return undefined;
  return only;
}

/** The select list with `_tp_delta` last, unless it names it already (or reads `*`). */
export function withDeltaColumn(select: SelectQuery): SelectQuery {
  const named = select.columns.some(
    (c) =>
      c.kind === 'Asterisk' ||
      (c.kind === 'Identifier' && c.parts.at(-1) === TP_DELTA) ||
      (c.kind === 'Alias' && c.alias === TP_DELTA),
  );
  if (named) return select;
  const delta: Expr = { kind: 'Identifier', parts: [TP_DELTA], span: NO_SPAN };
  return { ...select, columns: [...select.columns, delta] };
}
