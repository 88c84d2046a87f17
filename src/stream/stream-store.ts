import { mkdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Actor } from '../catalog/audit.ts';
import type { Catalog, CatalogRecord } from '../catalog/catalog.ts';
import type { Engine } from '../engine/engine.ts';
import { err } from '../errors/tributary-error.ts';
import type { Logger } from '../log/logger.ts';
import {
  applyAlteration,
  type ColumnAlteration,
  historyEntry,
  isStructural,
  pruneHistory,
} from './alter-columns.ts';
import {
  type CommittedRange,
  CommittedRangeNotifier,
  type RangeListener,
} from './committed-range-notifier.ts';
import {
  checkTableName,
  defineStream,
  type ExprInput,
  identityTranslate,
  type StreamSpec,
  type TranslateExpression,
  withCreateQuery,
} from './define-stream.ts';
import { engineRowsBatch } from './engine-rows-batch.ts';
import { frontState, resolveFrontRanges } from './front-range-reads.ts';
import { type PreparedBatch, type PrepareOptions, prepareBatchNow, toJsonValue } from './ingest-batch.ts';
import { compactBodyRows, type ParsedRows, parseIngestBody, streamingBodyRows } from './ingest-body.ts';
import type { IngestFormat } from './ingest-format.ts';
import { IngestGate } from './ingest-gate.ts';
import type { ProducerPosition, ProducerTag } from './producer-marks.ts';
import { StageArea, type StagedRows, type StageStats } from './stage-area.ts';
import { type AlterStep, alterStreamTables, renameStreamTables } from './stream-alter.ts';
import { type ColumnHistoryEntry, type StreamDefinition, streamKey } from './stream-definition.ts';
import {
  checkDatabase,
  ensureTables,
  removeOrphanWals,
  tableExists,
  walDirName,
} from './stream-housekeeping.ts';
import { type RuntimeOptions, StreamRuntime } from './stream-runtime.ts';
import { type StreamSizes, type StreamStatistics, streamSizes, streamStatistics } from './stream-stats.ts';
import {
  type BufferPolicy,
  createStatements,
  DEFAULT_BUFFER_POLICY,
  dropStatements,
  historyTable,
  historyTableName,
  modifyMemoryCapStatement,
  modifyTtlStatement,
} from './stream-tables.ts';
import type { CommitResult, WriterCounters } from './stream-writer.ts';
import { DEFAULT_WAL_OPTIONS, type WalOptions } from './write-ahead-log.ts';

export const STREAM_KIND = 'stream';
const INTERNAL_DATABASES = new Set(['system', 'INFORMATION_SCHEMA', 'information_schema']);

export interface StreamStoreOptions {
  engine: Engine;
  catalog: Catalog;
  /** Tributary's data directory; WALs live under `<dataDir>/streams/<db>/<name>/`. */
  dataDir: string;
  logger?: Logger;
  translateExpression?: TranslateExpression;
  buffer?: BufferPolicy;
  wal?: Partial<WalOptions>;
  /** How often retention runs (ms; default 2000). */
  maintenanceIntervalMs?: number;
  /** Group-commit caps. */
  maxGroupRows?: number;
  maxGroupBytes?: number;
  /**
   * A compact request body at least this large has its rows staged in the engine while they are
   * checked (README.md, "Large requests"; default 128 KiB; Infinity: never).
   */
  stageMinBytes?: number;
}

/** Default of StreamStoreOptions.stageMinBytes (~2,000 rows of four short columns). */
export const DEFAULT_STAGE_MIN_BYTES = 128 * 1024;

/** A stream as the catalog holds it: the definition plus audit fields. */
export type StreamRecord = CatalogRecord<StreamDefinition>;

/** What PATCH /streams/{name} (and ALTER STREAM ... MODIFY SETTING/TTL) may change. */
export interface StreamPatch {
  description?: string;
  /** A new TTL of the historical store; null removes it. */
  ttl?: ExprInput | null;
  logstoreRetentionBytes?: number;
  logstoreRetentionMs?: number;
}

/** Rows handed in by an in-process producer (SQL INSERT, inputs, MV outputs). */
export type IngestInput =
  | { columns: string[]; rows: unknown[][] }
  | { objects: Array<Record<string, unknown>> };

export interface IngestOptions {
  /** `x-timeplus-idempotent-id`: a retry with the same id writes nothing twice. */
  idempotencyId?: string;
  /** Columns every row must give (the elastic input's `_raw`, `_index`, `_id`). */
  requiredColumns?: readonly string[];
  /**
   * The producer and its tag (a materialized view's output): a tag not after the producer's last
   * one is acknowledged without writing (README.md, "Producer tags").
   */
  producer?: ProducerTag;
}

export interface DatabaseInfo {
  name: string;
  engine: string;
}

/**
 * Checks other owners of names run before a stream is created or dropped (views: a view's name
 * cannot be taken by a stream, a stream a view reads cannot be dropped). They throw to refuse.
 * RENAME STREAM runs both: `beforeDrop` of the old name and `beforeCreate` of the new one.
 */
export interface StreamGuard {
  beforeCreate?(db: string, name: string): void;
  beforeDrop?(db: string, name: string): void;
}

/** Hooks for tests that simulate crashes. Never set in production. */
export interface StreamTestHooks {
  /** Commit to the WAL and acknowledge, but do not insert into the engine (as if the process died). */
  skipEngineInsert?: (db: string, name: string) => boolean;
}

/**
 * Streams: their definitions (in the catalog), engine tables, WALs, writers and committed-range
 * notifications. The one entry point for creating, dropping and writing streams; see README.md.
 */
export class StreamStore {
  private readonly runtimes = new Map<string, StreamRuntime>();
  /** Streams that could not be opened at start, and why. */
  private readonly unavailable = new Map<string, string>();
  private readonly notifier: CommittedRangeNotifier;
  private readonly locks = new Map<string, Promise<unknown>>();
  private readonly runtimeOptions: RuntimeOptions;
  private timer: NodeJS.Timeout | undefined;
  private maintaining = false;
  private closed = false;
  private hooks: StreamTestHooks = {};
  private readonly guards: StreamGuard[] = [];
  /** Per stream: ingests in flight, held back while ALTER/RENAME STREAM change the tables. */
  private readonly gates = new Map<string, IngestGate>();
  private readonly stage: StageArea;

  private constructor(private readonly o: StreamStoreOptions) {
    this.notifier = new CommittedRangeNotifier(o.logger);
    this.stage = new StageArea(o.engine, o.logger);
    this.runtimeOptions = {
      engine: o.engine,
      wal: { ...DEFAULT_WAL_OPTIONS, ...o.wal },
      buffer: o.buffer ?? DEFAULT_BUFFER_POLICY,
      ...(o.logger ? { logger: o.logger } : {}),
      ...(o.maxGroupRows ? { maxGroupRows: o.maxGroupRows } : {}),
      ...(o.maxGroupBytes ? { maxGroupBytes: o.maxGroupBytes } : {}),
      publish: (key: string, range: CommittedRange) => this.notifier.publish(key, range),
      hooks: () => this.hooks,
      stage: this.stage,
    };
  }

  /** Open every stream of the catalog: engine tables checked, WAL replayed, writers ready. */
  static async open(options: StreamStoreOptions): Promise<StreamStore> {
    const store = new StreamStore(options);
    await store.stage.open();
    const keep = new Set<string>();
    for (const record of options.catalog.list<StreamDefinition>(STREAM_KIND)) {
      const def = record.value;
      keep.add(walDirName(def.db, def.name));
      try {
        await ensureTables(options.engine, def, options.logger);
        const rt = await StreamRuntime.open(def, store.walDir(def.db, def.name), store.runtimeOptions);
        store.runtimes.set(record.key, rt);
      } catch (e) {
        // One broken stream does not keep the server down: it refuses writes, its WAL stays as it is.
        const detail = e instanceof Error ? e.message : String(e);
        options.logger?.error(
          { err: e, stream: record.key },
          'stream could not be opened; it refuses writes',
        );
        store.unavailable.set(record.key, `it could not be opened at start (${detail})`);
      }
    }
    await removeOrphanWals(join(options.dataDir, 'streams'), keep);
    const interval = options.maintenanceIntervalMs ?? 2000;
    store.timer = setInterval(() => void store.maintain(), interval);
    store.timer.unref();
    return store;
  }

  // ---- definitions ----

  get(db: string, name: string): StreamRecord | undefined {
    return this.o.catalog.get<StreamDefinition>(STREAM_KIND, streamKey(db, name));
  }

  /** The stream's record, or UNKNOWN_STREAM (404). */
  require(db: string, name: string): StreamRecord {
    const r = this.get(db, name);
    if (!r) throw err('UNKNOWN_STREAM', { name: db === 'default' ? name : `${db}.${name}` });
    return r;
  }

  list(db?: string): StreamRecord[] {
    return this.o.catalog.list<StreamDefinition>(
      STREAM_KIND,
      db === undefined ? undefined : (r) => r.value.db === db,
    );
  }

  /** Validate, create the engine tables and the WAL, and record the stream in the catalog. */
  async create(
    spec: StreamSpec,
    actor: Actor,
    options: { ifNotExists?: boolean } = {},
  ): Promise<StreamRecord> {
    const def = defineStream(
      spec,
      this.o.translateExpression ? { translateExpression: this.o.translateExpression } : {},
    );
    const key = streamKey(def.db, def.name);
    return this.locked(key, async () => {
      const existing = this.get(def.db, def.name);
      if (existing) {
        if (options.ifNotExists) return existing;
        throw err('STREAM_ALREADY_EXISTS', { name: key });
      }
      for (const g of this.guards) g.beforeCreate?.(def.db, def.name);
      await checkDatabase(this.o.engine, def.db);
      if (await tableExists(this.o.engine, def.db, def.name))
        throw err('STREAM_ALREADY_EXISTS', { name: key });
      const created: string[] = [];
      try {
        for (const sql of createStatements(def)) {
          await this.o.engine.query(sql);
          created.push(sql);
        }
        const dir = this.walDir(def.db, def.name);
        await rm(dir, { recursive: true, force: true });
        const rt = await StreamRuntime.open(def, dir, this.runtimeOptions);
        this.runtimes.set(key, rt);
        return await this.o.catalog.create(STREAM_KIND, key, def, actor);
      } catch (e) {
        await this.discard(def, created.length > 0);
        throw e;
      }
    });
  }

  /** Drop a stream: its writer, engine tables, WAL and catalog record. Answers whether it existed. */
  async drop(db: string, name: string, options: { ifExists?: boolean } = {}): Promise<boolean> {
    const key = streamKey(db, name);
    return this.locked(key, async () => {
      const record = this.get(db, name);
      if (!record) {
        if (options.ifExists) return false;
        this.require(db, name);
      }
      for (const g of this.guards) g.beforeDrop?.(db, name);
      await this.discard((record as StreamRecord).value, true);
      await this.o.catalog.delete(STREAM_KIND, key);
      return true;
    });
  }

  /** Change description, TTL or retention. */
  async update(db: string, name: string, patch: StreamPatch, actor: Actor): Promise<StreamRecord> {
    const key = streamKey(db, name);
    return this.locked(key, async () => {
      const old = this.require(db, name).value;
      const { createQuery: _, ttl: oldTtl, ...base } = old;
      const ttl = patch.ttl === undefined ? oldTtl : this.expr(patch.ttl);
      const def = withCreateQuery({
        ...base,
        ...(ttl ? { ttl } : {}),
        description: patch.description ?? old.description,
        logstoreRetentionBytes: patch.logstoreRetentionBytes ?? old.logstoreRetentionBytes,
        logstoreRetentionMs: patch.logstoreRetentionMs ?? old.logstoreRetentionMs,
      });
      if (patch.ttl !== undefined && (old.ttl?.engine ?? '') !== (def.ttl?.engine ?? '')) {
        const sql = modifyTtlStatement(def);
        if (sql) await this.o.engine.query(sql);
      }
      if (patch.logstoreRetentionBytes !== undefined) {
        const sql = modifyMemoryCapStatement(def);
        if (sql) await this.o.engine.query(sql);
      }
      const record = await this.o.catalog.update(STREAM_KIND, key, def, actor);
      this.runtimes.get(key)?.redefine(def);
      return record;
    });
  }

  /**
   * ALTER STREAM's column commands, applied in order (README.md, "ALTER STREAM"): every command is
   * checked against the definition before anything changes; then ingest is held back, the engine
   * tables are altered, the catalog updated and the writer validates against the new columns. If
   * the engine refuses a command, the commands before it stay applied and its error is thrown.
   */
  async alterColumns(
    db: string,
    name: string,
    alterations: readonly ColumnAlteration[],
    actor: Actor,
  ): Promise<StreamRecord> {
    const key = streamKey(db, name);
    return this.locked(key, async () => {
      const start = this.require(db, name).value;
      const translate = this.o.translateExpression ?? identityTranslate;
      const steps: AlterStep[] = [];
      let def = start;
      for (const a of alterations) {
        const r = applyAlteration(def, a, translate);
        if (r.change) steps.push({ before: def, def: r.def, change: r.change });
        def = r.def;
      }
      if (steps.length === 0) return this.require(db, name);
      const rt = this.runtime(db, name);
      // Comments change no data: ingest goes on. Anything else waits for the ingests in flight.
      const gate = steps.some((s) => isStructural(s.change)) ? this.gateOf(key) : undefined;
      const paused = performance.now();
      await gate?.close();
      try {
        const sn = rt.writer.committedSn + 1;
        // Structural changes flush and rebuild the front table with reads held back.
        const outcome = gate
          ? await rt.exclusive(() => alterStreamTables(this.o.engine, steps, this.o.logger))
          : await alterStreamTables(this.o.engine, steps, this.o.logger);
        let record = this.require(db, name);
        const applied = steps.slice(0, outcome.applied);
        if (applied.length > 0) {
          const history: ColumnHistoryEntry[] =
            start.storageType === 'memory' ? [] : pruneHistory(start.columnHistory, rt.walFirstSn);
          for (const step of applied) {
            const entry = historyEntry(step.before, step.change, sn);
            if (entry) history.push(entry);
          }
          const { columnHistory: _, ...last } = (applied.at(-1) as AlterStep).def;
          const next: StreamDefinition = history.length > 0 ? { ...last, columnHistory: history } : last;
          record = await this.o.catalog.update(STREAM_KIND, key, next, actor);
          rt.redefine(next);
        }
        this.o.logger?.info(
          {
            stream: key,
            commands: applied.map((s) => s.change.kind),
            writesPausedMs: gate ? Math.round(performance.now() - paused) : 0,
            frontTableGoneMs: Math.round(outcome.frontGapMs),
          },
          'ALTER STREAM applied',
        );
        if (outcome.error) throw outcome.error;
        return record;
      } finally {
        gate?.open();
      }
    });
  }

  /**
   * RENAME STREAM: engine tables, WAL directory, catalog record, writer and subscribers move to
   * `toDb.toName` (another database is fine). Refused when the new name is taken (57), by a guard
   * (a view reads the stream: 630), or when the stream does not exist (60).
   */
  async rename(db: string, name: string, toDb: string, toName: string, actor: Actor): Promise<StreamRecord> {
    const from = streamKey(db, name);
    const to = streamKey(toDb, toName);
    if (from === to) {
      this.require(db, name);
      throw err('STREAM_ALREADY_EXISTS', { name: toDb === 'default' ? toName : to });
    }
    const [first, second] = [from, to].sort() as [string, string];
    return this.locked(first, () =>
      this.locked(second, async () => {
        const old = this.require(db, name).value;
        const shownTo = toDb === 'default' ? toName : to;
        checkTableName('Stream', toName);
        if (this.get(toDb, toName)) throw err('STREAM_ALREADY_EXISTS', { name: shownTo });
        for (const g of this.guards) g.beforeDrop?.(db, name);
        for (const g of this.guards) g.beforeCreate?.(toDb, toName);
        await checkDatabase(this.o.engine, toDb);
        if (
          (await tableExists(this.o.engine, toDb, toName)) ||
          (await tableExists(this.o.engine, toDb, historyTableName(toName)))
        )
          throw err('STREAM_ALREADY_EXISTS', { name: shownTo });
        const { createQuery: _, ...base } = old;
        const def = withCreateQuery({ ...base, db: toDb, name: toName });
        const gate = this.gateOf(from);
        await gate.close();
        try {
          // The new record first: a crash in the middle leaves two records (one of them with empty
          // tables), never tables no record names.
          const record = await this.o.catalog.create(STREAM_KIND, to, def, actor);
          const rt = this.runtimes.get(from);
          this.runtimes.delete(from);
          await rt?.close();
          try {
            await renameStreamTables(this.o.engine, old, def);
          } catch (e) {
            await this.o.catalog.delete(STREAM_KIND, to);
            if (rt)
              this.runtimes.set(
                from,
                await StreamRuntime.open(old, this.walDir(db, name), this.runtimeOptions),
              );
            throw e;
          }
          const dir = this.walDir(toDb, toName);
          await rm(dir, { recursive: true, force: true });
          await mkdir(dirname(dir), { recursive: true });
          await rename(this.walDir(db, name), dir).catch((e: NodeJS.ErrnoException) => {
            if (e.code !== 'ENOENT') throw e;
          });
          await this.o.catalog.delete(STREAM_KIND, from);
          this.notifier.rename(from, to);
          this.unavailable.delete(from);
          this.gates.delete(from);
          try {
            const resume = { nextSn: (rt?.writer.committedSn ?? -1) + 1 };
            this.runtimes.set(
              to,
              await StreamRuntime.open(def, dir, this.runtimeOptions, rt ? resume : undefined),
            );
          } catch (e) {
            const detail = e instanceof Error ? e.message : String(e);
            this.o.logger?.error({ err: e, stream: to }, 'renamed stream could not be opened');
            this.unavailable.set(to, `it could not be opened after RENAME (${detail})`);
          }
          return record;
        } finally {
          gate.open();
        }
      }),
    );
  }

  /** Add a check run before every create and drop (see StreamGuard). */
  guard(guard: StreamGuard): void {
    this.guards.push(guard);
  }

  /** Databases of the engine, Tributary's own excluded. */
  async databases(): Promise<DatabaseInfo[]> {
    const text = (
      await this.o.engine.query('SELECT name, engine FROM system.databases ORDER BY name', {
        format: 'JSONEachRow',
      })
    ).text();
    return text
      .split('\n')
      .filter((l) => l.length > 0)
      .map((l) => JSON.parse(l) as DatabaseInfo)
      .filter((d) => !INTERNAL_DATABASES.has(d.name) && !d.name.startsWith('_tributary'));
  }

  // ---- ingest ----

  /** Ingest an HTTP body in one of the four formats. */
  ingestBody(
    db: string,
    name: string,
    body: Buffer,
    format: IngestFormat,
    charset = 'utf-8',
    options: IngestOptions = {},
  ): Promise<CommitResult> {
    // Not async, nor the callback: a request that waits for its commit holds no promise but the
    // gate's and the writer's (the 256-client profile: every pending request's promises survive
    // the scavenges that run meanwhile). A synchronous throw inside becomes the gate's rejection.
    return this.gated(db, name, () => {
      const rt = this.runtime(db, name);
      const prior = options.idempotencyId ? rt.priorCommit(options.idempotencyId) : undefined;
      if (prior) return Promise.resolve(prior);
      const staged = this.beginStage(rt, body, format, charset);
      if (!staged) return this.commit(rt, parseIngestBody(body, format, charset), options);
      return this.commitStaged(rt, staged, body, format, charset, options);
    });
  }

  /** A request whose rows are being staged: parse and check it meanwhile, then commit. */
  private async commitStaged(
    rt: StreamRuntime,
    staged: StagedRows,
    body: Buffer,
    format: IngestFormat,
    charset: string,
    options: IngestOptions,
  ): Promise<CommitResult> {
    try {
      // Let the staging insert reach the engine before the parse below holds the thread.
      await new Promise<void>((resolve) => setImmediate(resolve));
      return await this.commit(rt, parseIngestBody(body, format, charset), options, staged);
    } finally {
      this.stage.release(staged);
    }
  }

  /** Large compact and NDJSON bodies: hand their rows to the engine's staging now (stage-area.ts). */
  private beginStage(
    rt: StreamRuntime,
    body: Buffer,
    format: IngestFormat,
    charset: string,
  ): StagedRows | undefined {
    if (format !== 'compact' && format !== 'streaming') return undefined;
    if (body.length < (this.o.stageMinBytes ?? DEFAULT_STAGE_MIN_BYTES)) return undefined;
    if (!this.stage.available) return undefined;
    // Only a request that would have the engine to itself: staging costs the engine more (the
    // staging insert plus the move, ~8.3 against ~7 ms of CPU for 10,000 rows) and is never merged
    // with other requests' inserts, so with requests queued it lowers throughput (4 in flight,
    // in-process: 63 against 50 ms per 4 requests, min of 40) while saving nothing: the engine is busy anyway.
    const def = rt.definition;
    if (!rt.writer.idle || this.stage.pending(def.db, def.name) > 0) return undefined;
    if (charset !== 'utf-8' && charset !== 'utf8' && charset !== 'us-ascii' && charset !== 'ascii')
      return undefined;
    if (format === 'streaming') {
      const columns = StageArea.objectColumns(def);
      const rows = columns && streamingBodyRows(body);
      return columns && rows ? this.stage.begin(def, 'JSONEachRow', columns, rows) : undefined;
    }
    const found = compactBodyRows(body);
    if (!found || !StageArea.eligible(def, found.columns)) return undefined;
    return this.stage.begin(def, 'JSONCompactEachRow', found.columns, found.rows);
  }

  /** Large requests staged while checked, and what became of them (stage-area.ts). */
  stageCounters(): StageStats {
    return this.stage.counters();
  }

  /**
   * Ingest rows the engine produced (a materialized view's step output) as JSONCompactEachRow
   * lines of `columns`: the engine wrote them from values of its own types, so they are not parsed
   * or checked value by value here (the engine insert refuses any that do not fit the stream, and
   * the write fails as a whole). Columns are still checked by name: each must be writable.
   */
  async ingestEngineRows(
    db: string,
    name: string,
    columns: readonly string[],
    lines: readonly string[],
    options: IngestOptions = {},
  ): Promise<CommitResult> {
    return this.gated(db, name, () => {
      const rt = this.runtime(db, name);
      return rt.writer.submit(engineRowsBatch(rt.schema, columns, lines, options));
    });
  }

  /** Ingest rows already parsed by an in-process producer; values are JSON values, bigint, Date. */
  async ingest(
    db: string,
    name: string,
    input: IngestInput,
    options: IngestOptions = {},
  ): Promise<CommitResult> {
    return this.gated(db, name, () => this.ingestParsed(db, name, input, options));
  }

  private ingestParsed(
    db: string,
    name: string,
    input: IngestInput,
    options: IngestOptions,
  ): Promise<CommitResult> {
    const rt = this.runtime(db, name);
    const prior = options.idempotencyId ? rt.priorCommit(options.idempotencyId) : undefined;
    if (prior) return Promise.resolve(prior);
    const parsed: ParsedRows =
      'objects' in input
        ? { kind: 'objects', objects: input.objects.map((o) => toJsonValue(o)) }
        : {
            kind: 'compact',
            columns: input.columns,
            rows: input.rows.map((r) => (Array.isArray(r) ? r.map(toJsonValue) : r)),
          };
    return this.commit(rt, parsed, options);
  }

  /** Check the rows and hand them to the writer (throws at once for a bad request without doubts). */
  private commit(
    rt: StreamRuntime,
    parsed: ParsedRows,
    options: IngestOptions,
    staged?: StagedRows,
  ): Promise<CommitResult> {
    // One literal, unset keys undefined: no spread objects per request.
    const prepare: PrepareOptions = {
      verifyDoubts: rt.verifyDoubts,
      idempotencyId: options.idempotencyId || undefined,
      requiredColumns: options.requiredColumns,
      producer: options.producer,
    };
    const prepared = prepareBatchNow(rt.schema, parsed, prepare);
    if (prepared instanceof Promise) return prepared.then((batch) => submitBatch(rt, batch, staged));
    return submitBatch(rt, prepared, staged);
  }

  // ---- the streaming side ----

  /** Receive every committed range of the stream, in order, from now on; answers the unsubscribe. */
  subscribe(db: string, name: string, listener: RangeListener): () => void {
    this.require(db, name);
    return this.notifier.subscribe(streamKey(db, name), listener);
  }

  /** Where the recent commits of a stream after `afterSn` ended (CommittedRangeNotifier.recentCommitEnds). */
  recentCommitEnds(db: string, name: string, afterSn: number): number[] {
    return this.notifier.recentCommitEnds(streamKey(db, name), afterSn);
  }

  /** The last tag producer `id` durably wrote into the stream (undefined before its first write). */
  lastProducerTag(db: string, name: string, id: string): ProducerPosition | undefined {
    return this.runtime(db, name).lastProducerTag(id);
  }

  /**
   * Where a stream's write path stands (writer queue, engine writes, front and its lock, ingest
   * gate), for diagnostics of a request that is not answered.
   */
  diagnostics(db: string, name: string): Record<string, unknown> {
    const key = streamKey(db, name);
    const gate = this.gates.get(key);
    return {
      ...(this.runtimes.get(key)?.diagnostics() ?? { open: false }),
      ...(gate ? { ingestGate: { inside: gate.active, closed: gate.isClosed } } : {}),
    };
  }

  /** What the stream's writer has done since it opened: requests, rows, WAL appends, engine inserts. */
  writerCounters(db: string, name: string): WriterCounters {
    return this.runtime(db, name).writer.counters;
  }

  /** The last committed `_tp_sn` of the stream (-1 when it has no rows). */
  committedSn(db: string, name: string): number {
    return this.runtime(db, name).writer.committedSn;
  }

  /**
   * Run `fn`, which reads the front tables of the streams `keys` (`db.name`), while none of their
   * Buffers is being flushed: a read overlapping a flush can miss the rows being moved
   * (flush-lock.ts). Every engine read of a stream goes through here; unknown keys are ignored.
   */
  read<T>(keys: Iterable<string>, fn: () => Promise<T>): Promise<T> {
    // One order for everyone, so two readers of the same streams never wait on each other's flush.
    const runtimes = [...new Set(keys)]
      .sort()
      .map((k) => this.runtimes.get(k))
      .filter((rt): rt is StreamRuntime => rt !== undefined);
    const enter = (i: number): Promise<T> => {
      const rt = runtimes[i];
      return rt ? rt.read(() => enter(i + 1)) : fn();
    };
    return enter(0);
  }

  /** Move the rows of a hybrid stream's front into its MergeTree now (tests, operations). */
  /**
   * OPTIMIZE: move the front into the MergeTree, then have the engine merge the MergeTree's parts
   * (`final`: into one per partition, applying TTL; `partition`: engine SQL of one partition). Under
   * the stream's lock, so no ALTER, RENAME or DROP overlaps it; reads and ingest go on meanwhile. A
   * stream without a MergeTree (memory storage) has nothing to merge.
   */
  async optimize(db: string, name: string, o: { final: boolean; partition?: string }): Promise<void> {
    const def = this.require(db, name).value;
    const key = streamKey(db, name);
    await this.locked(key, async () => {
      await this.flush(db, name);
      const history = historyTable(def);
      if (!history) return;
      const partition = o.partition === undefined ? '' : ` PARTITION ${o.partition}`;
      await this.o.engine.query(`OPTIMIZE TABLE ${history}${partition}${o.final ? ' FINAL' : ''}`);
    });
  }

  async flush(db: string, name: string): Promise<void> {
    this.require(db, name);
    await this.runtimes.get(streamKey(db, name))?.exclusive(async () => undefined);
  }

  /**
   * `sql` with its marked range reads reading a stream's front alone where the range lies wholly
   * there (front-range-reads.ts). Only inside `read` of the streams it reads.
   */
  resolveFrontRanges(sql: string): string {
    return resolveFrontRanges(sql, (key) => {
      const rt = this.runtimes.get(key);
      const from = rt?.frontFromSn;
      return rt && from !== undefined ? frontState(rt.definition, from) : undefined;
    });
  }

  // ---- stats ----

  async sizes(db: string, name: string): Promise<StreamSizes> {
    const def = this.require(db, name).value;
    const key = streamKey(db, name);
    return this.read([key], () => streamSizes(this.o.engine, def, this.runtimes.get(key)?.walBytes ?? 0));
  }

  async statistics(db: string, name: string): Promise<StreamStatistics> {
    const def = this.require(db, name).value;
    const key = streamKey(db, name);
    const rt = this.runtimes.get(key);
    return this.read([key], () =>
      streamStatistics(this.o.engine, def, {
        bytes: rt?.walBytes ?? 0,
        committedSn: rt?.writer.committedSn ?? -1,
        lastCommitAt: rt?.writer.lastCommitAt ?? 0,
      }),
    );
  }

  setTestHooks(hooks: StreamTestHooks): void {
    this.hooks = hooks;
  }

  /** Finish queued writes, flush Buffer tables into the historical store, close the WALs. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    await Promise.allSettled([...this.runtimes.values()].map((rt) => rt.close()));
    this.runtimes.clear();
  }

  /** Retention of every stream's WAL; runs on a timer. */
  async maintain(now = Date.now()): Promise<void> {
    if (this.maintaining || this.closed) return;
    this.maintaining = true;
    try {
      for (const rt of [...this.runtimes.values()]) {
        try {
          // Under the stream's lock: not while ALTER/RENAME/DROP change its tables or WAL.
          await this.locked(rt.key, async () => {
            if (this.runtimes.get(rt.key) === rt) await rt.applyRetention(now);
          });
        } catch (e) {
          this.o.logger?.warn({ err: e, stream: rt.key }, 'WAL retention failed; will retry');
        }
      }
    } finally {
      this.maintaining = false;
    }
  }

  // ---- internals ----

  /** Run an ingest inside the stream's gate (see IngestGate); an unknown stream has none. */
  private gated<T>(db: string, name: string, fn: () => Promise<T>): Promise<T> {
    const key = streamKey(db, name); // made once: its hash is kept for the second lookup
    const gate = this.o.catalog.get(STREAM_KIND, key) ? this.gateOf(key) : undefined;
    if (gate && !gate.tryEnter()) return this.gatedAfterWait(gate, fn);
    // An open gate is entered at once, and not through an async function: a request waiting for
    // its commit holds the writer's promise and this one, no async frame.
    let pending: Promise<T>;
    try {
      pending = fn();
    } catch (e) {
      gate?.leave();
      return Promise.reject(e);
    }
    return gate ? pending.then(gate.leaveWith as (v: T) => T, gate.leaveThrowing) : pending;
  }

  private async gatedAfterWait<T>(gate: IngestGate, fn: () => Promise<T>): Promise<T> {
    await gate.enter();
    try {
      return await fn();
    } finally {
      gate.leave();
    }
  }

  private gateOf(key: string): IngestGate {
    let gate = this.gates.get(key);
    if (!gate) {
      gate = new IngestGate();
      this.gates.set(key, gate);
    }
    return gate;
  }

  private runtime(db: string, name: string): StreamRuntime {
    const key = streamKey(db, name);
    const rt = this.runtimes.get(key);
    if (rt) return rt;
    this.require(db, name);
    throw err('INGEST_STREAM_FAILED', { stream: key, detail: this.unavailable.get(key) ?? 'it is not open' });
  }

  private expr(input: ExprInput | null): StreamDefinition['ttl'] {
    if (input === null) return undefined;
    if (typeof input !== 'string') return input;
    const proton = input.trim();
    if (!proton) return undefined;
    return { proton, engine: (this.o.translateExpression ?? ((s) => s))(proton) };
  }

  private walDir(db: string, name: string): string {
    return join(this.o.dataDir, 'streams', walDirName(db, name));
  }

  private async discard(def: StreamDefinition, tables: boolean): Promise<void> {
    const key = streamKey(def.db, def.name);
    const rt = this.runtimes.get(key);
    this.runtimes.delete(key);
    this.unavailable.delete(key);
    this.notifier.clear(key);
    this.gates.delete(key);
    await rt?.discard();
    this.stage.forget(def.db, def.name);
    if (tables) for (const sql of dropStatements(def)) await this.o.engine.query(sql);
    await rm(this.walDir(def.db, def.name), { recursive: true, force: true });
  }

  private locked<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.locks.get(key) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const tail = next.catch(() => undefined);
    this.locks.set(key, tail);
    void tail.then(() => {
      if (this.locks.get(key) === tail) this.locks.delete(key);
    });
    return next;
  }
}

/**
 * The batch's payload is exactly the bytes staged (no re-encoding happened), in the same format and,
 * for JSONCompactEachRow, for the same columns.
 */
/** Hand a checked batch to the stream's writer, with its staged rows when they are its own. */
function submitBatch(rt: StreamRuntime, batch: PreparedBatch, staged?: StagedRows): Promise<CommitResult> {
  if (staged && stagedMatches(staged, batch)) batch.staged = staged;
  return rt.writer.submit(batch);
}

function stagedMatches(staged: StagedRows, batch: PreparedBatch): boolean {
  const a = staged.payload;
  const b = batch.payload;
  if (batch.format !== staged.format || a.buffer !== b.buffer) return false;
  if (a.byteOffset !== b.byteOffset || a.length !== b.length) return false;
  if (batch.format === 'JSONEachRow') return true;
  const columns = batch.columns ?? [];
  return columns.length === staged.columns.length && columns.every((c, i) => c === staged.columns[i]);
}
