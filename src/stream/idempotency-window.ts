/** Where an earlier request with the same idempotency id landed. */
export interface PriorCommit {
  readonly fromSn: number;
  readonly count: number;
}

/**
 * The idempotency ids (`x-timeplus-idempotent-id`) a stream has committed, newest last, bounded in
 * number. Ids live in the WAL records too, so the window is rebuilt at start from the segments
 * still retained: a retry is recognised for as long as its record is in the WAL (and among the
 * last `capacity` ids).
 */
export class IdempotencyWindow {
  private readonly ids = new Map<string, PriorCommit>();

  constructor(private readonly capacity = 100_000) {}

  get(id: string): PriorCommit | undefined {
    return this.ids.get(id);
  }

  add(id: string, commit: PriorCommit): void {
    this.ids.delete(id);
    this.ids.set(id, commit);
    if (this.ids.size > this.capacity) {
      const oldest = this.ids.keys().next();
      if (!oldest.done) this.ids.delete(oldest.value);
    }
  }

  /** Forget ids whose rows lie before `sn` (their WAL segments were deleted). */
  dropBefore(sn: number): void {
    for (const [id, c] of this.ids) {
      if (c.fromSn + c.count <= sn) this.ids.delete(id);
    }
  }

  get size(): number {
    return this.ids.size;
  }
}
