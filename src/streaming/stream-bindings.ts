import { err } from '../errors/tributary-error.ts';
import { isAggregation } from '../sql/analyzer/query-facts.ts';
import { isStreamingQuery } from '../sql/analyzer/streaming.ts';
import type { Expr } from '../sql/ast/expression.ts';
import type { FromItem, Query, SelectQuery, WithItem } from '../sql/ast/query.ts';
import { quoteIdentifier } from '../sql/printer/sql-text.ts';
import type { ResolvedTable, TableResolver } from '../sql/translator/resolver.ts';
import type { StreamDefinition } from '../stream/stream-definition.ts';
import { hasRangeCondition } from './join-range.ts';
import { isNestedChangelogJoin, selectingDelta } from './nested-changelog-join.ts';
import { sessionChangelogSource } from './session-changelog-source.ts';

/** What a streaming query reads incrementally: a stream, or the output of a nested streaming query. */
export type BoundSource = StreamSource | DerivedSource;

/** A stream read incrementally (not through `table()`). */
export interface StreamSource {
  readonly kind: 'stream';
  /** Position in the query's source list; also the suffix of its range placeholders. */
  readonly index: number;
  readonly definition: StreamDefinition;
  /** `db.name`, the key of the stream's committed-range notifications. */
  readonly key: string;
}

/**
 * An aggregation nested in the query (a CTE, subquery or view that aggregates over a stream): it
 * runs as its own streaming query whose emitted rows land in an engine table with their own
 * sequence numbers, which the outer query reads by range (DESIGN.md §5, "a DAG of steps").
 */
export interface DerivedSource {
  readonly kind: 'derived';
  readonly index: number;
  /** The nested query, bound and planned separately. */
  readonly query: Query;
  /** The engine table its rows go to (created when the query runs). */
  readonly table: string;
  readonly key: string;
}

/** The placeholders a step's SQL carries for the sequence range of source `i`: `(lo, hi]`. */
export const rangeMarkers = (i: number) => ({ lo: `__TRB_LO_${i}__`, hi: `__TRB_HI_${i}__` });

const MARKER_PREFIX = '__trb_src_';
/** The name a bound source takes in the query (its placeholder for the range read). */
export const markerName = (i: number) => `${MARKER_PREFIX}${i}`;

export interface BindingContext {
  readonly resolver: TableResolver;
  /** A fresh engine table name for a derived source. */
  derivedTable?(index: number): string;
  /** The definition of a stream the resolver resolved (kind `stream` or a materialized view's target). */
  streamDefinition(
    resolved: ResolvedTable,
    db: string | undefined,
    name: string,
  ): StreamDefinition | undefined;
}

/**
 * Rewrites a streaming query so that every stream it reads incrementally is replaced by a numbered
 * placeholder source; `table(s)` references keep reading the stored rows. Views over streams are
 * expanded inline (so their streams are bound too); CTE references are left to the translator.
 */
export class StreamBinder {
  readonly sources: BoundSource[] = [];
  private readonly cteScopes: Set<string>[] = [];
  /** CTE names whose body is a nested streaming aggregation, to the derived source's index. */
  private readonly derivedCtes: Map<string, number>[] = [];
  /** Per SELECT being bound, whether it aggregates. */
  private readonly aggregating: boolean[] = [];

  constructor(private readonly ctx: BindingContext) {}

  query(q: Query): Query {
    if (q.kind === 'Union') return { ...q, queries: q.queries.map((m) => this.query(m)) };
    return this.select(q);
  }

  select(q: SelectQuery): SelectQuery {
    const scope = new Set<string>();
    const derived = new Map<string, number>();
    this.cteScopes.push(scope);
    this.derivedCtes.push(derived);
    try {
      // A CTE read by changelog() runs as its own query: changelog() needs its rows in sequence.
      const changelogInputs = changelogSourceNames(q.from);
      const withItems = q.with
        ?.filter((w) => {
          if (w.kind !== 'Cte') return true;
          if (
            !this.isNestedAggregation(w.query) &&
            !(changelogInputs.has(w.name) && this.isStreaming(w.query))
          )
            return true;
          derived.set(w.name, this.derive(w.query));
          return false;
        })
        .map((w): WithItem => {
          if (w.kind !== 'Cte') return w;
          const bound = { ...w, query: this.query(w.query) };
          scope.add(w.name);
          return bound;
        });
      // An aggregation reading a subquery that joins changelog inputs: the subquery runs as its own
      // query (nested-changelog-join.ts).
      this.aggregating.push(isAggregation(q));
      let from: FromItem | undefined;
      try {
        from = q.from ? this.from(q.from) : undefined;
      } finally {
        this.aggregating.pop();
      }
      const { with: _with, ...rest } = q;
      return {
        ...rest,
        ...(withItems?.length ? { with: withItems } : {}),
        ...(from ? { from } : {}),
        ...(q.where ? { where: this.subqueriesIn(q.where) } : {}),
      };
    } finally {
      this.cteScopes.pop();
      this.derivedCtes.pop();
    }
  }

  private isStreaming(q: Query): boolean {
    return !!this.ctx.derivedTable && isStreamingQuery(q, this.ctx.resolver);
  }

  /** A query nested in FROM that aggregates over a stream: it becomes a derived source. */
  private isNestedAggregation(q: Query): boolean {
    if (!this.ctx.derivedTable || q.kind !== 'Select') return false;
    return isAggregation(q) && isStreamingQuery(q, this.ctx.resolver);
  }

  /** A streaming SELECT whose FROM is a range join (`a JOIN b ON ... AND date_diff_within(...)`). */
  private isRangeJoin(q: Query): boolean {
    if (!this.ctx.derivedTable || q.kind !== 'Select' || q.from?.kind !== 'Join') return false;
    return hasRangeCondition(q.from.on) && !isAggregation(q) && isStreamingQuery(q, this.ctx.resolver);
  }

  private derive(query: Query): number {
    const index = this.sources.length;
    const table = this.ctx.derivedTable?.(index) ?? '';
    this.sources.push({ kind: 'derived', index, query, table, key: `derived:${table}` });
    return index;
  }

  private derivedCte(name: string): number | undefined {
    for (let i = this.derivedCtes.length - 1; i >= 0; i--) {
      const index = this.derivedCtes[i]?.get(name);
      if (index !== undefined) return index;
    }
    return undefined;
  }

  /**
   * A resolver for the translator: placeholders resolve to range reads with markers. `readsDelta`:
   * whether the range read of a versioned_kv stream adds its `_tp_delta` (versioned-kv-delta.ts),
   * which `*` then does not show.
   */
  resolver(
    rangeSql: (source: BoundSource) => string,
    readsDelta: (source: BoundSource) => boolean = () => false,
  ): TableResolver {
    const base = this.ctx.resolver;
    return {
      ...base,
      resolve: (db, name) => {
        if (db === undefined && name.startsWith(MARKER_PREFIX)) {
          const source = this.sources[Number(name.slice(MARKER_PREFIX.length))];
          if (!source) return undefined;
          if (source.kind === 'derived') {
            return { kind: 'stream', engineSql: rangeSql(source), hiddenColumns: ['_tp_sn', '_tp_time'] };
          }
          const r = base.resolve(source.definition.db, source.definition.name);
          // The range read exposes `_tp_sn` (a materialized column `*` would not show); keep it out of `*`.
          const virtual = r?.virtualColumns ?? [];
          const versioned = source.definition.mode === 'versioned_kv';
          const baseHidden = (r?.hiddenColumns ?? []).filter((c) => !versioned || c !== '_tp_delta');
          const delta = versioned && readsDelta(source) ? ['_tp_delta'] : [];
          const shard = source.definition.shardedStorage ? ['_tp_shard'] : [];
          const hiddenColumns = [
            ...new Set([...baseHidden, '_tp_sn', ...shard, ...delta, ...virtual.map((v) => v.name)]),
          ];
          const engineSql = virtual.length
            ? `(SELECT *, ${virtual.map((v) => `${v.engineSql} AS ${quoteIdentifier(v.name)}`).join(', ')} FROM ${rangeSql(source)})`
            : rangeSql(source);
          return { ...(r ?? { kind: 'stream' }), kind: 'stream', engineSql, hiddenColumns };
        }
        return base.resolve(db, name);
      },
    };
  }

  private isCte(name: string): boolean {
    return this.cteScopes.some((s) => s.has(name));
  }

  private from(item: FromItem): FromItem {
    switch (item.kind) {
      case 'Join': {
        // A subquery that range-joins streams, range-joined again: its own query, whose rows the
        // outer range join reads (Proton's chained range joins, 0009 case1 id 36).
        const ranged = hasRangeCondition(item.on);
        const side = (f: FromItem): FromItem =>
          ranged && f.kind === 'SubqueryTable' && this.isRangeJoin(f.query)
            ? { kind: 'Table', name: markerName(this.derive(f.query)), alias: f.alias ?? '', span: f.span }
            : this.from(f);
        return { ...item, left: side(item.left), right: side(item.right) };
      }
      case 'ArrayJoin':
        return { ...item, left: this.from(item.left) };
      case 'SubqueryTable':
        if (
          this.isNestedAggregation(item.query) ||
          (this.aggregating.at(-1) &&
            this.ctx.derivedTable &&
            isNestedChangelogJoin(item.query, this.ctx, (n) => this.isCte(n)))
        ) {
          const index = this.derive(
            this.isNestedAggregation(item.query) ? item.query : selectingDelta(item.query as SelectQuery),
          );
          return {
            kind: 'Table',
            name: markerName(index),
            alias: item.alias ?? `__derived_${index}`,
            span: item.span,
          };
        }
        return { ...item, query: this.query(item.query) };
      case 'Table': {
        const derived = item.database === undefined ? this.derivedCte(item.name) : undefined;
        if (derived !== undefined)
          return {
            kind: 'Table',
            name: markerName(derived),
            alias: item.alias ?? item.name,
            span: item.span,
          };
        if (item.database === undefined && this.isCte(item.name)) return item;
        const bound = this.name(item.database, item.name);
        if (!bound) return item;
        const alias = item.alias ?? item.name;
        if (bound.kind === 'view')
          return { kind: 'SubqueryTable', query: bound.query, alias, span: item.span };
        return { kind: 'Table', name: markerName(bound.index), alias, span: item.span };
      }
      case 'TableFunction': {
        const lower = item.name.toLowerCase();
        if (!['tumble', 'hop', 'session', 'dedup', 'changelog'].includes(lower)) return item;
        const [source, ...rest] = item.args;
        if (!source) return item;
        // A session aggregation over a versioned_kv stream reads its changelog from a query of its
        // own (session-changelog-source.ts).
        if (lower === 'session' && this.aggregating.at(-1) && this.ctx.derivedTable) {
          const changelog = this.versionedKvChangelog(source);
          if (changelog) {
            const marker: Expr = {
              kind: 'Identifier',
              parts: [markerName(this.derive(changelog))],
              span: source.span,
            };
            return { ...item, args: [marker, ...rest], alias: item.alias ?? sourceName(source) ?? item.name };
          }
        }
        const replaced = lower === 'changelog' ? this.changelogArg(source) : this.sourceArg(source);
        if (replaced === source) return item;
        const alias = item.alias ?? sourceName(source) ?? item.name;
        return { ...item, args: [replaced, ...rest], alias };
      }
    }
  }

  /** `SELECT * ... EMIT CHANGELOG` of a versioned_kv stream `e` names (not a CTE), else undefined. */
  private versionedKvChangelog(e: Expr): Query | undefined {
    if (e.kind !== 'Identifier' || e.parts.length > 2) return undefined;
    const [db, name] =
      e.parts.length === 2 ? [e.parts[0], e.parts[1] as string] : [undefined, e.parts[0] as string];
    if (db === undefined && (this.isCte(name) || this.derivedCte(name) !== undefined)) return undefined;
    const r = this.ctx.resolver.resolve(db, name);
    if (!r || r.bounded || r.kind !== 'stream') return undefined;
    if (this.ctx.streamDefinition(r, db, name)?.mode !== 'versioned_kv') return undefined;
    return sessionChangelogSource(db, name);
  }

  /** The stream argument of a window / dedup / changelog function. */
  private sourceArg(e: Expr): Expr {
    if (e.kind === 'Identifier' && e.parts.length <= 2) {
      const [db, name] =
        e.parts.length === 2 ? [e.parts[0], e.parts[1] as string] : [undefined, e.parts[0] as string];
      const derived = db === undefined ? this.derivedCte(name) : undefined;
      if (derived !== undefined) return { kind: 'Identifier', parts: [markerName(derived)], span: e.span };
      if (db === undefined && this.isCte(name)) return e;
      const bound = this.name(db, name);
      if (!bound) return e;
      if (bound.kind === 'view') return { kind: 'Subquery', query: bound.query, span: e.span };
      return { kind: 'Identifier', parts: [markerName(bound.index)], span: e.span };
    }
    if (e.kind === 'Subquery') {
      if (this.isNestedAggregation(e.query))
        return { kind: 'Identifier', parts: [markerName(this.derive(e.query))], span: e.span };
      // A window over a subquery joining changelog inputs (left-changelog-join-nesting.ts).
      if (
        this.aggregating.at(-1) &&
        this.ctx.derivedTable &&
        isNestedChangelogJoin(e.query, this.ctx, (n) => this.isCte(n))
      )
        return {
          kind: 'Identifier',
          parts: [markerName(this.derive(selectingDelta(e.query as SelectQuery)))],
          span: e.span,
        };
      return { ...e, query: this.query(e.query) };
    }
    if (e.kind === 'Function' && ['dedup', 'changelog'].includes(e.name.toLowerCase()) && e.args[0]) {
      const first =
        e.name.toLowerCase() === 'changelog' ? this.changelogArg(e.args[0]) : this.sourceArg(e.args[0]);
      return { ...e, args: [first, ...e.args.slice(1)] };
    }
    return e;
  }

  /**
   * The source of changelog(): a stream, or a view or subquery over streams run as its own query
   * (a derived source), whose rows then have sequence numbers to order their versions by.
   */
  private changelogArg(e: Expr): Expr {
    if (e.kind === 'Subquery' && this.isStreaming(e.query))
      return { kind: 'Identifier', parts: [markerName(this.derive(e.query))], span: e.span };
    if (e.kind === 'Identifier' && e.parts.length <= 2) {
      const [db, name] =
        e.parts.length === 2 ? [e.parts[0], e.parts[1] as string] : [undefined, e.parts[0] as string];
      if (db !== undefined || (!this.isCte(name) && this.derivedCte(name) === undefined)) {
        const r = this.ctx.resolver.resolve(db, name);
        if (r?.kind === 'view' && r.viewQuery && !r.bounded && this.isStreaming(r.viewQuery))
          return { kind: 'Identifier', parts: [markerName(this.derive(r.viewQuery))], span: e.span };
      }
    }
    return this.sourceArg(e);
  }

  /** Subqueries inside expressions (`x IN (SELECT ... FROM s)`) read streams historically, as Proton does. */
  private subqueriesIn(e: Expr): Expr {
    return e;
  }

  private name(
    db: string | undefined,
    name: string,
  ): { kind: 'stream'; index: number } | { kind: 'view'; query: Query } | undefined {
    const r = this.ctx.resolver.resolve(db, name);
    if (!r) throw err('UNKNOWN_STREAM', { name: db ? `${db}.${name}` : name });
    if (r.bounded) return undefined;
    if (r.kind === 'view') {
      if (!r.viewQuery) return undefined;
      if (this.isNestedAggregation(r.viewQuery)) return { kind: 'stream', index: this.derive(r.viewQuery) };
      return { kind: 'view', query: this.query(r.viewQuery) };
    }
    if (r.kind !== 'stream' && r.kind !== 'materialized_view') return undefined;
    const definition = this.ctx.streamDefinition(r, db, name);
    if (!definition) return undefined;
    const key = `${definition.db}.${definition.name}`;
    const index = this.sources.length;
    this.sources.push({ kind: 'stream', index, definition, key });
    return { kind: 'stream', index };
  }
}

/** Names of CTEs or views that a FROM reads through changelog(). */
function changelogSourceNames(from: FromItem | undefined): Set<string> {
  const names = new Set<string>();
  const visitArg = (e: Expr | undefined) => {
    if (e?.kind !== 'Function') return;
    const [first] = e.args;
    if (e.name.toLowerCase() === 'changelog' && first?.kind === 'Identifier' && first.parts.length === 1)
      names.add(first.parts[0] as string);
    visitArg(first);
  };
  const visit = (f: FromItem | undefined) => {
    if (!f) return;
    if (f.kind === 'Join') {
      visit(f.left);
      visit(f.right);
    } else if (f.kind === 'ArrayJoin') visit(f.left);
    else if (f.kind === 'TableFunction') {
      const [first] = f.args;
      if (f.name.toLowerCase() === 'changelog' && first?.kind === 'Identifier' && first.parts.length === 1)
        names.add(first.parts[0] as string);
      visitArg(first);
    }
  };
  visit(from);
  return names;
}

function sourceName(e: Expr): string | undefined {
  if (e.kind === 'Identifier') return e.parts[e.parts.length - 1];
  if (e.kind === 'Function' && e.args[0]) return sourceName(e.args[0]);
  return undefined;
}
