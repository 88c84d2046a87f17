import { err } from '../errors/tributary-error.ts';
import { alias, call, ident, num } from '../sql/ast/build.ts';
import type { Expr } from '../sql/ast/expression.ts';
import type { FromItem, Query, SelectQuery, TableFunctionRef } from '../sql/ast/query.ts';
import { NO_SPAN } from '../sql/ast/span.ts';
import type { TableResolver } from '../sql/translator/resolver.ts';
import { splitWindowArgs } from '../sql/translator/window-sources.ts';
import { STATE_TABLE, splitAggregation } from './aggregate-split.ts';
import { retractNetRows } from './retracting-input.ts';
import type { SessionOptions } from './session-tracker.ts';
import { SqlTemplate } from './sql-template.ts';
import { substreamKey } from './substreams.ts';
import { intervalMillis, intervalOf } from './window-interval.ts';

/** The table name a session query's emit reads; the executor fills in the rows of closed sessions. */
export const SESSION_ROWS_TABLE = '__trb_session';
export const SESSION_ROWS = '__TRB_SESSION_ROWS__';
/** Column of the session rows holding their time column's value (the window bounds' type). */
const SESSION_TIME = '__trb_session_time';
/** Column of the session rows holding their substream's emit version (emit_version() is per substream). */
export const SESSION_VERSION = '__trb_emit_version';

/** What the executor needs to run a session-window aggregation. */
export interface SessionProgram {
  readonly options: Omit<SessionOptions, 'delayMs'>;
  /** Per range: `[_tp_sn, event ms, substream key, start condition, end condition]` in sn order. */
  readonly assign: SqlTemplate;
  /** Per range: the window source's rows with `_tp_sn`, for aggregating closed sessions. */
  readonly sourceRows: SqlTemplate;
  /** The user's aggregation over `__TRB_SESSION_ROWS__` (rows with window_start/window_end). */
  readonly emit: SqlTemplate;
}

/** The session's start/end conditions: `start, end` (both inclusive) or `[start, end)` forms. */
function conditions(rest: readonly Expr[]): {
  start: Expr;
  end: Expr;
  startInclusive: boolean;
  endInclusive: boolean;
} {
  const [a, b] = rest;
  if (a?.kind === 'Range')
    return { start: a.start, end: a.end, startInclusive: a.startInclusive, endInclusive: a.endInclusive };
  // `[start, end]` parses as an array and `(start, end)` as a tuple: inclusive / exclusive bounds.
  if (!b && (a?.kind === 'Array' || a?.kind === 'Tuple') && a.elements.length === 2) {
    const inclusive = a.kind === 'Array';
    return {
      start: a.elements[0] as Expr,
      end: a.elements[1] as Expr,
      startInclusive: inclusive,
      endInclusive: inclusive,
    };
  }
  if (a && b) return { start: a, end: b, startInclusive: true, endInclusive: true };
  if (a)
    throw err('BAD_ARGUMENTS', { detail: 'session() takes both a start and an end condition, or neither' });
  return {
    start: { kind: 'Bool', value: true, span: NO_SPAN },
    end: { kind: 'Bool', value: false, span: NO_SPAN },
    startInclusive: true,
    endInclusive: true,
  };
}

/**
 * A session window's source as a FROM item that carries `_tp_sn`: a bound stream or derived
 * source has it; a CTE over a stream is inlined with `_tp_sn` added to its columns.
 */
function sourceItem(source: Expr, ctes: ReadonlyMap<string, Query>): FromItem {
  if (source.kind === 'Identifier') {
    const name = source.parts[source.parts.length - 1] as string;
    const cte = source.parts.length === 1 ? ctes.get(name) : undefined;
    if (cte) {
      if (cte.kind !== 'Select')
        throw err('NOT_IMPLEMENTED', { detail: 'a session() over a UNION is not supported' });
      return {
        kind: 'SubqueryTable',
        query: { ...cte, columns: [...cte.columns, ident('_tp_sn')] },
        alias: name,
        span: NO_SPAN,
      };
    }
    return {
      kind: 'Table',
      ...(source.parts.length === 2 ? { database: source.parts[0] } : {}),
      name,
      span: NO_SPAN,
    };
  }
  if (source.kind === 'Subquery' && source.query.kind === 'Select') {
    return {
      kind: 'SubqueryTable',
      query: { ...source.query, columns: [...source.query.columns, ident('_tp_sn')] },
      span: NO_SPAN,
    };
  }
  throw err('BAD_ARGUMENTS', { detail: 'session() needs a stream, a view or a subquery as its source' });
}

/** Replace the session() table function in a FROM tree by the session-rows table. */
function withSessionRows(from: FromItem, w: TableFunctionRef, alias: string): FromItem {
  if (from === w) return { kind: 'Table', name: SESSION_ROWS_TABLE, alias, span: NO_SPAN };
  if (from.kind === 'Join')
    return {
      ...from,
      left: withSessionRows(from.left, w, alias),
      right: withSessionRows(from.right, w, alias),
    };
  if (from.kind === 'ArrayJoin') return { ...from, left: withSessionRows(from.left, w, alias) };
  return from;
}

export function planSession(
  select: SelectQuery,
  w: TableFunctionRef,
  translate: (q: SelectQuery, resolver?: TableResolver) => string,
  resolver: TableResolver,
  /** The source is a changelog (its rows carry `_tp_delta`): names it in refusals (retraction.ts). */
  retract?: string,
): SessionProgram {
  const args = splitWindowArgs('session', w.args, 2);
  const time = args.timeColumn ?? ident('_tp_time');
  const [idleExpr, maxExpr] = args.intervals;
  const idle = intervalMillis(intervalOf(idleExpr as Expr, 'session() idle interval'));
  const maxLength = maxExpr ? intervalMillis(intervalOf(maxExpr, 'session() maximum length')) : 5 * idle;
  const cond = conditions(args.rest);
  const ctes = new Map<string, Query>();
  for (const c of select.with ?? []) if (c.kind === 'Cte') ctes.set(c.name, c.query);
  const from = sourceItem(args.source, ctes);
  const keys = select.partitionBy ?? [];
  const key = substreamKey(keys);
  const ms = call('to_unix_timestamp64_milli', call('to_datetime64', time, num(3)));
  const withCtes = select.with ? { with: select.with } : {};

  const assign: SelectQuery = {
    kind: 'Select',
    distinct: false,
    ...withCtes,
    columns: [
      ident('_tp_sn'),
      alias(ms, '__ts'),
      alias(key, '__key'),
      alias(call('to_uint8', cond.start), '__s'),
      alias(call('to_uint8', cond.end), '__e'),
    ],
    from,
    orderBy: [{ kind: 'OrderItem', expr: ident('_tp_sn'), span: NO_SPAN }],
    span: NO_SPAN,
  };
  // A stream or derived source hides `_tp_sn` from `*`; an inlined subquery already selects it.
  // The time column once more under its own name: the window bounds take its type (a derived
  // source's `*` does not show `_tp_time`).
  const sourceRows: SelectQuery = {
    kind: 'Select',
    distinct: false,
    ...withCtes,
    columns:
      from.kind === 'Table'
        ? [{ kind: 'Asterisk', span: NO_SPAN }, ident('_tp_sn'), alias(time, SESSION_TIME)]
        : [{ kind: 'Asterisk', span: NO_SPAN }, alias(time, SESSION_TIME)],
    from,
    span: NO_SPAN,
  };
  // The user's aggregation over the rows of closed sessions; substream keys join the GROUP BY.
  const groupItems = [...(select.groupBy?.items ?? []), ...keys];
  const { partitionBy: _p, ...rest } = select;
  const sourceAlias =
    w.alias ?? (args.source.kind === 'Identifier' ? (args.source.parts.at(-1) as string) : 'session');
  const grouped: SelectQuery = {
    ...rest,
    from: withSessionRows(select.from as FromItem, w, sourceAlias),
    groupBy: { kind: 'GroupBy', items: groupItems, withTotals: false, span: NO_SPAN },
  };
  const emitResolver: TableResolver = {
    ...resolver,
    resolve: (db, name) =>
      db === undefined && name === SESSION_ROWS_TABLE
        ? {
            kind: 'engine_table',
            engineSql: SESSION_ROWS,
            hiddenColumns: ['_tp_sn', '__sid', SESSION_VERSION, SESSION_TIME],
          }
        : resolver.resolve(db, name),
  };
  return {
    options: {
      idleMs: idle,
      maxLengthMs: maxLength,
      startInclusive: cond.startInclusive,
      endInclusive: cond.endInclusive,
    },
    assign: new SqlTemplate(translate(assign)),
    sourceRows: new SqlTemplate(translate(sourceRows)),
    emit: new SqlTemplate(
      retract === undefined
        ? translate(grouped, emitResolver)
        : retractingEmit(grouped, retract, (q, r) => translate(q, r), emitResolver),
    ),
  };
}

/**
 * The emit of a session aggregation over a changelog (rows with `_tp_delta`), as Proton's retracting
 * aggregates answer it: each session's rows netted per group and argument tuple (the fold of
 * aggregate-split.ts over the session rows), the aggregates computed over the live tuples
 * (retracting-input.ts), a group whose rows all cancelled out emitted with the aggregates of none.
 */
function retractingEmit(
  grouped: SelectQuery,
  retract: string,
  translate: (q: SelectQuery, resolver: TableResolver) => string,
  resolver: TableResolver,
): string {
  const split = splitAggregation(grouped, { window: false, retract });
  const net = retractNetRows(split, `(${translate(split.fold, resolver)})`, '1');
  return translate(split.emit, {
    ...resolver,
    resolve: (db, name) =>
      db === undefined && name === STATE_TABLE
        ? { kind: 'engine_table', engineSql: net }
        : resolver.resolve(db, name),
  });
}

/** The rows of the given sessions with their window bounds, as a FROM subquery. */
export function sessionRowsSql(
  sourceRows: string,
  sessions: readonly { id: number; start: number; end: number; sns: readonly number[]; version?: number }[],
): string {
  const sns: number[] = [];
  const sids: number[] = [];
  for (const s of sessions)
    for (const sn of s.sns) {
      sns.push(sn);
      sids.push(s.id);
    }
  const ids = sessions.map((s) => s.id).join(', ');
  const bound = (values: number[]) =>
    `CAST(fromUnixTimestamp64Milli(transform(__sid, [${ids}], [${values.join(', ')}], toInt64(0))), toTypeName(${SESSION_TIME}))`;
  const inner = `SELECT *, transform(_tp_sn, [${sns.join(', ')}], [${sids.join(', ')}], toUInt64(0)) AS __sid FROM (${sourceRows}) WHERE _tp_sn IN (${sns.join(', ')})`;
  const versions = sessions.map((s) => s.version ?? 0).join(', ');
  return `(SELECT *, ${bound(sessions.map((s) => s.start))} AS window_start, ${bound(sessions.map((s) => s.end))} AS window_end, transform(__sid, [${ids}], [${versions}], toUInt64(0)) AS ${SESSION_VERSION} FROM (${inner}))`;
}
