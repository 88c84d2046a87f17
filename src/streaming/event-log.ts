import type { Durability, ExecutionCheckpoint, JournalEntry } from './durability.ts';
import type { ResultSink } from './result-sink.ts';

/** A journal entry before it gets its sequence number. */
export type EventBody =
  | {
      readonly kind: 'step';
      readonly ranges: ReadonlyArray<readonly [number, number]>;
      readonly backfill?: boolean;
      readonly cuts?: readonly number[];
      /** A step with no new rows that releases a join's waiting left rows (join-inputs.ts quiesce). */
      readonly quiesce?: boolean;
    }
  | { readonly kind: 'periodic' | 'timeout' | 'backfill-end' };

/**
 * The durable side of one run of an execution (durability.ts): numbers its events, journals each
 * before it runs, tags the event's hand-overs `{seq, part}`, and says when a checkpoint is due.
 */
export class EventLog {
  /** The last event journaled (or replayed); 0 before the first. */
  seq = 0;
  private running: { seq: number; part: number } | undefined;
  /** Events ran since the last checkpoint. */
  private dirty = false;
  private savedAt = Date.now();

  constructor(readonly durability: Durability) {}

  /** The sink the execution writes to: each hand-over tagged with the event that makes it. */
  tagging(sink: ResultSink): ResultSink {
    return {
      rows: (rows) => {
        const r = this.running;
        if (!r) return sink.rows(rows);
        return sink.rows(rows, { seq: r.seq, part: r.part++ });
      },
    };
  }

  /** Journal a live event and make it the running one. */
  async begin(body: EventBody): Promise<JournalEntry> {
    const entry = { ...body, seq: this.seq + 1 } as JournalEntry;
    await this.durability.store.append(entry);
    this.seq = entry.seq;
    this.running = { seq: entry.seq, part: 0 };
    this.dirty = true;
    return entry;
  }

  /** Make a journaled event the running one again (replay after a restart). */
  replay(entry: JournalEntry): void {
    if (entry.seq !== this.seq + 1)
      throw new Error(`the journal skips from event ${this.seq} to ${entry.seq}: it cannot be replayed`);
    this.seq = entry.seq;
    this.running = { seq: entry.seq, part: 0 };
    this.dirty = true;
  }

  end(): void {
    this.running = undefined;
  }

  /** Events ran since the last checkpoint and the interval has passed. */
  get due(): boolean {
    return this.dirty && Date.now() >= this.dueAt;
  }

  /** When the next checkpoint is due if events run (epoch ms). */
  get dueAt(): number {
    return this.dirty ? this.savedAt + this.durability.checkpointIntervalMs : Number.POSITIVE_INFINITY;
  }

  get hasUnsaved(): boolean {
    return this.dirty;
  }

  async save(checkpoint: Omit<ExecutionCheckpoint, 'seq' | 'savedAt'>): Promise<void> {
    const full: ExecutionCheckpoint = { ...checkpoint, seq: this.seq, savedAt: Date.now() };
    await this.durability.store.save(full);
    this.dirty = false;
    this.savedAt = full.savedAt;
    this.durability.onCheckpoint?.({
      seq: full.seq,
      processedSn: full.processedSn,
      processedTime: full.processedTime,
      savedAt: full.savedAt,
    });
  }
}
