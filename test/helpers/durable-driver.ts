/**
 * Drives a durable streaming execution (src/streaming/durability.ts) through crashes: the sources'
 * committed positions are released one boundary at a time (a gate over the stream store), so every
 * run takes the same steps; a crash is a throw from the sink (in the middle of an event's
 * hand-overs) or from the store right after an append (the event journaled, none of its outputs
 * made); after a crash a new execution, planned afresh, resumes from the same store. The consumer
 * keeps the hand-overs whose tag is after the last one it took, as a materialized view's target does.
 */
import type { Services } from '../../src/api/services.ts';
import { FileCheckpointStore } from '../../src/streaming/checkpoint/file-checkpoint-store.ts';
import type { CheckpointStore, ExecutionCheckpoint, JournalEntry } from '../../src/streaming/durability.ts';
import { type OutputTag, tagAfter } from '../../src/streaming/result-sink.ts';
import type { CommittedRanges } from '../../src/streaming/source-cursor.ts';
import { storeRanges } from '../../src/streaming/store-ranges.ts';
import { StreamingExecution } from '../../src/streaming/streaming-execution.ts';
import { ADMIN_USER } from './services-sql.ts';

export class Crash extends Error {
  constructor(where: string) {
    super(`simulated crash ${where}`);
  }
}

/** The committed positions of the real store, released to the execution only as the test says. */
export class Gate implements CommittedRanges {
  private released = -1;
  private readonly listeners = new Set<(sn: number) => void>();

  constructor(private readonly real: CommittedRanges) {}

  committedSn(): number {
    return this.released;
  }

  subscribe(_key: string, listener: (toSn: number) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  read<T>(keys: readonly string[], work: () => Promise<T>): Promise<T> {
    return this.real.read(keys, work);
  }

  resolveReads(sql: string): string {
    return this.real.resolveReads(sql);
  }

  release(sn: number): void {
    this.released = sn;
    for (const l of this.listeners) l(sn);
  }
}

/** The store under test, recording every journaled entry and failing an append on demand. */
export class RecordingStore implements CheckpointStore {
  readonly entries = new Map<number, JournalEntry>();
  appends = 0;
  saves = 0;
  failAppendAt = new Set<number>();

  constructor(readonly inner: FileCheckpointStore) {}

  load(): Promise<ExecutionCheckpoint | undefined> {
    return this.inner.load();
  }

  async save(c: ExecutionCheckpoint): Promise<void> {
    await this.inner.save(c);
    this.saves++;
  }

  async append(entry: JournalEntry): Promise<void> {
    await this.inner.append(entry);
    this.entries.set(entry.seq, entry);
    this.appends++;
    if (this.failAppendAt.has(this.appends)) throw new Crash(`after append #${this.appends}`);
  }

  journal(): Promise<JournalEntry[]> {
    return this.inner.journal();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

export interface Handover {
  tag: OutputTag;
  /** The hand-over's rows, sorted (row order within one emit is the engine's). */
  rows: string[];
}

export interface DriveOptions {
  sql: string;
  /** The committed `_tp_sn` positions to release, one step each. */
  boundaries: readonly number[];
  /** Wait for a periodic emit after each step (EMIT PERIODIC queries). */
  periodic: boolean;
  checkpointIntervalMs: number;
  /** Crash when the n-th hand-over (counted over every run, replays included) arrives. */
  crashAtHandover?: readonly number[];
  /** Crash right after the n-th append (counted over every run). */
  crashAfterAppend?: readonly number[];
  owner: string;
  /**
   * Committed before the query starts: with `seek_to='earliest'` its first step is a backfill
   * (watermarks muted), and the driver waits for the backfill's end before releasing `boundaries`.
   */
  initial?: number;
}

export interface DriveResult {
  taken: Handover[];
  restarts: number;
  store: RecordingStore;
}

/** Plan `sql` afresh (new dedup tables, as after a restart) and bind it to the gate. */
export async function planOn(s: Services, sql: string, gate: Gate): Promise<StreamingExecution> {
  const planned = await s.planner.plan(sql, { user: ADMIN_USER, type: 'streaming' });
  if (!(planned instanceof StreamingExecution)) throw new Error(`not a streaming query: ${sql}`);
  return new StreamingExecution(
    s.engine,
    gate,
    planned.program,
    planned.analysis,
    planned.program.sources.map((src) => src.key),
  );
}

export async function drive(s: Services, o: DriveOptions): Promise<DriveResult> {
  const gate = new Gate(storeRanges(s.streams));
  if (o.initial !== undefined) gate.release(o.initial);
  const store = new RecordingStore(new FileCheckpointStore(s.engine, s.config.dataDir, o.owner));
  for (const n of o.crashAfterAppend ?? []) store.failAppendAt.add(n);
  const crashHandovers = new Set(o.crashAtHandover ?? []);
  const taken: Handover[] = [];
  let last: OutputTag | undefined;
  let handovers = 0;
  let restarts = 0;
  let next = 0;
  const deadline = Date.now() + 120_000;
  for (;;) {
    const execution = await planOn(s, o.sql, gate);
    const controller = new AbortController();
    const sink = {
      rows: (rows: readonly string[], tag?: OutputTag) => {
        handovers++;
        if (crashHandovers.has(handovers)) throw new Crash(`at hand-over #${handovers}`);
        if (!tag) throw new Error('a durable execution handed over rows without a tag');
        if (tagAfter(tag, last)) {
          taken.push({ tag, rows: [...rows].sort() });
          last = tag;
        }
      },
    };
    let settled: { error?: unknown } | undefined;
    const running = execution
      .run(sink, controller.signal, { store, checkpointIntervalMs: o.checkpointIntervalMs })
      .then(
        () => {
          settled = {};
        },
        (e: unknown) => {
          settled = { error: e };
        },
      );
    const stepTo = (sn: number) =>
      [...store.entries.values()].find((e) => e.kind === 'step' && e.ranges.some(([, hi]) => hi >= sn));
    const reached = (sn: number) => {
      const step = stepTo(sn);
      if (!step) return false;
      if (!o.periodic) return true;
      return [...store.entries.values()].some((e) => e.kind === 'periodic' && e.seq > step.seq);
    };
    // The start position (and whether the query backfills) is taken before checkpoint 0.
    while (store.saves === 0 && settled === undefined) await new Promise((r) => setTimeout(r, 5));
    if (o.initial !== undefined)
      while (![...store.entries.values()].some((e) => e.kind === 'backfill-end') && settled === undefined)
        await new Promise((r) => setTimeout(r, 5));
    while (next < o.boundaries.length && settled === undefined) {
      const b = o.boundaries[next]!;
      gate.release(b);
      while (!reached(b) && settled === undefined) {
        if (Date.now() > deadline) throw new Error(`stuck at boundary ${b}`);
        await new Promise((r) => setTimeout(r, 5));
      }
      if (settled !== undefined) break;
      next++;
    }
    if (settled === undefined) {
      // Every boundary taken: stop (the event running ends first, then a clean checkpoint).
      controller.abort();
    }
    await running;
    const end = settled as { error?: unknown } | undefined;
    if (end?.error instanceof Crash) restarts++;
    else if (end?.error) throw end.error;
    else return { taken, restarts, store };
  }
}
