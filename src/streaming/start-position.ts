import type { Engine } from '../engine/engine.ts';
import { err } from '../errors/tributary-error.ts';
import { conjuncts } from '../sql/analyzer/query-facts.ts';
import { rewindPredicates } from '../sql/analyzer/rewind.ts';
import type { Expr, Setting } from '../sql/ast/expression.ts';
import type { FromItem, Query, SelectQuery } from '../sql/ast/query.ts';
import { walk } from '../sql/ast/walk.ts';
import { rangeSource } from '../stream/stream-reads.ts';
import { requireEventTime } from './event-time-check.ts';
import type { BoundSource, StreamSource } from './stream-bindings.ts';

/** Where a source starts: rows with `_tp_sn <= after` are skipped (-1 reads everything). */
export interface StartPosition {
  readonly after: number;
}

interface StartContext {
  readonly engine: Engine;
  committedSn(key: string): number;
}

const RELATIVE = /^-(\d+)(ms|s|m|h|d|w|M|q|y)$/;
const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

/** `-10s`, `-2h`, `-1M`: now minus that much (calendar units in UTC), epoch ms. */
function relativeTime(text: string, now = Date.now()): number | undefined {
  const m = RELATIVE.exec(text);
  if (!m) return undefined;
  const n = Number(m[1]);
  const unit = m[2] as string;
  if (unit in UNIT_MS) return now - n * (UNIT_MS[unit] as number);
  const d = new Date(now);
  const months = unit === 'M' ? n : unit === 'q' ? 3 * n : 12 * n;
  d.setUTCMonth(d.getUTCMonth() - months);
  return d.getTime();
}

function settingText(s: Setting | undefined): string | undefined {
  if (!s) return undefined;
  const v = s.value;
  if (v.kind === 'String') return v.value;
  if (v.kind === 'Number') return v.text;
  if (v.kind === 'Unary' && v.op === '-' && v.operand.kind === 'Number') return `-${v.operand.text}`;
  return undefined;
}

/** The first sequence number of the source at or after `timeMs` (committed + 1 when none). */
async function firstSnAtOrAfter(source: StreamSource, timeMs: number, ctx: StartContext): Promise<number> {
  requireEventTime(source.definition, "seek_to a time needs it: seek to 'earliest' or a sequence number");
  const r = await ctx.engine.query(
    `SELECT min(_tp_sn) FROM ${rangeSource(source.definition)} WHERE _tp_time >= fromUnixTimestamp64Milli(toInt64(${Math.floor(timeMs)}))`,
    { format: 'TSV' },
  );
  const text = r.text().trim();
  const n = Number(text);
  if (text === '' || text === '\\N' || !Number.isFinite(n) || n === 0) {
    // min() over no rows answers 0; tell "none" from "sn 0" by counting.
    const c = await ctx.engine.query(
      `SELECT count() FROM ${rangeSource(source.definition)} WHERE _tp_time >= fromUnixTimestamp64Milli(toInt64(${Math.floor(timeMs)}))`,
      { format: 'TSV' },
    );
    return c.text().trim() === '0' ? ctx.committedSn(source.key) + 1 : 0;
  }
  return n;
}

/** `seek_to`: latest (default), earliest, a sequence number, an absolute or relative time. */
async function seekTo(value: string, source: StreamSource, ctx: StartContext): Promise<number> {
  const v = (value.split(',')[0] ?? '').trim();
  if (v === '' || v.toLowerCase() === 'latest') return ctx.committedSn(source.key);
  if (v.toLowerCase() === 'earliest') return -1;
  if (/^\d+$/.test(v)) return Number(v) - 1;
  const relative = relativeTime(v);
  const absolute = relative ?? Date.parse(v.includes('T') || v.includes('Z') ? v : v.replace(' ', 'T') + 'Z');
  if (!Number.isFinite(absolute)) {
    throw err('BAD_ARGUMENTS', {
      detail: `seek_to must be 'latest', 'earliest', a sequence number, an ISO time or a relative time like '-10s', got '${value}'`,
    });
  }
  return (await firstSnAtOrAfter(source, absolute, ctx)) - 1;
}

function disjuncts(e: Expr): Expr[] {
  if (e.kind === 'Binary' && e.op === 'OR') return [...disjuncts(e.left), ...disjuncts(e.right)];
  return [e];
}

function isEarliestTs(e: Expr): boolean {
  return e.kind === 'Function' && ['earliest_ts', 'earliest_timestamp'].includes(e.name.toLowerCase());
}

type RewindColumn = '_tp_time' | '_tp_sn';

/** Output names of a query that stand for `_tp_time` / `_tp_sn` (`_tp_time AS event_time`, or passed through). */
function rewindAliasesOf(q: Query | undefined, ctes: ReadonlyMap<string, Query>): Map<string, RewindColumn> {
  const out = new Map<string, RewindColumn>();
  if (q?.kind !== 'Select') return out;
  const inner = sourceAliases(q, ctes);
  for (const c of q.columns) {
    const [expr, name] = c.kind === 'Alias' ? [c.expr, c.alias] : [c, undefined];
    if (expr.kind !== 'Identifier') continue;
    const last = expr.parts[expr.parts.length - 1] as string;
    const column: RewindColumn | undefined =
      last === '_tp_time' || last === '_tp_sn' ? last : expr.parts.length === 1 ? inner.get(last) : undefined;
    if (column) out.set(name ?? last, column);
  }
  if (q.columns.some((c) => c.kind === 'Asterisk')) for (const [k, v] of inner) out.set(k, v);
  return out;
}

/** The rewind aliases a SELECT's sources bring into its scope (CTEs, subqueries, views expanded inline). */
function sourceAliases(q: SelectQuery, outer: ReadonlyMap<string, Query>): Map<string, RewindColumn> {
  const ctes = new Map(outer);
  for (const w of q.with ?? []) if (w.kind === 'Cte') ctes.set(w.name, w.query);
  const out = new Map<string, RewindColumn>();
  const add = (m: Map<string, RewindColumn>) => {
    for (const [k, v] of m) out.set(k, v);
  };
  const visit = (f: FromItem | undefined) => {
    if (!f) return;
    if (f.kind === 'Join') {
      visit(f.left);
      visit(f.right);
    } else if (f.kind === 'ArrayJoin') visit(f.left);
    else if (f.kind === 'SubqueryTable') add(rewindAliasesOf(f.query, ctes));
    else if (f.kind === 'Table' && f.database === undefined) add(rewindAliasesOf(ctes.get(f.name), ctes));
    else if (f.kind === 'TableFunction') {
      const arg = f.args[0];
      if (arg?.kind === 'Subquery') add(rewindAliasesOf(arg.query, ctes));
      else if (arg?.kind === 'Identifier' && arg.parts.length === 1)
        add(rewindAliasesOf(ctes.get(arg.parts[0] as string), ctes));
    }
  };
  visit(q.from);
  return out;
}

/** Where the rewind predicates of every WHERE in the query say to start; undefined when there are none. */
function rewindStart(select: SelectQuery): number | undefined {
  let start: number | undefined;
  const ctes = new Map<string, Query>();
  for (const w of select.with ?? []) if (w.kind === 'Cte') ctes.set(w.name, w.query);
  walk(select, (n) => {
    if (n.kind !== 'Select') return undefined;
    const q = n as SelectQuery;
    const aliases = sourceAliases(q, ctes);
    const { predicates, rest } = rewindPredicates(q.where, aliases);
    // `_tp_time = a OR _tp_time = b`: a disjunction of rewind predicates rewinds too.
    for (const c of conjuncts(rest)) {
      const alternatives = disjuncts(c);
      if (
        alternatives.length > 1 &&
        alternatives.every((d) => rewindPredicates(d, aliases).predicates.length === 1)
      ) {
        start = -1;
      }
    }
    for (const p of predicates) {
      if (isEarliestTs(p.value) && p.op !== '>' && p.op !== '>=') {
        throw err('UNEXPECTED_EXPRESSION', {
          detail: `earliest_ts() can only be compared with > or >=, not ${p.op}`,
        });
      }
      let after = -1;
      if (
        p.column === '_tp_sn' &&
        p.expr.kind === 'Binary' &&
        p.value.kind === 'Number' &&
        /^\d+$/.test(p.value.text)
      ) {
        // Proton seeks to the constant itself for `>` too (the predicate then filters it out):
        // the same rows for one input, and in a join the row a predicate of the other side's
        // `_tp_sn` does not filter (join-sn-right-side.ts).
        const n = Number(p.value.text);
        if (p.op === '>' || p.op === '>=' || p.op === '=') after = n - 1;
      }
      start = start === undefined ? after : Math.min(start, after);
    }
    return undefined;
  });
  return start;
}

/**
 * The start of each source (streaming-sql-notes.md §1.4): a rewind predicate on `_tp_time` or
 * `_tp_sn` backfills (the predicate keeps filtering), `SETTINGS seek_to=...` seeks, and otherwise a
 * streaming query starts at the latest committed row.
 */
export async function startPositions(
  select: SelectQuery,
  settings: readonly Setting[],
  sources: readonly BoundSource[],
  ctx: StartContext,
): Promise<StartPosition[]> {
  const seek = settingText(settings.find((s) => s.name.toLowerCase() === 'seek_to'));
  const rewind = rewindStart(select);
  const out: StartPosition[] = [];
  for (const source of sources) {
    // A nested query's output is new with this query: read all of it.
    if (source.kind === 'derived') out.push({ after: -1 });
    else if (seek !== undefined) out.push({ after: await seekTo(seek, source, ctx) });
    else if (rewind !== undefined) out.push({ after: rewind });
    else out.push({ after: ctx.committedSn(source.key) });
  }
  return out;
}
