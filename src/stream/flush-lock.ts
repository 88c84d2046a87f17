interface Gate {
  readonly promise: Promise<void>;
  readonly open: () => void;
}

function gate(): Gate {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/**
 * Keeps reads of a hybrid stream's front table apart from flushes of its Buffer.
 *
 * A Buffer table read is not atomic with a flush: the read takes the MergeTree's parts first and
 * the buffered blocks later, so rows that move in between are seen in neither (measured: a
 * streaming count over acknowledged ranges came back short several times in ten seconds while
 * the Buffer flushed itself). Tributary therefore flushes the Buffers itself (BufferFlusher) and
 * every read of a stream runs inside `read`, every flush inside `exclusive`.
 *
 * Reads share the lock. An exclusive section waits for the reads inside to finish; with
 * `patienceMs` > 0 it is polite at first (new reads keep entering, it takes the first moment none
 * is inside) and after `patienceMs` it holds new reads back until the ones inside are done.
 * Exclusive sections run one at a time, in call order.
 */
export class FlushLock {
  private readers = 0;
  /** Set while new reads must wait (an exclusive section runs, or is next and out of patience). */
  private closed: Gate | undefined;
  /** Called when the last read inside leaves. */
  private onDrained: (() => void) | undefined;
  private tail: Promise<unknown> = Promise.resolve();
  /** Impatient exclusive sections waiting for their turn: reads stay held back until they ran. */
  private impatient = 0;

  /** Reads inside now. */
  get activeReaders(): number {
    return this.readers;
  }

  /** New reads wait (an exclusive section runs, or is next and out of patience). */
  get holdingReadsBack(): boolean {
    return this.closed !== undefined;
  }

  async read<T>(fn: () => Promise<T>): Promise<T> {
    while (this.closed) await this.closed.promise;
    this.readers++;
    try {
      return await fn();
    } finally {
      this.readers--;
      if (this.readers === 0 && this.onDrained) {
        const drained = this.onDrained;
        this.onDrained = undefined;
        drained();
      }
    }
  }

  /** Run `fn` while no read is inside. */
  exclusive<T>(fn: () => Promise<T>, patienceMs = 0): Promise<T> {
    const impatient = patienceMs <= 0;
    if (impatient) {
      this.impatient++;
      this.closed ??= gate();
    }
    const run = this.tail.then(() => {
      if (impatient) this.impatient--;
      return this.runExclusive(fn, patienceMs);
    });
    this.tail = run.catch(() => undefined);
    return run;
  }

  private async runExclusive<T>(fn: () => Promise<T>, patienceMs: number): Promise<T> {
    if (this.readers > 0) {
      await new Promise<void>((resolve) => {
        let timer: NodeJS.Timeout | undefined;
        // Runs synchronously as the last read leaves, so no new read slips in before the gate closes.
        this.onDrained = () => {
          if (timer) clearTimeout(timer);
          this.closed ??= gate();
          resolve();
        };
        if (patienceMs > 0) {
          timer = setTimeout(() => {
            this.closed ??= gate();
          }, patienceMs);
        } else {
          this.closed ??= gate();
        }
      });
    }
    this.closed ??= gate();
    try {
      return await fn();
    } finally {
      const g = this.closed;
      this.closed = this.impatient > 0 ? gate() : undefined;
      g.open();
    }
  }
}
