import { engineError } from '../engine/engine-error.ts';
import { err, type TributaryError } from '../errors/tributary-error.ts';
import type { Logger } from '../log/logger.ts';
import type { CommittedRange } from './committed-range-notifier.ts';
import type { IdempotencyWindow } from './idempotency-window.ts';
import type { PayloadFormat, PreparedBatch } from './ingest-batch.ts';
import {
  type MarkEntry,
  maxMarks,
  type ProducerMarks,
  type ProducerPosition,
  positionAfter,
} from './producer-marks.ts';
import type { WalRecordHeader } from './wal-record.ts';
import type { AppendMark, WriteAheadLog } from './write-ahead-log.ts';

/** Where a request's rows landed. `count` 0: nothing was written (empty, or an idempotent retry). */
export interface CommitResult {
  readonly fromSn: number;
  readonly count: number;
  /** True when an earlier request with the same idempotency id already wrote these rows. */
  readonly duplicate?: boolean;
}

/** One engine insert: the concatenated payloads of same-shaped batches. */
export interface InsertUnit {
  readonly format: PayloadFormat;
  readonly columns?: readonly string[];
  readonly payload: Buffer;
  readonly first: number;
  readonly count: number;
  readonly time: number;
  /**
   * Every row comes from a materialized view (a producer-tagged write): the insert runs on the
   * engine's `stream` sessions with the views' steps, so it never delays other streams' commits.
   */
  readonly derived?: boolean;
}

export interface StreamWriterOptions {
  /** `db.name`, for logs and errors. */
  key: string;
  wal: WriteAheadLog | undefined;
  nextSn: number;
  insert: (unit: InsertUnit) => Promise<void>;
  onCommitted: (range: CommittedRange) => void;
  idempotency: IdempotencyWindow;
  /** The last tag per producer (producer-marks.ts), raised as tagged writes are acknowledged. */
  marks: ProducerMarks;
  logger?: Logger;
  /** Largest group commit, in rows and payload bytes. */
  maxGroupRows?: number;
  maxGroupBytes?: number;
}

interface Pending {
  batch: PreparedBatch;
  resolve: (r: CommitResult) => void;
  reject: (e: unknown) => void;
  /** Commit alone (after its group failed), so a bad request cannot fail others. */
  solo: boolean;
}

interface Run {
  readonly items: Pending[];
  readonly unit: InsertUnit;
  readonly header: WalRecordHeader;
}

/** A group whose records are in the WAL (mark undefined: no WAL; null: the append failed). */
interface Durable {
  readonly runs: Run[];
  readonly mark: AppendMark | undefined | null;
}

/** The outcome of inserting a durable group: `failed` is the index of the run the engine refused. */
interface Applied extends Durable {
  readonly failed?: number;
  readonly error?: unknown;
}

const NEWLINE = Buffer.from('\n');

/**
 * The one writer of a stream. Requests queue up while an insert runs; the writer then commits all
 * of them together (group commit): sequence numbers assigned in order, one WAL append of one record
 * per payload shape, one durable (O_DSYNC) write, one engine insert per shape, then every request is acknowledged
 * and the committed range published. If an insert fails, its WAL records are rolled back and its
 * requests retried one at a time, so only a request the engine refuses fails, and nothing of it
 * is written; sequence numbers stay contiguous.
 */
export class StreamWriter {
  private readonly queue: Pending[] = [];
  private readonly inFlight = new Map<string, Promise<CommitResult>>();
  /** Per producer: its newest queued (not yet acknowledged) tag and the write's outcome. */
  private readonly producerInFlight = new Map<
    string,
    { tag: ProducerPosition; done: Promise<CommitResult> }
  >();
  private running: Promise<void> | undefined;
  private failure: TributaryError | undefined;
  /** Why writes are refused from now on (set by close). */
  private closing: string | undefined;
  /** The first sequence number of the next group (groups in the pipeline are counted). */
  private reservedSn: number;
  private committedSnValue: number;
  private lastCommitTime = 0;

  constructor(private readonly o: StreamWriterOptions) {
    this.reservedSn = o.nextSn;
    this.committedSnValue = o.nextSn - 1;
  }

  /** The last committed sequence number (-1 before the first row). */
  get committedSn(): number {
    return this.committedSnValue;
  }

  get lastCommitAt(): number {
    return this.lastCommitTime;
  }

  get queuedRequests(): number {
    return this.queue.length;
  }

  submit(batch: PreparedBatch): Promise<CommitResult> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.closing)
      return Promise.reject(err('INGEST_STREAM_FAILED', { stream: this.o.key, detail: this.closing }));
    const id = batch.idempotencyId;
    if (id) {
      const prior = this.o.idempotency.get(id);
      if (prior) return Promise.resolve({ fromSn: prior.fromSn, count: prior.count, duplicate: true });
      const running = this.inFlight.get(id);
      if (running) {
        // Same id still being written: answer its outcome, or try again if it failed.
        return running.then(
          (r) => ({ ...r, duplicate: true }),
          () => this.submit(batch),
        );
      }
    }
    const producer = batch.producer;
    if (producer) {
      // A tag not after the producer's last acknowledged one was written before: acknowledge it
      // without writing. One not after a queued one waits for that write (and is dropped if it lands).
      if (!positionAfter(producer.tag, this.o.marks.get(producer.id)))
        return Promise.resolve({ fromSn: this.committedSnValue + 1, count: 0, duplicate: true });
      const queued = this.producerInFlight.get(producer.id);
      if (queued && !positionAfter(producer.tag, queued.tag))
        return queued.done.then(
          () => this.submit(batch),
          () => this.submit(batch),
        );
    }
    if (batch.rows === 0) return Promise.resolve({ fromSn: this.committedSnValue + 1, count: 0 });
    const p = new Promise<CommitResult>((resolve, reject) => {
      this.queue.push({ batch, resolve, reject, solo: false });
    });
    if (producer) {
      const entry = { tag: producer.tag, done: p };
      this.producerInFlight.set(producer.id, entry);
      const forget = () => {
        if (this.producerInFlight.get(producer.id) === entry) this.producerInFlight.delete(producer.id);
      };
      p.then(forget, forget);
    }
    if (id) {
      this.inFlight.set(id, p);
      const forget = () => this.inFlight.delete(id);
      p.then(forget, forget);
    }
    this.kick();
    return p;
  }

  /** Finish what is queued, then refuse further writes (with `reason`). */
  async close(reason = 'the server is shutting down'): Promise<void> {
    this.closing = reason;
    await this.running;
  }

  private kick(): void {
    if (this.running) return;
    this.running = (async () => {
      try {
        await this.pump();
      } finally {
        this.running = undefined;
      }
      if (this.queue.length > 0 && !this.failure) this.kick();
    })();
  }

  /**
   * The commit loop, a two-stage pipeline: while the engine inserts group N, group N+1 is appended to
   * the WAL and synced (the engine never sees rows before they are durable, and a datasync waiting
   * on the disk does not leave the engine idle). Group N+1 is inserted only after group N succeeded.
   */
  private async pump(): Promise<void> {
    let applying: Promise<Applied> | undefined;
    while (!this.failure) {
      let current: Durable | undefined;
      if (this.queue.length > 0) {
        const group = this.takeGroup();
        const time = Math.max(Date.now(), this.lastCommitTime);
        const runs = this.buildRuns(group, this.reservedSn, time);
        this.reservedSn = runs.at(-1)
          ? (runs.at(-1) as Run).unit.first + (runs.at(-1) as Run).unit.count
          : this.reservedSn;
        current = await this.makeDurable(group, runs, time);
      }
      if (applying) {
        const prev = await applying;
        applying = undefined;
        if (prev.failed !== undefined) {
          // Group N failed: its failing run and everything after it, group N+1 included, is rolled
          // back and queued again (sequence numbers are reassigned).
          await this.recoverFromFailedRun(prev, current?.mark === null ? undefined : current);
          continue;
        }
      }
      if (!current) break;
      if (current.mark === null) continue; // its WAL append failed; its requests were rejected
      applying = this.apply(current);
    }
  }

  /** Stage 1: assign the group's records and make them durable in the WAL. */
  private async makeDurable(group: Pending[], runs: Run[], time: number): Promise<Durable> {
    if (!this.o.wal) return { runs, mark: undefined };
    try {
      const mark = await this.o.wal.append(
        runs.map((r) => ({ header: r.header, payload: r.unit.payload })),
        time,
      );
      return { runs, mark };
    } catch (e) {
      const failure = err(
        'INGEST_STREAM_FAILED',
        { stream: this.o.key, detail: e instanceof Error ? e.message : String(e) },
        e,
      );
      this.o.logger?.error({ err: e, stream: this.o.key }, 'WAL append failed');
      for (const p of group) p.reject(failure);
      this.reservedSn = runs[0]?.unit.first ?? this.reservedSn;
      return { runs: [], mark: null };
    }
  }

  /** Stage 2: insert the runs into the engine in order, acknowledging each. */
  private async apply(d: Durable): Promise<Applied> {
    for (let i = 0; i < d.runs.length; i++) {
      const run = d.runs[i] as Run;
      try {
        await this.o.insert(run.unit);
      } catch (e) {
        return { ...d, failed: i, error: e };
      }
      this.acknowledge(run);
    }
    return { ...d };
  }

  private takeGroup(): Pending[] {
    const first = this.queue[0] as Pending;
    if (first.solo) return [this.queue.shift() as Pending];
    const maxRows = this.o.maxGroupRows ?? 500_000;
    const maxBytes = this.o.maxGroupBytes ?? 64 * 1024 * 1024;
    const group: Pending[] = [];
    let rows = 0;
    let bytes = 0;
    while (this.queue.length > 0) {
      const next = this.queue[0] as Pending;
      if (next.solo) break;
      if (
        group.length > 0 &&
        (rows + next.batch.rows > maxRows || bytes + next.batch.payload.length > maxBytes)
      )
        break;
      group.push(this.queue.shift() as Pending);
      rows += next.batch.rows;
      bytes += next.batch.payload.length;
    }
    return group;
  }

  /** Same-shaped batches form one run (one WAL record, one insert); runs keep first-come order. */
  private buildRuns(group: Pending[], firstSn: number, time: number): Run[] {
    const byShape = new Map<string, Pending[]>();
    for (const p of group) {
      const list = byShape.get(p.batch.shape);
      if (list) list.push(p);
      else byShape.set(p.batch.shape, [p]);
    }
    const runs: Run[] = [];
    let sn = firstSn;
    for (const items of byShape.values()) {
      const b0 = items[0]?.batch as PreparedBatch;
      const parts: Buffer[] = [];
      const ids: Array<[string, number, number]> = [];
      const tags: MarkEntry[] = [];
      let count = 0;
      for (const p of items) {
        if (parts.length > 0) parts.push(NEWLINE);
        parts.push(p.batch.payload);
        if (p.batch.idempotencyId) ids.push([p.batch.idempotencyId, sn + count, p.batch.rows]);
        const pr = p.batch.producer;
        if (pr) tags.push([pr.id, pr.tag.seq, pr.tag.part]);
        count += p.batch.rows;
      }
      const payload = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts);
      const unit: InsertUnit = {
        format: b0.format,
        ...(b0.columns ? { columns: b0.columns } : {}),
        payload,
        first: sn,
        count,
        time,
        ...(items.every((p) => p.batch.producer) ? { derived: true } : {}),
      };
      const header: WalRecordHeader = {
        first: sn,
        count,
        time,
        format: b0.format,
        ...(b0.columns ? { columns: b0.columns } : {}),
        ...(ids.length > 0 ? { ids } : {}),
        ...(tags.length > 0 ? { producers: maxMarks(tags) } : {}),
      };
      runs.push({ items, unit, header });
      sn += count;
    }
    return runs;
  }

  private acknowledge(run: Run): void {
    const { first, count, time } = run.unit;
    this.committedSnValue = first + count - 1;
    this.lastCommitTime = time;
    let sn = first;
    for (const p of run.items) {
      const r = { fromSn: sn, count: p.batch.rows };
      if (p.batch.idempotencyId) this.o.idempotency.add(p.batch.idempotencyId, r);
      if (p.batch.producer) this.o.marks.note(p.batch.producer.id, p.batch.producer.tag);
      p.resolve(r);
      sn += p.batch.rows;
    }
    this.o.onCommitted({ fromSn: first, toSn: first + count - 1 });
  }

  /** Roll back a failed group's tail and queue its requests again (the guilty one alone). */
  private async recoverFromFailedRun(a: Applied, next: Durable | undefined): Promise<void> {
    const failed = a.failed as number;
    const run = a.runs[failed] as Run;
    const after = next ? next.runs.flatMap((r) => r.items) : [];
    if (this.o.wal && a.mark) {
      try {
        // Newest first: the next group's records (maybe in a newer segment), then the failed tail.
        if (next?.mark) await this.o.wal.rollback(next.mark, 0);
        await this.o.wal.rollback(a.mark, failed);
      } catch (re) {
        // The WAL now holds records the engine does not: refuse writes until a restart replays them.
        this.failure = err(
          'INGEST_STREAM_FAILED',
          { stream: this.o.key, detail: `WAL rollback failed: ${String(re)}` },
          re,
        );
        this.o.logger?.error(
          { err: re, stream: this.o.key },
          'WAL rollback failed; the stream refuses writes',
        );
        for (const p of [...a.runs.slice(failed).flatMap((r) => r.items), ...after, ...this.queue.splice(0)])
          p.reject(this.failure);
        return;
      }
    }
    this.reservedSn = run.unit.first;
    const retry: Pending[] = [];
    if (run.items.length > 1) {
      for (const p of run.items) retry.push({ ...p, solo: true });
    } else {
      const p = run.items[0] as Pending;
      if (p.batch.reencode) {
        // The engine refused the request's own bytes (e.g. `1.0` for an integer column): send the
        // values as JavaScript parsed and checked them.
        const payload = p.batch.reencode();
        retry.push({ ...p, batch: { ...p.batch, payload, reencode: undefined }, solo: true });
      } else {
        p.reject(engineError(a.error));
      }
    }
    for (const r of a.runs.slice(failed + 1)) retry.push(...r.items);
    retry.push(...after);
    this.queue.unshift(...retry);
  }
}
