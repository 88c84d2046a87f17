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
import type { StagedRows } from './stage-area.ts';
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
  /** The shard its rows go to (streams with several shards); absent for one shard. */
  readonly shard?: number;
  /**
   * Every row comes from a materialized view (a producer-tagged write): the insert runs on the
   * engine's `stream` sessions with the views' steps, so it never delays other streams' commits.
   */
  readonly derived?: boolean;
  /** The one request of this insert has its rows staged already: the insert moves them. */
  readonly staged?: StagedRows;
}

/** What a writer has done: how many requests and rows each WAL append and engine insert carried. */
export interface WriterCounters {
  requests: number;
  rows: number;
  appends: number;
  inserts: number;
}

export interface StreamWriterOptions {
  /** `db.name`, for logs and errors. */
  key: string;
  wal: WriteAheadLog | undefined;
  nextSn: number;
  /**
   * Shards of a stream whose tables record them (`shardedStorage`): each WAL record (one run of
   * a group commit) goes to the next shard in turn, as Proton sends each inserted block to the
   * next shard of a stream without a sharding expression. Absent: one shard, never recorded.
   */
  shards?: number;
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
  /** A request retried alone after its group failed: never merged with others. */
  readonly solo: boolean;
}

/** One engine insert: consecutive runs of durable groups with the same shape and commit time. */
interface Merged {
  readonly unit: InsertUnit;
  /** The runs it carries, as [group index, run index] into `Applied.groups`. */
  readonly refs: Array<readonly [number, number]>;
}

/** The outcome of inserting durable groups: `failed` is the index of the insert the engine refused. */
interface Applied {
  readonly groups: Durable[];
  readonly inserts: Merged[];
  readonly failed?: number;
  readonly error?: unknown;
}

const NEWLINE = Buffer.from('\n');

/**
 * The one writer of a stream. Requests queue up while the writer is busy; it then commits all of
 * them together (group commit): sequence numbers assigned in order, one WAL append of one record
 * per payload shape (one O_DSYNC write), one engine insert per shape (groups made durable while
 * the engine was busy are inserted together, see pump), then every request is acknowledged and its
 * committed range published. If an insert fails, its WAL records are rolled back and its requests
 * retried one at a time, so only a request the engine refuses fails, and nothing of it is written;
 * sequence numbers stay contiguous.
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
  /** The newest commit time given to a group (times never go back). */
  private lastAssignedTime = 0;
  /** The commit time shared by the groups made durable while the engine is busy (see pump). */
  private sharedTime: number | undefined;
  private readonly count: WriterCounters = { requests: 0, rows: 0, appends: 0, inserts: 0 };
  /** Requests queued or in the pipeline and not yet answered (resolved or rejected). */
  private unsettled = 0;
  /** Wakes the commit loop when a request arrives while it waits for the engine alone. */
  private wake: (() => void) | undefined;

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

  /** Where the writer stands, for diagnostics. */
  get state(): {
    queued: number;
    unsettled: number;
    running: boolean;
    waitingForRequests: boolean;
    failure?: string;
  } {
    return {
      queued: this.queue.length,
      unsettled: this.unsettled,
      running: this.running !== undefined,
      waitingForRequests: this.wake !== undefined,
      ...(this.failure ? { failure: this.failure.message } : {}),
    };
  }

  /**
   * Nothing queued, appending or inserting: every request submitted has been answered (the commit
   * loop may still be winding down, with nothing left for the engine). Not `running === undefined`:
   * a caller that submits its next request as soon as the last one is answered would find the loop
   * still returning, depending on how many promise hops its own code takes.
   */
  get idle(): boolean {
    return this.queue.length === 0 && this.unsettled === 0;
  }

  /** Requests and rows acknowledged, WAL appends and engine inserts made, since the writer started. */
  get counters(): WriterCounters {
    return { ...this.count };
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
      this.unsettled++;
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
    if (this.running) {
      // The loop may be waiting for the engine only: let it append the new request meanwhile.
      const wake = this.wake;
      this.wake = undefined;
      wake?.();
      return;
    }
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
   * The commit loop, a pipeline of two stages that run at the same time: the WAL stage makes the
   * queued requests durable, one group per append, and keeps going while the engine inserts; the
   * engine stage inserts every group that became durable meanwhile, in order, consecutive groups
   * of one shape as one insert (groups made durable while the engine is busy share a commit time,
   * so their rows can reach it in one insert carrying one `log_comment`). The engine never sees a
   * row before it is durable; a group is inserted only after the ones before it succeeded.
   */
  private async pump(): Promise<void> {
    let walStage: Promise<Durable> | undefined;
    /** The group being appended shares the commit time of the ready ones (it can join their insert). */
    let walStageJoins = false;
    let engineStage: Promise<Applied> | undefined;
    const ready: Durable[] = [];
    while (!this.failure) {
      // A free engine waits for an append that can join its insert (one short durable write)
      // rather than paying an insert's fixed cost for it separately right after.
      if (!engineStage && ready.length > 0 && !(walStage && walStageJoins)) {
        this.sharedTime = undefined;
        engineStage = this.apply(this.takeReady(ready));
      }
      if (!walStage && this.queue.length > 0) {
        walStageJoins = engineStage !== undefined;
        walStage = this.stageGroup(walStageJoins);
      }
      if (!walStage && !engineStage) break;
      type Event = { durable: Durable } | { applied: Applied } | { arrived: true };
      const next = await Promise.race<Event>([
        ...(walStage
          ? [walStage.then((durable) => ({ durable }))]
          : [new Promise<{ arrived: true }>((resolve) => (this.wake = () => resolve({ arrived: true })))]),
        ...(engineStage ? [engineStage.then((applied) => ({ applied }))] : []),
      ]);
      this.wake = undefined;
      if ('arrived' in next) continue;
      if ('durable' in next) {
        walStage = undefined;
        // A failed append has rejected its requests already.
        if (next.durable.mark !== null) ready.push(next.durable);
        continue;
      }
      engineStage = undefined;
      if (next.applied.failed !== undefined) {
        // Everything from the refused insert on is rolled back (newest first) and queued again:
        // the groups made durable behind it too, and the one being appended once it lands.
        const appended = walStage ? await walStage : undefined;
        walStage = undefined;
        const behind = [...ready.splice(0), ...(appended && appended.mark !== null ? [appended] : [])];
        await this.recoverFromFailedInsert(next.applied, behind);
      }
    }
  }

  /** Take the queued requests as one group, assign its sequence numbers, and append it to the WAL. */
  private stageGroup(engineBusy: boolean): Promise<Durable> {
    const group = this.takeGroup();
    // Groups made durable while the engine is busy share one commit time, so they can be merged
    // into one insert when it is free (the time only ever moves forward).
    let time = this.sharedTime;
    if (time === undefined || !engineBusy) {
      time = Math.max(Date.now(), this.lastAssignedTime);
      this.sharedTime = engineBusy ? time : undefined;
    }
    this.lastAssignedTime = time;
    const runs = this.buildRuns(group, this.reservedSn, time);
    const last = runs.at(-1);
    if (last) this.reservedSn = last.unit.first + last.unit.count;
    return this.makeDurable(group, runs, time);
  }

  /** Stage 1: make a group's records durable in the WAL. */
  private async makeDurable(group: Pending[], runs: Run[], time: number): Promise<Durable> {
    const solo = group[0]?.solo === true;
    if (!this.o.wal) return { runs, mark: undefined, solo };
    try {
      const mark = await this.o.wal.append(
        runs.map((r) => ({ header: r.header, payload: r.unit.payload })),
        time,
      );
      this.count.appends++;
      return { runs, mark, solo };
    } catch (e) {
      const failure = err(
        'INGEST_STREAM_FAILED',
        { stream: this.o.key, detail: e instanceof Error ? e.message : String(e) },
        e,
      );
      this.o.logger?.error({ err: e, stream: this.o.key }, 'WAL append failed');
      for (const p of group) this.settle(p, failure);
      this.reservedSn = runs[0]?.unit.first ?? this.reservedSn;
      return { runs: [], mark: null, solo };
    }
  }

  /** The durable groups the engine takes next: all that are ready, up to one group's limits. */
  private takeReady(ready: Durable[]): Durable[] {
    const maxRows = this.o.maxGroupRows ?? 500_000;
    const maxBytes = this.o.maxGroupBytes ?? 64 * 1024 * 1024;
    const taken: Durable[] = [ready.shift() as Durable];
    let rows = rowsOf(taken[0] as Durable);
    let bytes = bytesOf(taken[0] as Durable);
    while (ready.length > 0) {
      const d = ready[0] as Durable;
      if (rows + rowsOf(d) > maxRows || bytes + bytesOf(d) > maxBytes) break;
      taken.push(ready.shift() as Durable);
      rows += rowsOf(d);
      bytes += bytesOf(d);
    }
    return taken;
  }

  /** Stage 2: insert the groups' runs into the engine in order, acknowledging each. */
  private async apply(groups: Durable[]): Promise<Applied> {
    const inserts = mergeRuns(groups);
    for (let i = 0; i < inserts.length; i++) {
      const m = inserts[i] as Merged;
      try {
        await this.o.insert(m.unit);
      } catch (e) {
        return { groups, inserts, failed: i, error: e };
      }
      this.count.inserts++;
      for (const [g, r] of m.refs) this.acknowledge((groups[g] as Durable).runs[r] as Run);
    }
    return { groups, inserts };
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

  /**
   * Same-shaped batches form one run (one WAL record, one insert); runs keep first-come order. A
   * request with staged rows is a run of its own (its insert moves them).
   */
  private buildRuns(group: Pending[], firstSn: number, time: number): Run[] {
    const byShape = new Map<string | StagedRows, Pending[]>();
    for (const p of group) {
      const shape = p.batch.staged ?? p.batch.shape;
      const list = byShape.get(shape);
      if (list) list.push(p);
      else byShape.set(shape, [p]);
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
      const shard = this.nextShard();
      const unit: InsertUnit = {
        format: b0.format,
        ...(b0.columns ? { columns: b0.columns } : {}),
        payload,
        first: sn,
        count,
        time,
        ...(shard !== undefined ? { shard } : {}),
        ...(items.every((p) => p.batch.producer) ? { derived: true } : {}),
        ...(b0.staged ? { staged: b0.staged } : {}),
      };
      const header: WalRecordHeader = {
        first: sn,
        count,
        time,
        format: b0.format,
        ...(b0.columns ? { columns: b0.columns } : {}),
        ...(shard !== undefined ? { shard } : {}),
        ...(ids.length > 0 ? { ids } : {}),
        ...(tags.length > 0 ? { producers: maxMarks(tags) } : {}),
      };
      runs.push({ items, unit, header });
      sn += count;
    }
    return runs;
  }

  /** Refuse a queued or in-flight request. */
  private settle(p: Pending, failure: unknown): void {
    this.unsettled--;
    p.reject(failure);
  }

  /** Shard of the next run, round robin from 0 (Proton's per-stream counter); undefined for one shard. */
  private nextShard(): number | undefined {
    const shards = this.o.shards;
    if (shards === undefined || shards < 2) return undefined;
    const shard = this.shardTurn % shards;
    this.shardTurn = (this.shardTurn + 1) % shards;
    return shard;
  }

  private shardTurn = 0;

  private acknowledge(run: Run): void {
    const { first, count, time } = run.unit;
    this.committedSnValue = first + count - 1;
    this.lastCommitTime = time;
    let sn = first;
    for (const p of run.items) {
      const r = { fromSn: sn, count: p.batch.rows };
      this.count.requests++;
      this.count.rows += p.batch.rows;
      if (p.batch.idempotencyId) this.o.idempotency.add(p.batch.idempotencyId, r);
      if (p.batch.producer) this.o.marks.note(p.batch.producer.id, p.batch.producer.tag);
      this.unsettled--;
      p.resolve(r);
      sn += p.batch.rows;
    }
    this.o.onCommitted({ fromSn: first, toSn: first + count - 1 });
  }

  /**
   * Roll back the WAL records from the refused insert on (and `behind`, the durable groups not yet
   * inserted) and queue their requests again: those of the refused insert one by one (a request
   * alone that was refused is re-encoded once, else it fails), the others as they were.
   */
  private async recoverFromFailedInsert(a: Applied, behind: Durable[]): Promise<void> {
    const failed = a.inserts[a.failed as number] as Merged;
    const [g0, r0] = failed.refs[0] as readonly [number, number];
    const runsOf = (m: Merged) => m.refs.map(([g, r]) => (a.groups[g] as Durable).runs[r] as Run);
    const failedItems = runsOf(failed).flatMap((run) => run.items);
    const laterItems = [
      ...a.inserts.slice((a.failed as number) + 1).flatMap((m) => runsOf(m).flatMap((run) => run.items)),
      ...behind.flatMap((d) => d.runs.flatMap((run) => run.items)),
    ];
    this.sharedTime = undefined;
    if (this.o.wal) {
      try {
        // Newest first: the groups behind, the refused insert's later groups, then its first one's tail.
        for (const d of [...behind].reverse()) if (d.mark) await this.o.wal.rollback(d.mark, 0);
        for (let g = a.groups.length - 1; g > g0; g--) {
          const mark = (a.groups[g] as Durable).mark;
          if (mark) await this.o.wal.rollback(mark, 0);
        }
        const mark = (a.groups[g0] as Durable).mark;
        if (mark) await this.o.wal.rollback(mark, r0);
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
        for (const p of [...failedItems, ...laterItems, ...this.queue.splice(0)])
          this.settle(p, this.failure);
        return;
      }
    }
    this.reservedSn = failed.unit.first;
    const retry: Pending[] = [];
    if (failedItems.length > 1) {
      for (const p of failedItems) retry.push({ ...p, solo: true });
    } else {
      const p = failedItems[0] as Pending;
      if (p.batch.reencode) {
        // The engine refused the request's own bytes (e.g. `1.0` for an integer column): send the
        // values as JavaScript parsed and checked them.
        const payload = p.batch.reencode();
        retry.push({ ...p, batch: { ...p.batch, payload, reencode: undefined }, solo: true });
      } else {
        this.settle(p, engineError(a.error));
      }
    }
    retry.push(...laterItems);
    this.queue.unshift(...retry);
  }
}

function rowsOf(d: Durable): number {
  let n = 0;
  for (const r of d.runs) n += r.unit.count;
  return n;
}

function bytesOf(d: Durable): number {
  let n = 0;
  for (const r of d.runs) n += r.unit.payload.length;
  return n;
}

function sameShape(a: InsertUnit, b: InsertUnit): boolean {
  if (a.format !== b.format || a.time !== b.time || !!a.derived !== !!b.derived) return false;
  // One insert carries one `log_comment`, hence one shard.
  if (a.shard !== b.shard) return false;
  if (a.staged || b.staged) return false;
  const ca = a.columns ?? [];
  const cb = b.columns ?? [];
  return ca.length === cb.length && ca.every((c, i) => c === cb[i]);
}

/**
 * The engine inserts of durable groups, in order: a run joins the insert before it when both have
 * the same shape and commit time and neither comes from a request retried alone. The sequence
 * numbers are contiguous, so one `log_comment` (first sequence number, time) numbers them all.
 */
function mergeRuns(groups: Durable[]): Merged[] {
  const out: Array<{ units: InsertUnit[]; refs: Array<readonly [number, number]>; solo: boolean }> = [];
  groups.forEach((d, g) => {
    d.runs.forEach((run, r) => {
      const last = out.at(-1);
      const head = last?.units[0];
      if (last && head && !last.solo && !d.solo && sameShape(head, run.unit)) {
        last.units.push(run.unit);
        last.refs.push([g, r]);
      } else {
        out.push({ units: [run.unit], refs: [[g, r]], solo: d.solo });
      }
    });
  });
  return out.map(({ units, refs }) => {
    const head = units[0] as InsertUnit;
    if (units.length === 1) return { unit: head, refs };
    const parts: Buffer[] = [];
    let count = 0;
    for (const u of units) {
      if (parts.length > 0) parts.push(NEWLINE);
      parts.push(u.payload);
      count += u.count;
    }
    return { unit: { ...head, payload: Buffer.concat(parts), count }, refs };
  });
}
