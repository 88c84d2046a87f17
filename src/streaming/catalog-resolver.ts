import type { Catalog } from '../catalog/catalog.ts';
import { quoteIdent } from '../engine/settings-clause.ts';
import { isStreamingQuery } from '../sql/analyzer/streaming.ts';
import type { Query } from '../sql/ast/query.ts';
import { parseQuery } from '../sql/parser/parse.ts';
import type { ResolvedTable, TableResolver } from '../sql/translator/resolver.ts';
import { type StreamDefinition, streamKey, TP_DELTA } from '../stream/stream-definition.ts';
import { historicalSource, joinRightRowsSource } from '../stream/stream-reads.ts';
import { withVersionedDelta } from './versioned-kv-delta.ts';
import { qualifyReferences } from './view-references.ts';

/** What the resolver needs of the stream layer. */
export interface StreamLookup {
  get(db: string, name: string): { value: StreamDefinition } | undefined;
}

/** A view (or a materialized view's query) as the catalog keeps it. */
export interface ViewRecord {
  db: string;
  name: string;
  /** The view's SELECT in the Proton dialect. */
  query: string;
  materialized: boolean;
  /** Materialized views: the stream their results go to. */
  target_stream?: string;
  /** The view's columns (name, Proton type), when known. */
  columns?: { name: string; type: string }[];
  /** A stable id given at creation (the contract's `View.id`). */
  id?: string;
  description?: string;
}

/** Engine databases whose tables SQL may read directly. */
const ENGINE_DATABASES = new Set(['system', 'information_schema', 'INFORMATION_SCHEMA']);

/**
 * Resolves names in SQL against Tributary's catalog: streams (read through their front table, the
 * latest row per key for kv modes), views (expanded inline), materialized views (their target
 * stream) and the engine's own system tables.
 */
export class CatalogResolver implements TableResolver {
  private readonly parsedViews = new Map<string, { text: string; query: Query }>();
  /** Boundedness of the views met while resolving one name (views nest; cycles read as streaming). */
  private boundedMemo: Map<string, boolean> | undefined;
  /** Resolvers of other resource kinds (external tables), asked when no stream or view has the name. */
  private readonly fallbacks: TableResolver[] = [];

  constructor(
    private readonly catalog: Catalog,
    private readonly streams: StreamLookup,
    readonly defaultDatabase = 'default',
    /** User-defined functions by name (src/udf), when the server has them. */
    private readonly functions?: (name: string) => { clickhouse: string; aggregate?: boolean } | undefined,
  ) {}

  /**
   * A dictionary of the catalog (kind `dictionary`, key `db.name`): the engine keeps it in the
   * database of the same name (src/dictionaries). An own property, so spreads of this resolver keep it.
   */
  readonly resolveDictionary = (db: string | undefined, name: string): string | undefined => {
    const database = db ?? this.defaultDatabase;
    if (!this.catalog.get('dictionary', `${database}.${name}`)) return undefined;
    return `${database}.${name}`;
  };
  resolveFunction(name: string): { clickhouse: string; aggregate?: boolean } | undefined {
    return this.functions?.(name);
  }

  /** What a view's query becomes before it is expanded (JavaScript aggregates, src/udf). */
  private viewRewrite: ((query: Query, streaming: boolean) => Query) | undefined;

  /** Rewrite every view's query with `rewrite` where it is expanded (the one a SELECT gets too). */
  rewriteViews(rewrite: (query: Query, streaming: boolean) => Query): void {
    this.viewRewrite = rewrite;
  }

  /** Ask `resolver` for names that are no stream, view or engine table. */
  addFallback(resolver: TableResolver): void {
    this.fallbacks.push(resolver);
  }

  resolve(db: string | undefined, name: string): ResolvedTable | undefined {
    const database = db ?? this.defaultDatabase;
    const stream = this.streams.get(database, name)?.value;
    if (stream) return this.streamTable(stream, 'stream');
    const view = this.catalog.get<ViewRecord>('view', `${database}.${name}`)?.value;
    if (view) {
      if (view.materialized) {
        const target = this.streams.get(database, view.target_stream ?? name)?.value;
        return target ? this.streamTable(target, 'materialized_view', name) : undefined;
      }
      const parsed = this.viewQuery(database, name, view.query);
      const bounded = this.isBounded(`${database}.${name}`, parsed);
      const viewQuery = this.viewRewrite ? this.viewRewrite(parsed, !bounded) : parsed;
      return {
        kind: 'view',
        database,
        name,
        engineSql: '',
        viewQuery,
        ...(view.columns ? { columns: view.columns } : {}),
        // A view whose query reads no stream incrementally (table(s), engine tables) is bounded.
        ...(bounded ? { bounded: true } : {}),
      };
    }
    // A dictionary reads like a table of its current content (bounded: it has no stream of changes).
    const engineDictionary = this.resolveDictionary(database, name);
    if (engineDictionary !== undefined) {
      return {
        kind: 'dictionary',
        database,
        name,
        engineSql: `${quoteIdent(database)}.${quoteIdent(name)}`,
        bounded: true,
      };
    }
    if (db !== undefined && ENGINE_DATABASES.has(db)) {
      return { kind: 'engine_table', database: db, name, engineSql: `${quoteIdent(db)}.${quoteIdent(name)}` };
    }
    for (const f of this.fallbacks) {
      const r = f.resolve(database, name);
      if (r) return r;
    }
    return undefined;
  }

  /** The stream definition behind a resolved stream or materialized view. */
  streamDefinition(
    resolved: ResolvedTable,
    db: string | undefined,
    name: string,
  ): StreamDefinition | undefined {
    const database = resolved.database ?? db ?? this.defaultDatabase;
    if (resolved.kind === 'stream') return this.streams.get(database, resolved.name ?? name)?.value;
    if (resolved.kind === 'materialized_view') {
      const view = this.catalog.get<ViewRecord>('view', `${database}.${resolved.name ?? name}`)?.value;
      return this.streams.get(database, view?.target_stream ?? name)?.value;
    }
    return undefined;
  }

  private streamTable(
    def: StreamDefinition,
    kind: 'stream' | 'materialized_view',
    name = def.name,
  ): ResolvedTable {
    const kv = def.mode === 'versioned_kv' || def.mode === 'changelog_kv';
    const columns = def.columns.filter((c) => !c.alias).map((c) => ({ name: c.name, type: c.type }));
    // A versioned_kv stream's rows are each the insert of a version: `_tp_delta` reads as 1
    // (versioned-kv-delta.ts); `*` does not show it.
    const versioned = def.mode === 'versioned_kv';
    return {
      kind,
      database: def.db,
      name,
      engineSql: versioned ? withVersionedDelta(historicalSource(def)) : historicalSource(def),
      ...(def.mode === 'changelog_kv' ? { joinRightSql: joinRightRowsSource(def) } : {}),
      streamKey: streamKey(def.db, def.name),
      columns,
      ...(def.tableEngine ? { tableEngine: def.tableEngine } : {}),
      // The latest-per-key subquery lists _tp_sn explicitly; `*` must not show it.
      ...(kv ? { hiddenColumns: versioned ? ['_tp_sn', TP_DELTA] : ['_tp_sn'] } : {}),
    };
  }

  private viewQuery(db: string, name: string, text: string): Query {
    const key = `${db}.${name}`;
    const cached = this.parsedViews.get(key);
    if (cached && cached.text === text) return cached.query;
    // Unqualified names in a view's query are the view's database's, wherever the view is used.
    const parsed = parseQuery(text);
    const query = db === this.defaultDatabase ? parsed : qualifyReferences(parsed, db);
    this.parsedViews.set(key, { text, query });
    return query;
  }

  private isBounded(key: string, query: Query): boolean {
    const outermost = this.boundedMemo === undefined;
    const memo = this.boundedMemo ?? new Map<string, boolean>();
    this.boundedMemo = memo;
    try {
      const known = memo.get(key);
      if (known !== undefined) return known;
      memo.set(key, false);
      let bounded = false;
      try {
        bounded = !isStreamingQuery(query, this);
      } catch {
        // a view whose sources no longer resolve: using it reports the error
      }
      memo.set(key, bounded);
      return bounded;
    } finally {
      if (outermost) this.boundedMemo = undefined;
    }
  }
}
