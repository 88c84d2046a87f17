import { quoteIdent } from '../engine/settings-clause.ts';
import { err } from '../errors/tributary-error.ts';
import type { Expr } from '../sql/ast/expression.ts';
import type { FromItem, Query, SelectQuery, TableFunctionRef, WithItem } from '../sql/ast/query.ts';
import type { StreamDefinition } from '../stream/stream-definition.ts';
import { rangeSource } from '../stream/stream-reads.ts';
import { derivedChangelogSide } from './changelog-derived-side.ts';
import type { ChangelogConversion } from './changelog-rows.ts';
import type { BoundSource } from './stream-bindings.ts';

/**
 * `changelog(s, key... [, version_col][, drop_late_rows])` in a streaming query
 * (streaming-sql-notes.md §1.11; Proton's TableFunctionChangelog): the function is taken out of
 * the FROM, leaving its bound source, and the source is read as the changelog of its keys
 * (changelog-rows.ts). The arguments follow Proton: identifiers are key columns; a last boolean
 * is `drop_late_rows`, and when it is true the last identifier is the version column (a row with
 * an older version than its key's current row is dropped). `changelog(vk[, drop_late_rows])` of a
 * versioned_kv stream uses the stream's primary key (and version column).
 */
export interface ChangelogFunctions {
  readonly select: SelectQuery;
  /** Per bound source index: how its range is read as a changelog. */
  readonly conversions: ReadonlyMap<number, ChangelogConversion>;
  /**
   * The right side of `append JOIN changelog(s, key...)`: a join reads only the latest row per key
   * of it, which is the versioned_kv enrichment of that stream by these keys, from the query's
   * start (Proton's 0027 ids 4-8). Per source index: the definition the join planner sees.
   */
  readonly enrichments: ReadonlyMap<number, StreamDefinition>;
}

const usage =
  'changelog(stream, key_col... [, version_col, drop_late_rows]) or changelog(versioned_kv_stream [, drop_late_rows])';

export function bindChangelogFunctions(
  query: SelectQuery,
  sources: readonly BoundSource[],
  derivedHeader: (index: number) => readonly string[],
): ChangelogFunctions {
  const conversions = new Map<number, ChangelogConversion>();
  const enrichments = new Map<number, StreamDefinition>();
  let select = query;
  if (!select.from) return { select, conversions, enrichments };

  const convert = (args: readonly Expr[]): number | undefined => {
    const [source, ...rest] = args;
    const index = markerIndex(source);
    if (index === undefined) return undefined;
    const bound = sources[index];
    if (!bound) return undefined;
    let dropLate = false;
    const last = rest.at(-1);
    if (last?.kind === 'Bool') {
      dropLate = (last as unknown as { value: boolean }).value;
      rest.pop();
    }
    const names = rest.map((a) => {
      if (a.kind !== 'Identifier')
        throw err('BAD_ARGUMENTS', { detail: `changelog() takes column names as keys; usage: ${usage}` });
      return quoteIdent(a.parts.at(-1) as string);
    });
    if (bound.kind === 'stream') {
      const def = bound.definition;
      if (def.mode === 'changelog' || def.mode === 'changelog_kv') {
        throw err('NOT_IMPLEMENTED', {
          detail: `changelog() of a ${def.mode} stream (${def.name}) is not supported: its rows carry _tp_delta already; read the stream itself`,
        });
      }
      if (def.mode === 'versioned_kv') {
        if (names.length > 0)
          throw err('BAD_ARGUMENTS', {
            detail: `changelog() of a versioned_kv stream takes its primary key; usage: ${usage}`,
          });
        conversions.set(index, {
          from: rangeSource(def),
          keys: def.keyColumns,
          ...(dropLate ? { version: quoteIdent(def.versionColumn) } : {}),
        });
        return index;
      }
    } else if (derivedHeader(index).includes('_tp_delta')) {
      throw err('NOT_IMPLEMENTED', {
        detail: 'changelog() of a query that emits a changelog (EMIT CHANGELOG) is not supported',
      });
    }
    const version = dropLate ? names.pop() : undefined;
    if (names.length === 0)
      throw err('BAD_ARGUMENTS', {
        detail: `changelog() needs at least one key column${dropLate ? ' besides the version column' : ''}; usage: ${usage}`,
      });
    conversions.set(index, {
      from: bound.kind === 'stream' ? rangeSource(bound.definition) : bound.table,
      keys: names,
      ...(version ? { version } : {}),
    });
    return index;
  };

  const unsupported = () =>
    err('NOT_IMPLEMENTED', {
      detail:
        'changelog() over a CTE, a subquery or a view that does not aggregate is not supported yet; apply it to a stream, or to a view or subquery that aggregates',
    });

  // changelog() in a subquery or CTE the query reads (`FROM (SELECT * FROM changelog(s, k))`).
  const nested = (q: Query): Query => {
    if (q.kind !== 'Select') return q;
    const withItems = q.with?.map((w): WithItem => (w.kind === 'Cte' ? { ...w, query: nested(w.query) } : w));
    return {
      ...q,
      ...(withItems ? { with: withItems } : {}),
      ...(q.from && q.from.kind !== 'Join' && q.from.kind !== 'ArrayJoin' ? { from: rewrite(q.from) } : {}),
    };
  };
  const rewrite = (item: FromItem): FromItem => {
    if (item.kind === 'SubqueryTable') return { ...item, query: nested(item.query) };
    if (item.kind !== 'TableFunction') return item;
    const lower = item.name.toLowerCase();
    if (lower === 'changelog') {
      const index = convert(item.args);
      if (index === undefined) throw unsupported();
      return { kind: 'Table', name: `__trb_src_${index}`, alias: item.alias ?? item.name, span: item.span };
    }
    if (['tumble', 'hop', 'session', 'dedup'].includes(lower)) {
      const [first, ...rest] = item.args;
      if (first?.kind === 'Function' && first.name.toLowerCase() === 'changelog') {
        const index = convert(first.args);
        if (index === undefined) throw unsupported();
        const marker: Expr = { kind: 'Identifier', parts: [`__trb_src_${index}`], span: first.span };
        return { ...item, args: [marker, ...rest] } as TableFunctionRef;
      }
    }
    return item;
  };
  const withItems = select.with?.map(
    (w): WithItem => (w.kind === 'Cte' ? { ...w, query: nested(w.query) } : w),
  );
  if (withItems) select = { ...select, with: withItems };
  const from = query.from as FromItem;
  if (from.kind === 'Join') {
    // changelog(s, key...) as a side of a chain of joins (`a JOIN changelog(b, k) JOIN c`, or
    // `changelog(a, k) JOIN changelog(b, kk)`): the side is s read as its latest row per key from
    // the query's start, a versioned_kv stream keyed by these keys (Proton's 0027 ids 3-8).
    let failed = false;
    const side = (item: FromItem): FromItem => {
      if (item.kind !== 'TableFunction' || item.name.toLowerCase() !== 'changelog') return item;
      const index = convert(item.args);
      const source = index !== undefined ? sources[index] : undefined;
      const conversion = index !== undefined ? conversions.get(index) : undefined;
      const kv = source?.kind === 'stream' && source.definition.mode === 'versioned_kv';
      if (source?.kind === 'derived' && index !== undefined && conversion && !conversion.version) {
        // changelog() of a CTE, subquery or view run as its own query (changelog-derived-side.ts).
        conversions.delete(index);
        enrichments.set(index, derivedChangelogSide(source, derivedHeader(index), conversion.keys));
        return { kind: 'Table', name: `__trb_src_${index}`, alias: item.alias ?? item.name, span: item.span };
      }
      if (index === undefined || source?.kind !== 'stream' || !conversion || (!kv && conversion.version)) {
        failed = true;
        return item;
      }
      conversions.delete(index);
      enrichments.set(
        index,
        kv
          ? source.definition
          : {
              ...source.definition,
              mode: 'versioned_kv',
              keyColumns: conversion.keys,
              versionColumn: '_tp_sn',
            },
      );
      return { kind: 'Table', name: `__trb_src_${index}`, alias: item.alias ?? item.name, span: item.span };
    };
    const chain = (item: FromItem): FromItem =>
      item.kind === 'Join' ? { ...item, left: chain(item.left), right: side(item.right) } : side(item);
    const joined = chain(from);
    // Any other changelog() inside a join is left to the join planner (which refuses it).
    if (failed) {
      conversions.clear();
      enrichments.clear();
      return { select, conversions, enrichments };
    }
    conversions.clear();
    return { select: { ...select, from: joined }, conversions, enrichments };
  }
  if (from.kind === 'ArrayJoin') return { select, conversions, enrichments };
  return { select: { ...select, from: rewrite(from) }, conversions, enrichments };
}

function markerIndex(e: Expr | undefined): number | undefined {
  if (e?.kind !== 'Identifier' || e.parts.length !== 1) return undefined;
  const m = /^__trb_src_(\d+)$/.exec(e.parts[0] as string);
  return m ? Number(m[1]) : undefined;
}
