import type { Engine } from '../engine/engine.ts';
import { quoteString } from '../engine/settings-clause.ts';
import type { Logger } from '../log/logger.ts';
import { BufferFlusher } from './buffer-flusher.ts';
import type { CommittedRange } from './committed-range-notifier.ts';
import { IdempotencyWindow } from './idempotency-window.ts';
import { ProducerMarks, type ProducerPosition } from './producer-marks.ts';
import type { StageArea } from './stage-area.ts';
import { type StreamDefinition, streamKey } from './stream-definition.ts';
import { StreamSchema } from './stream-schema.ts';
import {
  type BufferPolicy,
  ingestComment,
  insertSettings,
  moveFrontStatements,
  undoMoveStatement,
  writeTable,
} from './stream-tables.ts';
import { type CommitResult, type InsertUnit, StreamWriter } from './stream-writer.ts';
import type { DoubtKind } from './value-checks.ts';
import { inlineInsertSql, maxSn, recoverFromWal, replayTarget } from './wal-recovery.ts';
import { applyRetention } from './wal-retention.ts';
import type { SegmentSummary } from './wal-segment.ts';
import { type WalOptions, WriteAheadLog } from './write-ahead-log.ts';

export interface RuntimeOptions {
  engine: Engine;
  wal: WalOptions;
  /** When the Buffer of a hybrid stream is flushed. */
  buffer: BufferPolicy;
  logger?: Logger;
  maxGroupRows?: number;
  maxGroupBytes?: number;
  publish: (key: string, range: CommittedRange) => void;
  hooks: () => { skipEngineInsert?: (db: string, name: string) => boolean };
  /** Where large requests' rows are staged while checked (absent: never staged). */
  stage?: StageArea;
}

/** Names the chDB insert call accepts (it refuses quoting); others go through an INSERT statement. */
const INSERTABLE = /^[A-Za-z0-9_]+$/;

/**
 * One open stream: its schema, WAL (none for `memory` storage), writer, idempotency window and,
 * for hybrid streams, the flusher of its Buffer (whose lock every read of the stream holds).
 */
export class StreamRuntime {
  private def: StreamDefinition;
  private schemaValue: StreamSchema;
  private readonly flusher: BufferFlusher | undefined;
  /** Engine writes into the front and moves out of it, one at a time (a move must see no insert). */
  private writes: Promise<unknown> = Promise.resolve();
  /** Engine writes (inserts and moves) queued or running. */
  private queuedWrites = 0;
  /** The last sequence number inserted into the front (hybrid streams). */
  private lastInsertedSn: number;
  /** Rows before this sequence number are in the MergeTree, the others in the front (hybrid). */
  private frontFrom: number;

  private constructor(
    def: StreamDefinition,
    schema: StreamSchema,
    private readonly wal: WriteAheadLog | undefined,
    readonly writer: StreamWriter,
    private readonly idempotency: IdempotencyWindow,
    private readonly marks: ProducerMarks,
    private readonly o: RuntimeOptions,
  ) {
    this.def = def;
    this.schemaValue = schema;
    // Opened with the front empty: recovery replays into the MergeTree, a rename moved the front.
    this.frontFrom = writer.committedSn + 1;
    this.lastInsertedSn = writer.committedSn;
    if (def.storageType === 'hybrid') {
      this.flusher = new BufferFlusher({
        key: streamKey(def.db, def.name),
        policy: o.buffer,
        flush: () => this.moveFront(),
        ...(o.logger ? { logger: o.logger } : {}),
      });
    }
  }

  /** Where a range read may read the front alone (front-range-reads.ts); hybrid streams only. */
  get frontFromSn(): number | undefined {
    return this.flusher ? this.frontFrom : undefined;
  }

  /** Run `fn` after the engine writes queued before it, and before those queued after. */
  private serialWrite<T>(fn: () => Promise<T>): Promise<T> {
    this.queuedWrites++;
    const run = this.writes.then(fn, fn).finally(() => {
      this.queuedWrites--;
    });
    this.writes = run.catch(() => undefined);
    return run;
  }

  /** Where the stream's write path stands, for diagnostics. */
  diagnostics(): Record<string, unknown> {
    return {
      writer: this.writer.state,
      engineWritesQueued: this.queuedWrites,
      ...(this.flusher
        ? {
            front: {
              fromSn: this.frontFrom,
              lastInsertedSn: this.lastInsertedSn,
              bufferedRows: this.flusher.bufferedRows,
              flushing: this.flusher.flushing,
              readers: this.flusher.lock.activeReaders,
              readsHeldBack: this.flusher.lock.holdingReadsBack,
            },
          }
        : {}),
    };
  }

  /**
   * Move the front's rows into the MergeTree (the flusher calls it with reads held back). A move
   * that fails half-way has its rows taken out of the MergeTree again, so that no row is read twice.
   */
  private moveFront(): Promise<void> {
    return this.serialWrite(async () => {
      const def = this.def;
      const through = this.lastInsertedSn;
      if (through < this.frontFrom) return;
      const [move, empty] = moveFrontStatements(def) as [string, string];
      try {
        await this.o.engine.query(move);
      } catch (e) {
        await this.o.engine.query(undoMoveStatement(def, this.frontFrom - 1));
        throw e;
      }
      await this.o.engine.query(empty);
      this.frontFrom = through + 1;
    });
  }

  /** Run `fn`, a read of the stream's tables, while its front is not being moved. */
  read<T>(fn: () => Promise<T>): Promise<T> {
    return this.flusher ? this.flusher.read(fn) : fn();
  }

  /**
   * Flush the Buffer (hybrid streams) with reads held back, then run `then` before they resume:
   * DDL that rebuilds the front table runs there, so no read sees it missing.
   */
  async exclusive<T>(then: () => Promise<T>): Promise<T> {
    if (!this.flusher) return then();
    return (await this.flusher.flushNow(then)) as T;
  }

  /** Open the WAL, replay what the engine lacks, and start the writer after the last sequence number. */
  /**
   * `resume`: this process just closed the stream's previous runtime cleanly (RENAME STREAM), so
   * the engine already holds what it can of the WAL; recovery is skipped and numbering continues
   * at `resume.nextSn` (a record the engine lacks is replayed at the next start, as always).
   */
  static async open(
    def: StreamDefinition,
    dir: string,
    o: RuntimeOptions,
    resume?: { nextSn: number },
  ): Promise<StreamRuntime> {
    const key = streamKey(def.db, def.name);
    let wal: WriteAheadLog | undefined;
    let nextSn: number;
    if (def.storageType === 'memory') {
      nextSn = resume
        ? resume.nextSn
        : Math.max(def.firstSn ?? 0, (await maxSn(o.engine, replayTarget(def))) + 1);
    } else if (resume) {
      wal = await WriteAheadLog.open(dir, o.wal);
      nextSn = Math.max(wal.nextSn, resume.nextSn);
      await wal.skipTo(nextSn);
    } else {
      wal = await WriteAheadLog.open(dir, o.wal);
      const recovered = await recoverFromWal(o.engine, def, wal, o.logger);
      if (recovered.records > 0) {
        o.logger?.info(
          { stream: key, records: recovered.records, rows: recovered.rows },
          'replayed WAL records into the engine',
        );
      }
      nextSn = Math.max(wal.nextSn, recovered.maxSn + 1);
      await wal.skipTo(nextSn);
    }
    const idempotency = new IdempotencyWindow();
    const marks = new ProducerMarks();
    if (wal) marks.noteAll(await ProducerMarks.loadSidecar(dir));
    for (const s of wal?.summaries() ?? []) {
      for (const [id, fromSn, count] of s.ids) idempotency.add(id, { fromSn, count });
      if (s.producers) marks.noteAll(s.producers);
    }
    const holder: { rt?: StreamRuntime } = {};
    const writer = new StreamWriter({
      key,
      wal,
      nextSn,
      ...(def.shardedStorage ? { shards: def.shards } : {}),
      idempotency,
      marks,
      insert: (unit) => (holder.rt as StreamRuntime).insert(unit),
      onCommitted: (range) => o.publish(key, range),
      ...(o.logger ? { logger: o.logger } : {}),
      ...(o.maxGroupRows ? { maxGroupRows: o.maxGroupRows } : {}),
      ...(o.maxGroupBytes ? { maxGroupBytes: o.maxGroupBytes } : {}),
    });
    holder.rt = new StreamRuntime(def, new StreamSchema(def), wal, writer, idempotency, marks, o);
    return holder.rt;
  }

  get definition(): StreamDefinition {
    return this.def;
  }

  get key(): string {
    return streamKey(this.def.db, this.def.name);
  }

  get walBytes(): number {
    return this.wal?.bytes ?? 0;
  }

  /** What ingest validates against (follows ALTER STREAM). */
  get schema(): StreamSchema {
    return this.schemaValue;
  }

  /** First sequence number still in the WAL (undefined: the stream has no WAL). */
  get walFirstSn(): number | undefined {
    return this.wal?.firstSn;
  }

  /**
   * A new definition of the same stream (PATCH, ALTER STREAM). When the columns change, ingest
   * validates against them from now on: call it only while no ingest is in flight (IngestGate).
   */
  redefine(def: StreamDefinition): void {
    if (def.columns !== this.def.columns) this.schemaValue = new StreamSchema(def);
    this.def = def;
  }

  priorCommit(id: string): CommitResult | undefined {
    const p = this.idempotency.get(id);
    return p ? { fromSn: p.fromSn, count: p.count, duplicate: true } : undefined;
  }

  /**
   * Ask the engine which date/date-time strings it reads (one call for a request's doubtful values).
   * A property, so ingest hands it on as it is instead of a new arrow per request.
   */
  readonly verifyDoubts = async (kind: DoubtKind, values: string[]): Promise<boolean[]> => {
    const fn = kind === 'date' ? 'toDateOrNull(x)' : 'parseDateTime64BestEffortOrNull(x, 9)';
    const list = values.map(quoteString).join(', ');
    const text = (
      await this.o.engine.query(`SELECT arrayMap(x -> isNotNull(${fn}), [${list}])`, {
        format: 'JSONCompactEachRow',
      })
    ).text();
    const row = JSON.parse(text.trim()) as [Array<number | boolean>];
    return row[0].map((v) => v === true || v === 1);
  };

  /** The last tag producer `id` wrote into the stream (undefined: none, or forgotten by a restart of a `memory` stream). */
  lastProducerTag(id: string): ProducerPosition | undefined {
    return this.marks.get(id);
  }

  async applyRetention(now: number): Promise<void> {
    if (!this.wal) return;
    const wal = this.wal;
    // Marks of segments about to be deleted are kept in the sidecar first (written atomically).
    const beforeDrop = async (dropping: SegmentSummary) => {
      if (!dropping.producers?.length && this.marks.size === 0) return;
      const keep = new ProducerMarks();
      keep.noteAll(await ProducerMarks.loadSidecar(wal.dir));
      keep.noteAll(this.marks.entries());
      keep.noteAll(dropping.producers ?? []);
      await ProducerMarks.saveSidecar(wal.dir, keep.entries());
    };
    const first = await applyRetention(this.o.engine, this.def, this.wal, now, beforeDrop);
    this.idempotency.dropBefore(first);
  }

  /** Finish queued writes, flush the Buffer into the MergeTree, close the WAL. */
  async close(): Promise<void> {
    await this.writer.close();
    await this.flusher?.close().catch((e: unknown) => {
      this.o.logger?.warn(
        { err: e, stream: this.key },
        'Buffer flush at shutdown failed; the WAL will be replayed',
      );
    });
    await this.wal?.close();
  }

  /** Stop without flushing (the stream is being dropped). */
  async discard(): Promise<void> {
    this.flusher?.discard();
    await this.writer.close('the stream was dropped');
    await this.wal?.close();
  }

  private insert(unit: InsertUnit): Promise<void> {
    return this.serialWrite(async () => {
      await this.insertNow(unit);
      this.lastInsertedSn = Math.max(this.lastInsertedSn, unit.first + unit.count - 1);
    });
  }

  private async insertNow(unit: InsertUnit): Promise<void> {
    const def = this.def;
    if (this.o.hooks().skipEngineInsert?.(def.db, def.name)) return;
    const staged = unit.staged;
    if (staged && this.o.stage && staged.take()) {
      if (await this.o.stage.move(staged, def, unit.first, unit.time, unit.count, unit.shard)) {
        this.flusher?.inserted(unit.count, unit.payload.length);
        return;
      }
    }
    const comment = ingestComment(unit.first, unit.time, unit.shard);
    const simple =
      def.storageType !== 'hybrid' &&
      INSERTABLE.test(def.db) &&
      INSERTABLE.test(def.name) &&
      (unit.columns ?? []).every((c) => INSERTABLE.test(c));
    if (simple) {
      await this.o.engine.insert(`${def.db}.${def.name}`, unit.payload, {
        format: unit.format,
        ...(unit.columns ? { columns: unit.columns } : {}),
        settings: { log_comment: comment, ...insertSettings(unit.payload.length) },
        lane: unit.derived ? 'stream' : 'system',
      });
      this.flusher?.inserted(unit.count, unit.payload.length);
    } else {
      const header = {
        first: unit.first,
        count: unit.count,
        time: unit.time,
        format: unit.format,
        ...(unit.shard !== undefined ? { shard: unit.shard } : {}),
        ...(unit.columns ? { columns: unit.columns } : {}),
      };
      await this.o.engine.query(inlineInsertSql(writeTable(def), header, unit.payload), {
        lane: unit.derived ? 'stream' : 'system',
      });
      this.flusher?.inserted(unit.count, unit.payload.length);
    }
  }
}
