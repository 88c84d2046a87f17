/**
 * Runs async tasks one after another, so a read-modify-write of a store (an update, an append)
 * never interleaves with another and loses it.
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<R>(fn: () => Promise<R>): Promise<R> {
    const next = this.tail.then(fn, fn);
    this.tail = next.catch(() => undefined);
    return next;
  }
}
