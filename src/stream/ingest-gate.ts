/**
 * Lets a stream's DDL wait for the ingests in flight and hold new ones back (ALTER and RENAME
 * STREAM change the tables and the schema the writer validates against). An ingest holds the gate
 * from before its validation until its commit is acknowledged, so when `close` answers, no request
 * is being validated or is queued in the writer, and requests arriving later wait for `open`.
 */
export class IngestGate {
  private inside = 0;
  private closed: { promise: Promise<void>; open: () => void } | undefined;
  private drained: (() => void) | undefined;

  /** Requests inside, for tests and logs. */
  get active(): number {
    return this.inside;
  }

  /** New requests are held back (DDL runs or waits for the ones inside). */
  get isClosed(): boolean {
    return this.closed !== undefined;
  }

  /** Enter now if the gate is open (then call `leave` exactly once afterwards); false if it is closed. */
  tryEnter(): boolean {
    if (this.closed) return false;
    this.inside++;
    return true;
  }

  /** Enter (waits while the gate is closed); call `leave` exactly once afterwards. */
  async enter(): Promise<void> {
    while (this.closed) await this.closed.promise;
    this.inside++;
  }

  leave(): void {
    this.inside--;
    if (this.inside === 0) this.drained?.();
  }

  /** `leave`, then answer `value`: a promise's fulfilment handler, made once per gate. */
  readonly leaveWith = <T>(value: T): T => {
    this.leave();
    return value;
  };

  /** `leave`, then throw `reason` again: a promise's rejection handler, made once per gate. */
  readonly leaveThrowing = (reason: unknown): never => {
    this.leave();
    throw reason;
  };

  /** Hold new requests back and wait until the ones inside have left. */
  async close(): Promise<void> {
    while (this.closed) await this.closed.promise;
    let open!: () => void;
    const promise = new Promise<void>((resolve) => {
      open = resolve;
    });
    this.closed = { promise, open };
    if (this.inside > 0) {
      await new Promise<void>((resolve) => {
        this.drained = resolve;
      });
      this.drained = undefined;
    }
  }

  /** Let requests in again. */
  open(): void {
    const c = this.closed;
    this.closed = undefined;
    c?.open();
  }
}
