import type { Engine } from '../engine/engine.ts';
import { quoteIdent, quoteString } from '../engine/settings-clause.ts';
import { err } from '../errors/tributary-error.ts';
import type { Logger } from '../log/logger.ts';
import type { ResultColumn } from '../queries/query-types.ts';
import { translateExpression, translateType } from '../sql/translator/translate.ts';
import type { OutputTag } from '../streaming/result-sink.ts';
import type { ExternalTargets, ViewWriter } from '../views/external-target.ts';
import type { PauseGate } from '../views/pause-gate.ts';
import type { WriteCounters } from '../views/target-writer.ts';
import type { ObjectIndexes } from './external-table-insert.ts';
import { type ExternalTables, scrubbed } from './external-tables.ts';
import { engineSettings } from './s3-engine-sql.ts';
import { newObjectKey } from './s3-object-keys.ts';
import { writeObjects } from './s3-object-write.ts';
import type { S3TableConfig } from './s3-table-settings.ts';
import { UploadSpool } from './upload-spool.ts';

/** Spec §8 default of s3_min_upload_file_size: rows are buffered until this many bytes. */
export const DEFAULT_MIN_UPLOAD_FILE_SIZE = 500 * 1024 * 1024;
/** Tributary's default of s3_max_upload_idle_seconds (the spec leaves it open). */
export const DEFAULT_MAX_UPLOAD_IDLE_SECONDS = 30;

export interface S3ViewWriterOptions {
  tables: ExternalTables;
  engine: Engine;
  db: string;
  table: string;
  /** The spool directory of this view. */
  spoolDir: string;
  gate: PauseGate;
  indexes: ObjectIndexes;
  /** s3_* limits over the table's own (an INSERT's SETTINGS). */
  limits?: Readonly<Record<string, number | boolean>>;
  logger?: Logger;
}

/**
 * The sink of `CREATE MATERIALIZED VIEW v INTO <s3 table>`: rows are spooled durably (see
 * UploadSpool) until `s3_min_upload_file_size` bytes or `s3_max_upload_idle_seconds` after the
 * batch's first row, then uploaded as one new object (per partition) named by the write_to template.
 * A restart neither loses rows (the spool is on disk and uploaded after it) nor duplicates them
 * (replayed hand-overs are recognised by their tags; a repeated upload rewrites the same key).
 */
export class S3ViewWriter implements ViewWriter {
  readonly counters: WriteCounters = { rows: 0, writes: 0, lastWriteAt: 0 };
  private header: readonly ResultColumn[] = [];
  private spool: Promise<UploadSpool> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private tail: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(private readonly o: S3ViewWriterOptions) {}

  setHeader(header: readonly ResultColumn[]): void {
    this.header = header;
    // Rows spooled before a restart are uploaded once their idle time is up.
    this.opened()
      .then((spool) => this.arm(spool))
      .catch(() => undefined);
  }

  async rows(rows: readonly string[], tag?: OutputTag): Promise<void> {
    if (rows.length === 0) return;
    await this.o.gate.enter();
    try {
      await this.serial(async () => {
        const spool = await this.opened();
        if (spool.has(tag)) return;
        const record = this.record();
        const config = this.o.tables.config(record);
        if (config.writeTo === undefined) throw err('EXTERNAL_TABLE_READ_ONLY', { table: record.name });
        await spool.append(rows, tag, () =>
          newObjectKey(
            config.writeTo as string,
            this.o.indexes.next(`${record.db}.${record.name}`, new Date()),
          ),
        );
        this.counters.rows += rows.length;
        const min = Number(this.limits(config).s3_min_upload_file_size ?? DEFAULT_MIN_UPLOAD_FILE_SIZE);
        if (spool.state.length >= min) await this.upload(spool);
        else this.arm(spool);
      });
    } finally {
      this.o.gate.leave();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.tail.catch(() => undefined);
  }

  async discard(): Promise<void> {
    await this.flushAndRemove().catch(async (e) => {
      this.o.logger?.warn(
        { table: `${this.o.db}.${this.o.table}`, error: (e as Error).message },
        'external table: the last buffered rows could not be uploaded; they are dropped',
      );
      await (await this.opened()).remove();
    });
  }

  /**
   * The end of a streaming INSERT: as flushAndRemove, but a failed upload keeps the spool on disk
   * (uploaded at the next start, see uploadLeftoverInsertSpools) instead of dropping its rows.
   */
  async end(): Promise<void> {
    await this.flushAndRemove().catch((e) =>
      this.o.logger?.warn(
        { table: `${this.o.db}.${this.o.table}`, spool: this.o.spoolDir, error: (e as Error).message },
        'external table: the last buffered rows could not be uploaded; kept, uploaded at the next start',
      ),
    );
  }

  /**
   * Stop, upload what the spool holds as one last object, then remove the spool. Throws when the
   * upload fails, leaving the spool on disk (a later attempt uploads it).
   */
  async flushAndRemove(): Promise<void> {
    await this.close();
    const spool = await this.opened();
    if (spool.state.length > 0 && this.header.length) await this.upload(spool);
    await spool.remove();
  }

  private limits(config: S3TableConfig): Readonly<Record<string, number | boolean>> {
    return this.o.limits ? { ...config.limits, ...this.o.limits } : config.limits;
  }

  private record() {
    return this.o.tables.require(this.o.db, this.o.table).value;
  }

  private opened(): Promise<UploadSpool> {
    this.spool ??= UploadSpool.open(this.o.spoolDir);
    return this.spool;
  }

  /** One append or upload at a time. */
  private serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.tail.then(work, work);
    this.tail = run.catch(() => undefined);
    return run;
  }

  /** Upload when the batch's idle time is up (a timer per batch). */
  private arm(spool: UploadSpool): void {
    if (this.timer || this.closed || spool.state.length === 0) return;
    const config = this.o.tables.config(this.record());
    const idle =
      Number(this.limits(config).s3_max_upload_idle_seconds ?? DEFAULT_MAX_UPLOAD_IDLE_SECONDS) * 1000;
    const delay = Math.max(0, (spool.state.since ?? Date.now()) + idle - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.closed) return;
      this.serial(() => this.upload(spool)).catch((e) => {
        this.o.logger?.warn(
          { table: `${this.o.db}.${this.o.table}`, error: (e as Error).message },
          'external table: upload failed; retrying after the idle time',
        );
        if (spool.state.since !== undefined) spool.state.since = Date.now();
        this.arm(spool);
      });
    }, delay);
    this.timer.unref?.();
  }

  /** The spooled rows as one new object (per partition), then the spool emptied. */
  private async upload(spool: UploadSpool): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (spool.state.length === 0 || spool.state.key === undefined) return;
    if (!this.header.length) throw err('INTERNAL', { detail: 'an s3 view writer has no result header yet' });
    const record = this.record();
    const config = this.o.tables.config(record);
    const tableColumns = new Set(record.columns.map((c) => c.name));
    const spooled = this.header.map((c) => `${quoteIdent(c.name)} ${translateType(c.type)}`).join(', ');
    const columns = this.header.filter((c) => tableColumns.has(c.name)).map((c) => quoteIdent(c.name));
    const creds = await this.o.tables.credentials(record);
    const limits = this.limits(config);
    try {
      await writeObjects(
        this.o.engine,
        {
          key: spool.state.key,
          structure: this.o.tables.structure(record),
          config,
          creds,
          ...(record.partition_by !== undefined
            ? { partitionBy: translateExpression(record.partition_by) }
            : {}),
          columns,
          settings: {
            ...engineSettings(config, limits, this.o.tables.formatSchemaPath(config)),
            s3_truncate_on_insert: 1,
          },
        },
        `SELECT ${columns.join(', ')} FROM file(${quoteString(spool.rowsFile)}, 'JSONCompactEachRow', ${quoteString(spooled)})`,
        { lane: 'stream' },
      );
    } catch (e) {
      throw scrubbed(e, creds);
    }
    await spool.uploaded();
    this.counters.writes++;
    this.counters.lastWriteAt = Date.now();
  }
}

/** The external tables views may write INTO, for MaterializedViews.useExternalTargets. */
export function s3ViewTargets(deps: {
  tables: ExternalTables;
  engine: Engine;
  spoolRoot: string;
  indexes: ObjectIndexes;
  logger?: Logger;
}): ExternalTargets {
  return {
    target: (db, name) => {
      const record = deps.tables.get(db, name)?.value;
      if (!record) return undefined;
      return {
        columns: record.columns,
        checkInto: (header) => {
          const config = deps.tables.config(record);
          if (config.writeTo === undefined) throw err('EXTERNAL_TABLE_READ_ONLY', { table: name });
          const names = new Set(record.columns.map((c) => c.name));
          if (!header.some((c) => names.has(c.name)))
            throw err('BAD_ARGUMENTS', {
              detail: `no result column of the view is a column of external table ${name} (${[...names].join(', ')}); name them with AS`,
            });
        },
        writer: ({ producerId, gate }) =>
          new S3ViewWriter({
            tables: deps.tables,
            engine: deps.engine,
            db,
            table: name,
            spoolDir: `${deps.spoolRoot}/${producerId}`,
            gate,
            indexes: deps.indexes,
            ...(deps.logger ? { logger: deps.logger } : {}),
          }),
      };
    },
  };
}
