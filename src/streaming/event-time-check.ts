import { err, type TributaryError } from '../errors/tributary-error.ts';
import type { Expr } from '../sql/ast/expression.ts';
import type { Query } from '../sql/ast/query.ts';
import { type AnyNode, walk } from '../sql/ast/walk.ts';
import type { TableResolver } from '../sql/translator/resolver.ts';
import { splitWindowArgs } from '../sql/translator/window-sources.ts';
import { hasEventTime, type StreamDefinition, TP_TIME } from '../stream/stream-definition.ts';

/**
 * What needs a stream's event time, over a stream that has none. A stream created with a table
 * ENGINE (`Memory`, `MergeTree`, ...) is a plain table, as in Proton: it has only its declared
 * columns, so `_tp_time` is unknown there (Proton: unknown identifier, code 47). These checks say so
 * before the engine would, naming the stream and why.
 */
export function noEventTimeError(
  stream: { db?: string | undefined; name: string; tableEngine?: string | undefined },
  use: string,
): TributaryError {
  const name = stream.db ? `${stream.db}.${stream.name}` : stream.name;
  const why = stream.tableEngine
    ? `it was created with ENGINE = ${stream.tableEngine}, a plain table with only its declared columns`
    : 'it has only its declared columns';
  return err('UNKNOWN_IDENTIFIER', {
    name: TP_TIME,
    hint: ` (stream ${name} has no ${TP_TIME} column: ${why}; ${use})`,
  });
}

/** Refuse `use` (what needs the event time) over a stream without `_tp_time`. */
export function requireEventTime(def: StreamDefinition, use: string): void {
  if (!hasEventTime(def)) throw noEventTimeError(def, use);
}

const WINDOWS = new Set(['tumble', 'hop', 'session']);

function isEventTime(e: Expr): boolean {
  return e.kind === 'Identifier' && e.parts[e.parts.length - 1] === TP_TIME;
}

/** The stream a window reads, when named directly (`s`, `db.s`, `table(s)`). */
function namedSource(e: Expr | undefined): { db: string | undefined; name: string } | undefined {
  if (e?.kind === 'Function' && e.name.toLowerCase() === 'table' && e.args.length === 1)
    return namedSource(e.args[0]);
  if (e?.kind !== 'Identifier' || e.parts.length > 2) return undefined;
  return e.parts.length === 2
    ? { db: e.parts[0], name: e.parts[1] as string }
    : { db: undefined, name: e.parts[0] as string };
}

/**
 * Every tumble/hop/session window of `query` (any level, historical `table(tumble(...))` too)
 * whose time column is `_tp_time` (given or, by default, implied) over a stream without it is
 * refused with UNKNOWN_IDENTIFIER naming the stream. Names of CTEs are not streams; windows whose
 * arguments do not parse are left to the planner's own errors.
 */
export function checkWindowEventTime(query: Query, resolver: TableResolver): void {
  const ctes = new Set<string>();
  walk(query, (n) => {
    if (n.kind === 'Cte') ctes.add((n as unknown as { name: string }).name);
    return undefined;
  });
  walk(query, (n: AnyNode) => {
    if (n.kind !== 'TableFunction' && n.kind !== 'Function') return undefined;
    const f = n as unknown as { name: string; args: readonly Expr[] };
    const fn = f.name.toLowerCase();
    if (!WINDOWS.has(fn)) return undefined;
    const source = namedSource(f.args[0]);
    if (!source || (source.db === undefined && ctes.has(source.name))) return undefined;
    let time: Expr;
    try {
      time = splitWindowArgs(fn, f.args, 1).timeColumn ?? {
        kind: 'Identifier',
        parts: [TP_TIME],
        span: n.span,
      };
    } catch {
      return undefined;
    }
    if (!isEventTime(time)) return undefined;
    const r = resolver.resolve(source.db, source.name);
    if (r?.kind !== 'stream' || !r.columns || r.columns.some((c) => c.name === TP_TIME)) return undefined;
    throw noEventTimeError(
      { db: r.database ?? source.db, name: r.name ?? source.name, tableEngine: r.tableEngine },
      `name a time column of it as the window's second argument, e.g. ${fn}(${source.name}, <column>, ...)`,
    );
  });
}
