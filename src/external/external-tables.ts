import type { Actor } from '../catalog/audit.ts';
import { type Catalog, type CatalogRecord, scopedKey } from '../catalog/catalog.ts';
import type { Engine } from '../engine/engine.ts';
import { engineError } from '../engine/engine-error.ts';
import { quoteIdent } from '../engine/settings-clause.ts';
import { err, TributaryError } from '../errors/tributary-error.ts';
import type { Logger } from '../log/logger.ts';
import type { ResolvedTable, TableResolver } from '../sql/translator/resolver.ts';
import { translateType } from '../sql/translator/translate.ts';
import { type Bz2ReadMirror, readsBz2 } from './bz2-read-mirror.ts';
import type { ExternalTableRecord } from './external-table-definition.ts';
import { resolveS3Credentials, type S3Credentials } from './s3-credentials.ts';
import { readTableDdl, scrubSecrets } from './s3-engine-sql.ts';
import { type S3TableConfig, s3TableConfig } from './s3-table-settings.ts';

/**
 * The engine database holding the S3-engine tables that SELECT reads (never resolvable by user
 * SQL; a Memory database, so nothing of it is on disk).
 */
export const EXTERNAL_DB = '_tributary_external';

const KIND = 'external_table';

export interface ExternalTablesDeps {
  engine: Engine;
  catalog: Catalog;
  defaultDatabase: string;
  /** Whether a stream, view or other resource already has this name. */
  nameTaken: (db: string, name: string) => boolean;
  /** The absolute `file.proto:Message` of a `schema:Message` reference (format schemas). */
  formatSchemaPath?: (reference: string) => string;
  /** Decompressed copies of bz2 objects (tables reading bz2 need it). */
  bz2Mirror?: Bz2ReadMirror;
  logger?: Logger;
}

/**
 * External tables of type s3: their catalog records, the engine tables SELECT reads through, and
 * the credentials each statement resolves. User SQL never names the engine's s3 doors; these
 * tables open them with the settings the user declared (DESIGN.md §7).
 */
export class ExternalTables {
  /** The materialized views writing into a table (a table is not dropped under them). */
  private writersOf: (db: string, name: string) => string[] = () => [];
  /**
   * Tables reading bz2 objects: the generation of their engine table, made again (under a new
   * name, so a running read keeps its own) whenever the set of decompressed copies changes.
   */
  private readonly generations = new Map<string, number>();

  constructor(private readonly deps: ExternalTablesDeps) {}

  /** Name the writers of a table (materialized views INTO it); DROP is refused while there are any. */
  guardDrops(writersOf: (db: string, name: string) => string[]): void {
    this.writersOf = writersOf;
  }

  get(db: string, name: string): CatalogRecord<ExternalTableRecord> | undefined {
    return this.deps.catalog.get<ExternalTableRecord>(KIND, scopedKey(db, name));
  }

  require(db: string, name: string): CatalogRecord<ExternalTableRecord> {
    const r = this.get(db, name);
    if (!r) throw err('RESOURCE_NOT_FOUND', { kind: 'External table', name: `${db}.${name}` });
    return r;
  }

  list(db?: string): CatalogRecord<ExternalTableRecord>[] {
    return this.deps.catalog
      .list<ExternalTableRecord>(KIND, (r) => db === undefined || r.value.db === db)
      .sort((a, b) => a.key.localeCompare(b.key));
  }

  /** The checked settings of a record. */
  config(record: ExternalTableRecord): S3TableConfig {
    return s3TableConfig(record.name, record.settings);
  }

  /** The engine's spelling of the columns: `` `a` UInt32, `b` String ``. */
  structure(record: ExternalTableRecord): string {
    return record.columns.map((c) => `${quoteIdent(c.name)} ${translateType(c.type)}`).join(', ');
  }

  credentials(record: ExternalTableRecord): Promise<S3Credentials | undefined> {
    return resolveS3Credentials(record.name, this.config(record));
  }

  formatSchemaPath(config: S3TableConfig): string | undefined {
    if (config.formatSchema === undefined) return undefined;
    if (!this.deps.formatSchemaPath)
      throw err('FORMAT_SCHEMA_BAD', {
        name: config.formatSchema,
        detail: 'format schemas are not available',
      });
    return this.deps.formatSchemaPath(config.formatSchema);
  }

  /**
   * Create: settings checked, credentials resolved, the read table made in the engine, then the
   * record stored (a failure leaves nothing behind).
   */
  async create(
    record: ExternalTableRecord,
    actor: Actor,
    options: { ifNotExists: boolean; orReplace: boolean },
  ): Promise<void> {
    const config = this.config(record);
    if (!record.columns.length)
      throw err('BAD_ARGUMENTS', { detail: `External table ${record.name} needs a column list` });
    if (config.format === 'RawBLOB' && record.columns.length !== 1)
      throw err('EXTERNAL_TABLE_BAD_SETTING', {
        table: record.name,
        setting: 'data_format',
        detail:
          'RawBLOB (the default when no extension names a format) needs exactly one string column; set data_format',
      });
    const existing = this.get(record.db, record.name);
    if (existing && options.ifNotExists) return;
    if (existing && !options.orReplace)
      throw err('RESOURCE_ALREADY_EXISTS', { kind: 'External table', name: `${record.db}.${record.name}` });
    if (!existing && this.deps.nameTaken(record.db, record.name)) {
      if (options.ifNotExists) return;
      throw err('RESOURCE_ALREADY_EXISTS', { kind: 'Stream or view', name: `${record.db}.${record.name}` });
    }
    await this.makeReadTable(record, config);
    await this.deps.catalog.put(KIND, scopedKey(record.db, record.name), record, actor);
  }

  async drop(db: string, name: string, options: { ifExists: boolean }): Promise<boolean> {
    if (!this.get(db, name)) {
      if (options.ifExists) return false;
      throw err('RESOURCE_NOT_FOUND', { kind: 'External table', name: `${db}.${name}` });
    }
    const writers = this.writersOf(db, name);
    if (writers.length)
      throw err('HAVE_DEPENDENT_OBJECTS', { name: `${db}.${name}`, dependents: writers.join(', ') });
    await this.deps.catalog.delete(KIND, scopedKey(db, name));
    await this.dropEngineTables(db, name);
    await this.deps.bz2Mirror?.remove(`${db}.${name}`);
    return true;
  }

  /**
   * Make the read tables again with freshly resolved credentials (at start: environment
   * credentials and config files may have changed). A table whose credentials cannot be resolved
   * is logged and left as it was.
   */
  async refreshAll(): Promise<void> {
    for (const r of this.list()) {
      try {
        await this.makeReadTable(r.value, this.config(r.value));
      } catch (e) {
        this.deps.logger?.warn(
          { table: r.key, error: (e as Error).message },
          'external table: read table not refreshed',
        );
      }
    }
  }

  /**
   * Before a statement reads the table: the decompressed copies of its bz2 objects brought up to
   * date (a no-op for the other tables, which the engine reads from the store itself).
   */
  async prepareRead(db: string, name: string): Promise<void> {
    const record = this.get(db, name)?.value;
    const mirror = this.deps.bz2Mirror;
    if (!record || !mirror) return;
    const config = this.config(record);
    if (!readsBz2(config)) return;
    const creds = await resolveS3Credentials(record.name, config);
    if (!(await mirror.sync(`${db}.${name}`, config, creds))) return;
    const key = `${db}.${name}`;
    this.generations.set(key, (this.generations.get(key) ?? 0) + 1);
    // Earlier generations stay until the table is dropped: a running streaming query may read one.
    await this.deps.engine.query(this.bz2ReadTableDdl(record, config, mirror));
  }

  /** The engine table of `db.name`, and every earlier generation of it. */
  private async dropEngineTables(db: string, name: string): Promise<void> {
    const generation = this.generations.get(`${db}.${name}`) ?? 0;
    for (let g = generation; g >= 0; g--) {
      if (g === 0) this.generations.delete(`${db}.${name}`);
      else this.generations.set(`${db}.${name}`, g);
      await this.deps.engine.query(`DROP TABLE IF EXISTS ${this.engineTable(db, name)}`);
    }
  }

  private bz2ReadTableDdl(record: ExternalTableRecord, config: S3TableConfig, mirror: Bz2ReadMirror): string {
    const formatSettings: Record<string, string | number> = {};
    if (config.tsvSkipFirstLines !== undefined)
      formatSettings.input_format_tsv_skip_first_lines = config.tsvSkipFirstLines;
    const schemaPath = this.formatSchemaPath(config);
    if (schemaPath !== undefined) formatSettings.format_schema = schemaPath;
    return mirror.readTableDdl(
      this.engineTable(record.db, record.name),
      `${record.db}.${record.name}`,
      this.structure(record),
      config,
      formatSettings,
    );
  }

  /** Answers names of external tables (a resolver consulted after streams and views). */
  resolver(): TableResolver {
    return {
      resolve: (db, name) => {
        const r = this.get(db ?? this.deps.defaultDatabase, name)?.value;
        return r ? this.resolved(r) : undefined;
      },
    };
  }

  private resolved(r: ExternalTableRecord): ResolvedTable {
    return {
      kind: 'external_table',
      database: r.db,
      name: r.name,
      engineSql: this.engineTable(r.db, r.name),
      columns: r.columns,
      bounded: true,
    };
  }

  engineTable(db: string, name: string): string {
    const generation = this.generations.get(`${db}.${name}`);
    const table = generation ? `${db}.${name}#${generation}` : `${db}.${name}`;
    return `${quoteIdent(EXTERNAL_DB)}.${quoteIdent(table)}`;
  }

  private async makeReadTable(record: ExternalTableRecord, config: S3TableConfig): Promise<void> {
    const creds = await resolveS3Credentials(record.name, config);
    const engineTable = this.engineTable(record.db, record.name);
    const mirror = this.deps.bz2Mirror;
    let ddl: string;
    if (readsBz2(config)) {
      if (!mirror)
        throw err('EXTERNAL_TABLE_BAD_SETTING', {
          table: record.name,
          setting: 'compression_method',
          detail: 'bz2 objects are read through a local directory, and this server has no data directory',
        });
      await mirror.reset(`${record.db}.${record.name}`);
      ddl = this.bz2ReadTableDdl(record, config, mirror);
    } else
      ddl = readTableDdl(engineTable, this.structure(record), config, creds, this.formatSchemaPath(config));
    try {
      // A Memory database: its tables are made again at every start (refreshAll) and never
      // attached from disk, where the engine would contact each store with its own retry policy
      // (minutes per unreachable endpoint) before the server could start.
      await this.deps.engine.query(
        `CREATE DATABASE IF NOT EXISTS ${quoteIdent(EXTERNAL_DB)} ENGINE = Memory`,
      );
      await this.deps.engine.query(`DROP TABLE IF EXISTS ${this.engineTable(record.db, record.name)}`);
      await this.deps.engine.query(ddl);
    } catch (e) {
      throw scrubbed(e, creds);
    }
  }
}

/** An engine error with every secret of `creds` removed from its message, and no cause kept. */
export function scrubbed(e: unknown, creds: S3Credentials | undefined): TributaryError {
  const te = engineError(e);
  return new TributaryError({
    errorName: te.errorName,
    code: te.code,
    status: te.status,
    system: te.system,
    message: scrubSecrets(te.message, creds),
    params: te.params,
  });
}
