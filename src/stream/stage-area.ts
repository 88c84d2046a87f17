import type { Engine } from '../engine/engine.ts';
import { quoteIdent, quoteString } from '../engine/settings-clause.ts';
import type { Logger } from '../log/logger.ts';
import type { PayloadFormat } from './ingest-batch.ts';
import { type StreamDefinition, TP_SN, TP_TIME } from './stream-definition.ts';
import { ingestComment, insertSettings, writeTable } from './stream-tables.ts';
import { withTypeChecks } from './table-check-settings.ts';

/** The engine database of the staging tables (dropped and created again at start). */
export const STAGE_DB = '_tributary_stage';

/** Names the engine's insert call accepts unquoted (the staging insert must use it). */
const INSERTABLE = /^[A-Za-z0-9_]+$/;

/**
 * The rows of one large request handed to the engine *before* they are checked, into a staging
 * table no query reads (README.md, "Large requests: staged while checked"). Used at most once:
 * `take()` answers whether the caller is the one to move the rows (a retry after a failed insert
 * finds it taken and inserts the payload as usual).
 */
export interface StagedRows {
  readonly format: PayloadFormat;
  /** The staging table's columns (for JSONEachRow, every column a row may give). */
  readonly columns: readonly string[];
  /** The bytes staged: a view of the request body (its JSONCompactEachRow rows, or the NDJSON). */
  readonly payload: Buffer;
  /** Rows the engine staged, or undefined when it refused them (the usual insert then reports why). */
  readonly staged: Promise<number | undefined>;
  take(): boolean;
}

export interface StageStats {
  /** Large requests whose rows were staged while JavaScript checked them. */
  started: number;
  /** Staged rows moved into their stream (the request was accepted and its insert used them). */
  moved: number;
  /** Staged rows thrown away (the request was refused, or the insert did not use them). */
  discarded: number;
}

interface Slot {
  readonly table: string;
  /** The stream definition the table was created from (a new one after ALTER STREAM). */
  readonly def: StreamDefinition;
  /** Its columns, as a request names them (`\u0001`-joined). */
  readonly shape: string;
}

class Staging implements StagedRows {
  taken = false;
  moved = false;
  released = false;
  readonly staged: Promise<number | undefined>;

  constructor(
    readonly key: string,
    readonly slot: Promise<Slot | undefined>,
    readonly format: PayloadFormat,
    readonly columns: readonly string[],
    readonly payload: Buffer,
    insert: (slot: Slot) => Promise<number>,
  ) {
    this.staged = slot.then((s) => (s ? insert(s) : undefined)).catch(() => undefined);
  }

  take(): boolean {
    if (this.taken) return false;
    this.taken = true;
    return true;
  }
}

/** Idle staging tables kept per stream (a request in flight holds one). */
const IDLE_PER_STREAM = 2;

/**
 * Staging tables for large compact requests: Memory tables of the columns a request names, with
 * the stream's types, one per request in flight, kept for reuse. The
 * engine parses the request's rows into one while JavaScript parses and checks the same bytes; once
 * the request is accepted and durable, `INSERT INTO <front> SELECT` moves them with the commit's
 * `log_comment` (the engine's native columns, ~1/3 of a JSON insert's cost). A refused request's
 * rows never leave the staging table, which no query reads, and are truncated.
 */
export class StageArea {
  private readonly idle = new Map<string, Slot[]>();
  private seq = 0;
  /** Per stream: staged requests not yet released. */
  private readonly inFlight = new Map<string, number>();
  private ready = false;
  private readonly stats: StageStats = { started: 0, moved: 0, discarded: 0 };

  constructor(
    private readonly engine: Engine,
    private readonly logger?: Logger,
  ) {}

  /**
   * Drop what an earlier process left (Memory tables are empty after a restart) and start afresh.
   * If the engine refuses, nothing is staged (requests take the usual path).
   */
  async open(): Promise<void> {
    try {
      await this.engine.query(`DROP DATABASE IF EXISTS ${quoteIdent(STAGE_DB)} SYNC`);
      await this.engine.query(`CREATE DATABASE ${quoteIdent(STAGE_DB)} ENGINE = Memory`);
      this.ready = true;
    } catch (e) {
      this.logger?.warn({ err: e }, 'no staging database: large requests are not staged');
    }
  }

  /** Whether requests can be staged (the staging database exists). */
  get available(): boolean {
    return this.ready;
  }

  counters(): StageStats {
    return { ...this.stats };
  }

  /**
   * Whether a request naming `columns` may be staged: names the engine's insert call takes, and
   * no column whose DEFAULT could come out differently in the staging insert (a null in a
   * non-nullable column takes the DEFAULT there, evaluated without the commit's `log_comment`).
   */
  static eligible(def: StreamDefinition, columns: readonly string[]): boolean {
    if (def.storageType !== 'hybrid') return false;
    for (const name of columns) {
      if (!INSERTABLE.test(name)) return false;
      const c = def.columns.find((col) => col.name === name);
      if (!c || c.alias) return false;
      if (c.default && !c.engineType.startsWith('Nullable(')) return false;
    }
    return columns.length > 0;
  }

  /**
   * The staging columns of JSONEachRow requests (rows may give any column or leave it out): every
   * stored column but `_tp_time`, when none of them has a DEFAULT (a left-out key takes the type's
   * default in both tables then); undefined when the stream is not eligible. A row giving
   * `_tp_time` makes the staging insert fail (unknown fields are refused), and the usual insert runs.
   */
  static objectColumns(def: StreamDefinition): string[] | undefined {
    if (def.storageType !== 'hybrid') return undefined;
    const columns: string[] = [];
    for (const c of def.columns) {
      if (c.alias || c.name === TP_SN || c.name === TP_TIME) continue;
      if (c.default || !INSERTABLE.test(c.name)) return undefined;
      columns.push(c.name);
    }
    return columns.length > 0 ? columns : undefined;
  }

  /** Staged requests of a stream not yet answered. */
  pending(db: string, name: string): number {
    return this.inFlight.get(`${db}.${name}`) ?? 0;
  }

  /** Start staging `payload` (rows in `format`, of `columns`) for a stream. */
  begin(
    def: StreamDefinition,
    format: PayloadFormat,
    columns: readonly string[],
    payload: Buffer,
  ): StagedRows {
    const key = `${def.db}.${def.name}`;
    this.stats.started++;
    this.inFlight.set(key, (this.inFlight.get(key) ?? 0) + 1);
    const slot = this.takeSlot(key, def, columns).catch((e: unknown) => {
      this.logger?.warn({ err: e, stream: key }, 'staging table could not be made');
      return undefined;
    });
    return new Staging(key, slot, format, columns, payload, async (s) => {
      const r = await this.engine.insert(`${STAGE_DB}.${s.table}`, payload, {
        format,
        ...(format === 'JSONCompactEachRow'
          ? { columns, settings: insertSettings(payload.length) }
          : { settings: { ...insertSettings(payload.length), input_format_skip_unknown_fields: 0 } }),
      });
      return r.rowsWritten;
    });
  }

  /**
   * Move staged rows into the stream's front table as one insert numbered like the commit's
   * (`first`, `time`: ingestComment). Answers false when the staged rows cannot stand for the
   * request's `count` rows (the engine refused them, or the stream changed): the caller then
   * inserts the payload itself.
   */
  async move(
    rows: StagedRows,
    def: StreamDefinition,
    first: number,
    time: number,
    count: number,
    shard?: number,
  ): Promise<boolean> {
    if (!(rows instanceof Staging)) return false;
    const slot = await rows.slot;
    const n = await rows.staged;
    if (!slot || n !== count || slot.def !== def || slot.shape !== rows.columns.join('\u0001')) return false;
    const cols = rows.columns.map(quoteIdent).join(', ');
    await this.engine.query(
      `INSERT INTO ${writeTable(def)} (${cols}) SELECT ${cols} FROM ${quoteIdent(STAGE_DB)}.${quoteIdent(slot.table)}` +
        // One reading thread: the Memory table's blocks come out in the order they were staged,
        // so `_tp_sn` (first + the row's position in the insert) numbers them as a replay would.
        ` SETTINGS log_comment = ${quoteString(ingestComment(first, time, shard))}, max_threads = 1`,
    );
    rows.moved = true;
    this.stats.moved++;
    return true;
  }

  /** The request is done (acknowledged or refused): empty its staging table and keep it for reuse. */
  release(rows: StagedRows): void {
    if (!(rows instanceof Staging) || rows.released) return;
    rows.released = true;
    rows.taken = true;
    const left = (this.inFlight.get(rows.key) ?? 1) - 1;
    if (left > 0) this.inFlight.set(rows.key, left);
    else this.inFlight.delete(rows.key);
    if (!rows.moved) this.stats.discarded++;
    void (async () => {
      const slot = await rows.slot;
      if (!slot) return;
      await rows.staged;
      const key = `${slot.def.db}.${slot.def.name}`;
      const list = this.idle.get(key) ?? [];
      if (list.length < IDLE_PER_STREAM) {
        await this.engine.query(`TRUNCATE TABLE ${quoteIdent(STAGE_DB)}.${quoteIdent(slot.table)}`);
        list.push(slot);
        this.idle.set(key, list);
      } else {
        this.dropQuietly(slot.table);
      }
    })().catch((e: unknown) => this.logger?.warn({ err: e }, 'staging table could not be emptied'));
  }

  /** The stream was dropped or altered: drop its idle staging tables. */
  forget(db: string, name: string): void {
    const key = `${db}.${name}`;
    const list = this.idle.get(key) ?? [];
    this.idle.delete(key);
    for (const s of list) this.dropQuietly(s.table);
  }

  private dropQuietly(table: string): void {
    void this.engine
      .query(`DROP TABLE IF EXISTS ${quoteIdent(STAGE_DB)}.${quoteIdent(table)} SYNC`)
      .catch((e: unknown) => this.logger?.warn({ err: e }, 'staging table could not be dropped'));
  }

  /**
   * An idle staging table for these columns of the stream's current definition, or a new one: the
   * columns alone, with the stream's types and no DEFAULT (eligible() keeps out the columns where
   * a DEFAULT would matter), so the staging insert only parses (~15% cheaper than a table `AS` the
   * stream's, which computes `_tp_sn`, `_tp_time` and the other DEFAULTs only to throw them away).
   */
  private async takeSlot(key: string, def: StreamDefinition, columns: readonly string[]): Promise<Slot> {
    const shape = columns.join('\u0001');
    const list = this.idle.get(key) ?? [];
    const i = list.findIndex((s) => s.def === def && s.shape === shape);
    if (i >= 0) return list.splice(i, 1)[0] as Slot;
    for (const s of list.filter((s) => s.def !== def)) {
      list.splice(list.indexOf(s), 1);
      this.dropQuietly(s.table);
    }
    const types = columns.map((name) => {
      const c = def.columns.find((col) => col.name === name) as StreamDefinition['columns'][number];
      return `${quoteIdent(name)} ${c.engineType}`;
    });
    const table = `s${++this.seq}`;
    await this.engine.query(
      withTypeChecks(
        `CREATE TABLE ${quoteIdent(STAGE_DB)}.${quoteIdent(table)} (${types.join(', ')}) ENGINE = Memory`,
        def.settings,
      ),
    );
    return { table, def, shape };
  }
}
