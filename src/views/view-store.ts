import { randomUUID } from 'node:crypto';
import type { Actor } from '../catalog/audit.ts';
import type { Catalog, CatalogRecord } from '../catalog/catalog.ts';
import type { Engine } from '../engine/engine.ts';
import { err, isTributaryError } from '../errors/tributary-error.ts';
import { describeEngineSql } from '../queries/statements/select-statement.ts';
import { analyze } from '../sql/analyzer/analyze.ts';
import type { Query } from '../sql/ast/query.ts';
import { parseQuery } from '../sql/parser/parse.ts';
import { print } from '../sql/printer/format.ts';
import { quoteString } from '../sql/printer/sql-text.ts';
import { isSqlSyntaxError, syntaxErrorToTributary } from '../sql/syntax/syntax-error.ts';
import type { TableResolver } from '../sql/translator/resolver.ts';
import { translateQuery } from '../sql/translator/translate.ts';
import { displayName } from '../stream/sql-text.ts';
import type { StreamStore } from '../stream/stream-store.ts';
import type { ViewRecord } from '../streaming/catalog-resolver.ts';
import { qualifyReferences, type TableReference, tableReferences } from '../streaming/view-references.ts';

/** Catalog kind of views and materialized views (key `db.name`, value `ViewRecord`). */
export const VIEW_KIND = 'view';

export type ViewCatalogRecord = CatalogRecord<ViewRecord>;

/** A view column as the View resource shows it (Proton type names). */
export interface ViewColumn {
  name: string;
  type: string;
}

/** A view's SELECT: its AST and its text (the SELECT alone, as written). */
export interface ViewQuery {
  query: Query;
  text: string;
}

export interface ViewStoreDeps {
  engine: Engine;
  catalog: Catalog;
  streams: StreamStore;
  resolver: TableResolver;
  defaultDatabase: string;
}

export interface CreateViewInput {
  db: string;
  name: string;
  select: ViewQuery;
  description?: string;
  ifNotExists?: boolean;
  orReplace?: boolean;
}

export interface ViewPatch {
  description?: string;
  select?: ViewQuery;
}

/** Parse the text of a view's SELECT (REST bodies); syntax errors become SQL_SYNTAX_ERROR. */
export function parseViewQuery(text: string): ViewQuery {
  let query: Query;
  try {
    query = parseQuery(text);
  } catch (e) {
    throw isSqlSyntaxError(e) ? syntaxErrorToTributary(e) : e;
  }
  return { query, text: text.slice(query.span.start, query.span.end).trim() };
}

/** `name` in the default database, `db.name` elsewhere (as error messages name streams). */
function shownName(db: string, name: string, defaultDb: string): string {
  return db === defaultDb ? name : `${db}.${name}`;
}

/**
 * Views: logical SELECTs kept in the catalog and expanded where they are used (CatalogResolver).
 * The store validates a view's query when it is created or changed (it must parse, every name it
 * reads must resolve, it must not read itself, and the engine must accept its historical form),
 * records the columns the engine describes, and refuses to drop anything a view reads. Materialized
 * views share the catalog kind but are not managed here.
 */
export class ViewStore {
  private chain: Promise<unknown> = Promise.resolve();
  private readonly parsed = new Map<string, { text: string; refs: TableReference[] }>();

  constructor(private readonly deps: ViewStoreDeps) {}

  get defaultDatabase(): string {
    return this.deps.defaultDatabase;
  }

  get(db: string, name: string): ViewCatalogRecord | undefined {
    return this.deps.catalog.get<ViewRecord>(VIEW_KIND, `${db}.${name}`);
  }

  /** Is `db.name` a stream (views and streams share one namespace)? */
  hasStream(db: string, name: string): boolean {
    return this.deps.streams.get(db, name) !== undefined;
  }

  /** The view's record, or UNKNOWN_STREAM (60, 404) as Proton answers for an unknown view. */
  require(db: string, name: string): ViewCatalogRecord {
    const r = this.get(db, name);
    if (!r) throw err('UNKNOWN_STREAM', { name: shownName(db, name, this.deps.defaultDatabase) });
    return r;
  }

  /** Views (plain and materialized) of one database, or of all; sorted by database and name. */
  list(db?: string): ViewCatalogRecord[] {
    return this.deps.catalog
      .list<ViewRecord>(VIEW_KIND, db === undefined ? undefined : (r) => r.value.db === db)
      .sort((a, b) => a.key.localeCompare(b.key));
  }

  /** CREATE [OR REPLACE] VIEW [IF NOT EXISTS]; answers the record (the existing one when skipped). */
  async create(input: CreateViewInput, actor: Actor): Promise<ViewCatalogRecord | undefined> {
    return this.locked(async () => {
      const { db, name } = input;
      const key = `${db}.${name}`;
      const shown = shownName(db, name, this.deps.defaultDatabase);
      const existing = this.get(db, name);
      if (this.deps.streams.get(db, name)) {
        if (input.ifNotExists) return existing;
        throw err('STREAM_ALREADY_EXISTS', { name: shown });
      }
      if (existing) {
        if (input.ifNotExists) return existing;
        if (!input.orReplace) throw err('STREAM_ALREADY_EXISTS', { name: shown });
        if (existing.value.materialized)
          throw err('NOT_IMPLEMENTED', { detail: 'materialized views are not supported yet' });
      }
      await this.checkDatabase(db);
      const columns = await this.validate(db, name, input.select.query);
      const value: ViewRecord = {
        db,
        name,
        query: input.select.text,
        materialized: false,
        columns,
        id: existing?.value.id ?? randomUUID(),
        description: input.description ?? '',
      };
      return existing
        ? this.deps.catalog.update<ViewRecord>(VIEW_KIND, key, value, actor)
        : this.deps.catalog.create<ViewRecord>(VIEW_KIND, key, value, actor);
    });
  }

  /** Change a view's description and/or query (the new query is validated like a new view's). */
  async update(db: string, name: string, patch: ViewPatch, actor: Actor): Promise<ViewCatalogRecord> {
    return this.locked(async () => {
      const old = this.requirePlain(db, name);
      let value: ViewRecord = { ...old.value };
      if (patch.select) {
        const columns = await this.validate(db, name, patch.select.query);
        value = { ...value, query: patch.select.text, columns };
      }
      if (patch.description !== undefined) value = { ...value, description: patch.description };
      return this.deps.catalog.update<ViewRecord>(VIEW_KIND, `${db}.${name}`, value, actor);
    });
  }

  /** DROP VIEW [IF EXISTS]: refused (630) while another view reads it. Answers whether it existed. */
  async drop(db: string, name: string, options: { ifExists?: boolean } = {}): Promise<boolean> {
    return this.locked(async () => {
      if (!this.get(db, name)) {
        if (options.ifExists) return false;
        this.require(db, name);
      }
      this.requirePlain(db, name);
      this.refuseIfDepended(db, name);
      await this.deps.catalog.delete(VIEW_KIND, `${db}.${name}`);
      return true;
    });
  }

  /** Before DROP DATABASE: drop its views (refused if a view of another database reads one). */
  async dropDatabase(db: string): Promise<void> {
    return this.locked(async () => {
      const views = this.list(db).filter((r) => !r.value.materialized);
      const inside = (d: string) => d.startsWith(`${db}.`);
      for (const st of this.deps.streams.list(db)) {
        const outside = this.dependents(db, st.value.name).filter((d) => !inside(d));
        if (outside.length)
          throw err('HAVE_DEPENDENT_OBJECTS', { name: st.key, dependents: outside.join(', ') });
      }
      for (const v of views) {
        const outside = this.dependents(db, v.value.name).filter((d) => !inside(d));
        if (outside.length)
          throw err('HAVE_DEPENDENT_OBJECTS', { name: v.key, dependents: outside.join(', ') });
      }
      for (const v of views) await this.deps.catalog.delete(VIEW_KIND, v.key);
    });
  }

  /** Keep streams from taking a view's name and from being dropped while a view reads them. */
  guardStreams(): void {
    this.deps.streams.guard({
      beforeCreate: (db, name) => {
        if (this.get(db, name))
          throw err('STREAM_ALREADY_EXISTS', { name: shownName(db, name, this.deps.defaultDatabase) });
      },
      beforeDrop: (db, name) => this.refuseIfDepended(db, name),
    });
  }

  /** `db.name` of every view (or materialized view) that reads `db.name`, sorted. */
  dependents(db: string, name: string): string[] {
    const target = `${db}.${name}`;
    const out: string[] = [];
    for (const r of this.deps.catalog.list<ViewRecord>(VIEW_KIND)) {
      if (r.key === target) continue;
      if (this.references(r.value).includes(target)) out.push(r.key);
    }
    return out.sort();
  }

  /** The view's columns as the engine describes its query now (the recorded ones if that fails). */
  async columns(record: ViewCatalogRecord): Promise<ViewColumn[]> {
    const v = record.value;
    try {
      const described = await this.describe(v.db, parseQuery(v.query));
      if (described) return described;
    } catch {
      // a view whose sources changed under it: show what was recorded
    }
    return v.columns ?? [];
  }

  /** The view's CREATE statement, as SHOW CREATE VIEW prints it. */
  createQuery(v: ViewRecord): string {
    const target = `${displayName(v.db)}.${displayName(v.name)}`;
    const head = v.materialized
      ? `CREATE MATERIALIZED VIEW ${target}${v.target_stream && v.target_stream !== v.name ? ` INTO ${displayName(v.db)}.${displayName(v.target_stream)}` : ''}`
      : `CREATE VIEW ${target}`;
    const comment = v.description ? `\nCOMMENT ${quoteString(v.description)}` : '';
    return `${head} AS\n${v.query}${comment}`;
  }

  // ---- validation ----

  /** Check a view's query and answer its columns. */
  private async validate(db: string, name: string, query: Query): Promise<ViewColumn[]> {
    this.checkReads(db, name, query);
    const described = await this.describe(db, query);
    if (described) return described;
    // Streaming-only SQL (session windows, lag, ...) has no historical form to describe: keep
    // what the analyzer knows (names; types where they come straight from a stream's column).
    const analysis = analyze(print(qualifyReferences(query, db), { pretty: false }), this.deps.resolver, {
      defaultDatabase: this.deps.defaultDatabase,
    });
    return analysis.result_columns.map((c) => ({ name: c.column, type: c.column_type }));
  }

  /**
   * Every name the query of view `db.name` reads must resolve (UNKNOWN_STREAM), and it must not read
   * the view itself, directly or through other views (INCORRECT_QUERY).
   */
  checkReads(db: string, name: string, query: Query): void {
    const self = `${db}.${name}`;
    for (const ref of tableReferences(query)) {
      const refDb = ref.database ?? db;
      if (!this.deps.resolver.resolve(refDb, ref.name)) {
        throw err('UNKNOWN_STREAM', {
          name: ref.database !== undefined ? `${ref.database}.${ref.name}` : ref.name,
        });
      }
      const key = `${refDb}.${ref.name}`;
      if (key === self || this.readsTransitively(key, self, new Set()))
        throw err('INCORRECT_QUERY', { detail: `View ${self} cannot read itself (through ${key})` });
    }
  }

  /** The engine's DESCRIBE of the query's historical form; undefined when it has none. */
  private async describe(db: string, query: Query): Promise<ViewColumn[] | undefined> {
    let sql: string;
    try {
      sql = translateQuery(qualifyReferences(query, db), { resolver: this.deps.resolver });
    } catch (e) {
      if (isTributaryError(e) && e.errorName === 'NOT_IMPLEMENTED') return undefined;
      throw e;
    }
    return describeEngineSql(this.deps.engine, sql);
  }

  /** Does the view or stream `from` read `target`, directly or through other views? */
  private readsTransitively(from: string, target: string, seen: Set<string>): boolean {
    if (seen.has(from)) return false;
    seen.add(from);
    const view = this.deps.catalog.get<ViewRecord>(VIEW_KIND, from)?.value;
    if (!view) return false;
    return this.references(view).some((r) => r === target || this.readsTransitively(r, target, seen));
  }

  /** `db.name` of everything a view reads (its target stream too, for a materialized view). */
  references(v: ViewRecord): string[] {
    const key = `${v.db}.${v.name}`;
    let cached = this.parsed.get(key);
    if (!cached || cached.text !== v.query) {
      let refs: TableReference[] = [];
      try {
        refs = tableReferences(parseQuery(v.query));
      } catch {
        // an unparsable record reads nothing we can name
      }
      cached = { text: v.query, refs };
      this.parsed.set(key, cached);
    }
    const out = cached.refs.map((r) => `${r.database ?? v.db}.${r.name}`);
    if (v.materialized && v.target_stream) out.push(`${v.db}.${v.target_stream}`);
    return out;
  }

  private refuseIfDepended(db: string, name: string): void {
    const dependents = this.dependents(db, name);
    if (dependents.length)
      throw err('HAVE_DEPENDENT_OBJECTS', { name: `${db}.${name}`, dependents: dependents.join(', ') });
  }

  private requirePlain(db: string, name: string): ViewCatalogRecord {
    const r = this.require(db, name);
    if (r.value.materialized)
      throw err('NOT_IMPLEMENTED', {
        detail: `${shownName(db, name, this.deps.defaultDatabase)} is a materialized view: drop it with DROP VIEW or DELETE /v1beta2/materialized_views/${name}`,
      });
    return r;
  }

  async checkDatabase(db: string): Promise<void> {
    if (db === this.deps.defaultDatabase) return;
    if (!(await this.deps.streams.databases()).some((d) => d.name === db))
      throw err('UNKNOWN_DATABASE', { name: db });
  }

  /** Run view changes one at a time, so checks and writes do not interleave. */
  locked<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn, fn);
    this.chain = run.catch(() => undefined);
    return run;
  }
}
