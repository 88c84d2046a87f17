import type { Query } from '../ast/query.ts';

/**
 * The translator's view of the catalogue, injected by the caller (src/sql imports no catalog
 * code). `resolve` answers what a name in FROM (or INSERT INTO) refers to.
 */
export interface TableResolver {
  /**
   * Resolve `[db.]name`. `db` is undefined when the query did not qualify the name; the resolver
   * applies its current database. Return undefined when nothing has that name
   * (the translator then raises UNKNOWN_STREAM, code 60).
   */
  resolve(db: string | undefined, name: string): ResolvedTable | undefined;
  /** Optional: user-defined functions (remote / JavaScript UDFs) by name. */
  resolveFunction?(name: string): { readonly clickhouse: string; readonly aggregate?: boolean } | undefined;
  /**
   * Optional: Tributary's dictionaries. Answers the engine's name of dictionary `[db.]name` (what
   * `dict_get*` calls pass the engine), or undefined when there is none. Without it, `dict_get*`
   * is refused. Implementations should make it an own property (an arrow function) so resolvers
   * built by spreading this one keep it.
   */
  resolveDictionary?(db: string | undefined, name: string): string | undefined;
}

export type ResolvedKind =
  | 'stream'
  | 'view'
  | 'materialized_view'
  | 'external_table'
  | 'external_stream'
  | 'engine_table'
  /** A Tributary dictionary read as a table of its current content (bounded, read-only). */
  | 'dictionary';

export interface ResolvedColumn {
  readonly name: string;
  /** Proton type name (`datetime64(3, 'UTC')`) or ClickHouse type name; either is accepted. */
  readonly type: string;
}

export interface ResolvedTable {
  readonly kind: ResolvedKind;
  /** The database the name resolved in (for analysis results). */
  readonly database?: string;
  /** The resource's own name (for analysis results); defaults to the name looked up. */
  readonly name?: string;
  /**
   * What to put in FROM for a historical read: a table name ("`default`.`clicks`") or a
   * parenthesised subquery ("(SELECT ... FROM ...)", e.g. the latest row per key of a
   * versioned_kv stream). Not used for `view` (its `viewQuery` is expanded inline).
   */
  readonly engineSql: string;
  /**
   * What a streaming join reads when this is its bounded right side (`s JOIN table(x)`), if not
   * `engineSql` (a changelog_kv stream: each row of a key not yet deleted, stream-reads.ts
   * joinRightRowsSource). Same columns as `engineSql`.
   */
  readonly joinRightSql?: string;
  /** Where INSERT writes, if different from `engineSql` (required when engineSql is a subquery). */
  readonly insertSql?: string;
  /** Columns in order, if known (analysis fills required_columns/result_columns from them). */
  readonly columns?: readonly ResolvedColumn[];
  /**
   * A stream created with a table ENGINE (`Memory`, `MergeTree`, ...): a plain table, whose columns
   * are only the declared ones (no `_tp_time` unless declared).
   */
  readonly tableEngine?: string;
  /**
   * Storage columns that `SELECT *` must not show (e.g. `_tp_sn`, `_tp_delta` of an append
   * stream's table): `*` over this source becomes `* EXCEPT (...)`. Naming them explicitly still works.
   */
  readonly hiddenColumns?: readonly string[];
  /**
   * Columns a streaming range read computes from the stored ones, e.g. a random stream's
   * `_tp_shard` (stream-bindings.ts adds them to the range read; `*` does not show them).
   */
  readonly virtualColumns?: readonly { readonly name: string; readonly engineSql: string }[];
  /** For views: the view's SELECT, expanded inline where the view is used. */
  readonly viewQuery?: Query;
  /** True when the data is bounded even in a streaming query (e.g. a view defined over table()). */
  readonly bounded?: boolean;
  /**
   * The stream (`db.name`) whose tables `engineSql` reads, if any: whoever runs the translated SQL
   * holds that stream's read lock (see `recordingResolver`).
   */
  readonly streamKey?: string;
}

/**
 * `resolver`, noting in `streams` the `streamKey` of every table it resolves (views' inner
 * references included, as the translator expands them): the streams a translated query reads.
 */
export function recordingResolver(resolver: TableResolver, streams: Set<string>): TableResolver {
  return {
    resolve(db, name) {
      const r = resolver.resolve(db, name);
      if (r?.streamKey) streams.add(r.streamKey);
      return r;
    },
    ...(resolver.resolveFunction ? { resolveFunction: (n: string) => resolver.resolveFunction?.(n) } : {}),
    ...(resolver.resolveDictionary
      ? { resolveDictionary: (d: string | undefined, n: string) => resolver.resolveDictionary?.(d, n) }
      : {}),
  };
}

/** A resolver over a fixed map `db.name` / `name` -> table; handy in tests and tools. */
export function mapResolver(
  tables: Readonly<Record<string, ResolvedTable>>,
  defaultDatabase = 'default',
): TableResolver {
  return {
    resolve(db, name) {
      return tables[`${db ?? defaultDatabase}.${name}`] ?? (db === undefined ? tables[name] : undefined);
    },
  };
}
