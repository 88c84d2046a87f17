import type { Actor } from '../catalog/audit.ts';
import type { Catalog, CatalogRecord } from '../catalog/catalog.ts';
import type { Engine } from '../engine/engine.ts';
import { quoteIdent } from '../engine/settings-clause.ts';
import { err, isTributaryError } from '../errors/tributary-error.ts';
import type { Logger } from '../log/logger.ts';
import type { Setting } from '../sql/ast/expression.ts';
import type { CreateDictionary } from '../sql/ast/statement.ts';
import { parseStatement } from '../sql/parser/parse.ts';
import {
  checkDictionaryShape,
  type DictionaryLifetime,
  dictionaryLifetime,
  translateCreateDictionary,
} from '../sql/translator/dictionary-ddl.ts';
import { type StreamDefinition, streamKey } from '../stream/stream-definition.ts';
import type { StreamStore } from '../stream/stream-store.ts';
import { DictionaryRefresher } from './dictionary-refresher.ts';
import { type DictionarySourceInfo, vetSource } from './dictionary-source.ts';

function isInternalDatabase(db: string): boolean {
  return db === 'system' || db.toLowerCase() === 'information_schema' || db.startsWith('_tributary');
}

/**
 * An HTTP source tries a few times, not the engine's default ten with a backoff of up to half a
 * minute: a server that is down fails the statement (or the reload) quickly. A statement that sets
 * `http_max_tries` in its SETTINGS keeps its own.
 */
function withHttpRetries(s: CreateDictionary, source: DictionarySourceInfo): CreateDictionary {
  if (source.kind !== 'http' || s.settings?.some((x) => x.name.toLowerCase() === 'http_max_tries')) return s;
  const tries: Setting = {
    kind: 'Setting',
    name: 'http_max_tries',
    value: { kind: 'Number', text: '3', span: s.span },
    span: s.span,
  };
  return { ...s, settings: [...(s.settings ?? []), tries] };
}

/** Catalog kind of dictionaries (key `db.name`, value `DictionaryRecord`). */
export const DICTIONARY_KIND = 'dictionary';

/** A dictionary as the catalog keeps it. The engine holds the loaded data. */
export interface DictionaryRecord {
  db: string;
  name: string;
  /** The CREATE DICTIONARY statement as written (Proton dialect): the contract's `query`. */
  query: string;
  /** COMMENT '...' of the statement. */
  description: string;
  source: DictionarySourceInfo;
  lifetime: DictionaryLifetime;
}

export type DictionaryCatalogRecord = CatalogRecord<DictionaryRecord>;

export interface DictionaryStoreDeps {
  engine: Engine;
  catalog: Catalog;
  streams: StreamStore;
  /** A stream or a materialized view's target stream by name (the catalog resolver's answer). */
  streamNamed: (db: string, name: string) => StreamDefinition | undefined;
  defaultDatabase: string;
  /** The directory FILE sources are confined to (created at start). */
  userFilesDir: string;
  logger?: Logger;
}

/**
 * Dictionaries: CREATE / DROP / RELOAD, their catalog records, the engine dictionaries that hold the
 * data, and the LIFETIME schedule that keeps them fresh. The engine keeps each dictionary in the
 * database of the same name; `dict_get*` calls reach it through the translator, which names only
 * the dictionaries of this store (dictionary-calls.ts).
 */
export class DictionaryStore {
  private readonly refresher: DictionaryRefresher;

  constructor(private readonly deps: DictionaryStoreDeps) {
    this.refresher = new DictionaryRefresher(
      (db, name) => this.reload(db, name, { ifChanged: true }),
      deps.logger,
    );
  }

  get defaultDatabase(): string {
    return this.deps.defaultDatabase;
  }

  get userFilesDir(): string {
    return this.deps.userFilesDir;
  }

  list(db?: string): DictionaryCatalogRecord[] {
    return this.deps.catalog
      .list<DictionaryRecord>(DICTIONARY_KIND, (r) => db === undefined || r.value.db === db)
      .sort((a, b) => a.key.localeCompare(b.key));
  }

  get(db: string, name: string): DictionaryCatalogRecord | undefined {
    return this.deps.catalog.get<DictionaryRecord>(DICTIONARY_KIND, `${db}.${name}`);
  }

  require(db: string, name: string): DictionaryCatalogRecord {
    const r = this.get(db, name);
    if (!r) throw err('UNKNOWN_DICTIONARY', { name: `${db}.${name}`, position: '' });
    return r;
  }

  /**
   * CREATE [OR REPLACE] DICTIONARY [IF NOT EXISTS]: vet the source, create the engine dictionary,
   * load it once (a source that cannot load refuses the statement; nothing is kept), record it.
   */
  async create(
    s: CreateDictionary,
    text: string,
    actor: Actor,
  ): Promise<DictionaryCatalogRecord | undefined> {
    const db = s.target.database ?? this.deps.defaultDatabase;
    const name = s.target.name;
    const existing = this.get(db, name);
    if (existing && s.ifNotExists) return existing;
    if (existing && !s.orReplace) throw err('DICTIONARY_ALREADY_EXISTS', { name: `${db}.${name}` });
    if (this.deps.streamNamed(db, name) || this.deps.catalog.get('view', `${db}.${name}`))
      throw err('INVALID_DICTIONARY', {
        name,
        detail: `${db}.${name} is a stream or view; a dictionary cannot take its name`,
      });
    if (isInternalDatabase(db))
      throw err('INVALID_DICTIONARY', { name, detail: `database ${db} is the engine's or Tributary's own` });
    // A new dictionary never replaces whatever the engine has of that name (the engine refuses).
    const { ddl, source } = this.engineForm(s, db, existing !== undefined);
    await this.deps.engine.query(ddl, { lane: 'system' });
    try {
      await this.load(db, name, source);
    } catch (e) {
      // Nothing is kept: the previous definition comes back (OR REPLACE), or the dictionary goes.
      if (existing) await this.recreate(existing.value).catch(() => undefined);
      else await this.dropEngine(db, name).catch(() => undefined);
      throw e;
    }
    const record = await this.deps.catalog.put<DictionaryRecord>(
      DICTIONARY_KIND,
      `${db}.${name}`,
      { db, name, query: text, description: s.comment ?? '', source, lifetime: dictionaryLifetime(s) },
      actor,
    );
    this.refresher.schedule(record.value);
    return record;
  }

  /** DROP DICTIONARY [IF EXISTS]. */
  async drop(db: string, name: string, options: { ifExists?: boolean } = {}): Promise<void> {
    if (!this.get(db, name)) {
      if (options.ifExists) return;
      throw err('UNKNOWN_DICTIONARY', { name: `${db}.${name}`, position: '' });
    }
    this.refresher.cancel(db, name);
    this.loadedSn.delete(`${db}.${name}`);
    await this.dropEngine(db, name);
    await this.deps.catalog.delete(DICTIONARY_KIND, `${db}.${name}`);
  }

  /**
   * Load the dictionary's source again now (SYSTEM RELOAD DICTIONARY, and the LIFETIME schedule).
   * A FILE source is vetted again first (its path may have become a link out of the directory).
   * `ifChanged` (the schedule): a stream source with no rows committed since the last load is not
   * read again.
   */
  async reload(db: string, name: string, options: { ifChanged?: boolean } = {}): Promise<void> {
    const record = this.require(db, name);
    const source = record.value.source;
    if (options.ifChanged && source.kind === 'stream') {
      const loaded = this.loadedSn.get(record.key);
      if (loaded !== undefined && loaded === this.deps.streams.committedSn(source.db, source.name)) return;
    }
    if (source.kind === 'file') await this.recreate(record.value);
    await this.load(db, name, source);
  }

  /** Per dictionary over a stream: the stream's last committed sequence number when it was loaded. */
  private readonly loadedSn = new Map<string, number>();

  /** Every dictionary (SYSTEM RELOAD DICTIONARIES). */
  async reloadAll(): Promise<void> {
    for (const r of this.list()) await this.reload(r.value.db, r.value.name);
  }

  /**
   * At start: every recorded dictionary is created again in the engine from its statement (paths and
   * stream tables as they are now), loaded, and its LIFETIME schedule starts. One that cannot be
   * created or loaded is logged (the next reload tries again).
   */
  async restore(): Promise<void> {
    for (const r of this.list()) {
      try {
        await this.recreate(r.value);
        // Loaded now, under the stream's flush lock, rather than by the first dict_get outside it.
        await this.load(r.value.db, r.value.name, r.value.source);
      } catch (e) {
        this.deps.logger?.warn({ dictionary: r.key, err: (e as Error).message }, 'dictionary not restored');
      }
      this.refresher.schedule(r.value);
    }
  }

  /** `db.name` of the dictionaries that read stream `db.name`. */
  dependents(db: string, name: string): string[] {
    return this.list()
      .filter(
        (r) => r.value.source.kind === 'stream' && r.value.source.db === db && r.value.source.name === name,
      )
      .map((r) => r.key);
  }

  /** A stream a dictionary reads is not dropped or renamed; a stream cannot take a dictionary's name. */
  guardStreams(): void {
    this.deps.streams.guard({
      beforeCreate: (db, name) => {
        if (this.get(db, name)) throw err('DICTIONARY_ALREADY_EXISTS', { name: `${db}.${name}` });
      },
      beforeDrop: (db, name) => {
        const dependents = this.dependents(db, name);
        if (dependents.length)
          throw err('DICTIONARY_SOURCE_IN_USE', { name: `${db}.${name}`, dependents: dependents.join(', ') });
      },
    });
  }

  /** DROP DATABASE: its dictionaries go first (then the streams they read can go). */
  async dropDatabase(db: string): Promise<void> {
    for (const r of this.list(db)) await this.drop(r.value.db, r.value.name, { ifExists: true });
  }

  close(): void {
    this.refresher.close();
  }

  private engineForm(s: CreateDictionary, db: string, replace: boolean) {
    checkDictionaryShape(s);
    const vetted = vetSource(s, {
      db,
      stream: this.deps.streamNamed,
      userFilesDir: this.deps.userFilesDir,
    });
    const ddl = translateCreateDictionary(withHttpRetries(s, vetted.info), {
      database: db,
      source: vetted.engine,
      replace,
    });
    return { ddl, source: vetted.info };
  }

  private async recreate(r: DictionaryRecord): Promise<void> {
    const s = parseStatement(r.query);
    if (s.kind !== 'CreateDictionary') throw new Error(`not a CREATE DICTIONARY: ${r.query}`);
    const { ddl } = this.engineForm({ ...s, target: { database: r.db, name: r.name } }, r.db, true);
    await this.deps.engine.query(ddl, { lane: 'system' });
  }

  /**
   * Load the engine dictionary from its source. A stream is read under the stream's read lock (a
   * read that overlaps a Buffer flush could miss the rows being moved: flush-lock.ts), on the
   * stream lane (a load may be long; catalog and ingest calls keep the system lane).
   */
  private async load(db: string, name: string, source: DictionarySourceInfo): Promise<void> {
    const run = () =>
      this.deps.engine.query(`SYSTEM RELOAD DICTIONARY ${quoteIdent(db)}.${quoteIdent(name)}`, {
        lane: 'stream',
      });
    try {
      if (source.kind === 'stream') {
        const sn = this.deps.streams.committedSn(source.db, source.name);
        await this.deps.streams.read([streamKey(source.db, source.name)], run);
        this.loadedSn.set(`${db}.${name}`, sn);
      } else await run();
    } catch (e) {
      const detail = isTributaryError(e) || e instanceof Error ? e.message : String(e);
      throw err('DICTIONARY_LOAD_FAILED', { name: `${db}.${name}`, detail }, e);
    }
  }

  private async dropEngine(db: string, name: string): Promise<void> {
    await this.deps.engine.query(`DROP DICTIONARY IF EXISTS ${quoteIdent(db)}.${quoteIdent(name)}`, {
      lane: 'system',
    });
  }
}
