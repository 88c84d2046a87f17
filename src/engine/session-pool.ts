import type { EngineLane } from './engine.ts';

/** A session handed out exclusively until released. */
export interface Lease<S> {
  readonly session: S;
  readonly lane: EngineLane;
}

interface Slot<S> {
  session: S;
  busy: boolean;
}

interface Waiter<S> {
  resolve: (lease: Lease<S>) => void;
  reject: (e: unknown) => void;
}

/**
 * A fixed set of engine sessions per lane. One engine session runs one statement at a time, so a
 * lease is exclusive; callers wait in FIFO order when every session of their lane is busy.
 */
export class SessionPool<S> {
  private readonly slots = new Map<EngineLane, Slot<S>[]>();
  private readonly waiters = new Map<EngineLane, Waiter<S>[]>();
  private closed = false;

  constructor(sessionsByLane: Readonly<Record<EngineLane, S[]>>) {
    for (const lane of Object.keys(sessionsByLane) as EngineLane[]) {
      this.slots.set(
        lane,
        sessionsByLane[lane].map((session) => ({ session, busy: false })),
      );
      this.waiters.set(lane, []);
    }
  }

  acquire(lane: EngineLane, onClosed: () => unknown): Promise<Lease<S>> {
    if (this.closed) return Promise.reject(onClosed());
    const free = this.slots.get(lane)?.find((s) => !s.busy);
    if (free) {
      free.busy = true;
      return Promise.resolve({ session: free.session, lane });
    }
    return new Promise((resolve, reject) => this.waiters.get(lane)?.push({ resolve, reject }));
  }

  release(lease: Lease<S>): void {
    const slot = this.slots.get(lease.lane)?.find((s) => s.session === lease.session);
    if (!slot) return;
    const next = this.waiters.get(lease.lane)?.shift();
    if (next && !this.closed) next.resolve({ session: slot.session, lane: lease.lane });
    else slot.busy = false;
  }

  /** Busy sessions and queued callers, over all lanes. */
  load(): { running: number; waiting: number } {
    let running = 0;
    let waiting = 0;
    for (const slots of this.slots.values()) running += slots.filter((s) => s.busy).length;
    for (const w of this.waiters.values()) waiting += w.length;
    return { running, waiting };
  }

  /** Per lane: sessions, busy ones and queued callers (diagnostics). */
  lanes(): Record<string, { sessions: number; busy: number; waiting: number }> {
    const out: Record<string, { sessions: number; busy: number; waiting: number }> = {};
    for (const [lane, slots] of this.slots) {
      out[lane] = {
        sessions: slots.length,
        busy: slots.filter((s) => s.busy).length,
        waiting: this.waiters.get(lane)?.length ?? 0,
      };
    }
    return out;
  }

  all(): S[] {
    return [...this.slots.values()].flat().map((s) => s.session);
  }

  /** Refuse new leases and fail every waiter with the given error. */
  close(reason: () => unknown): void {
    this.closed = true;
    for (const list of this.waiters.values()) {
      for (const w of list.splice(0)) w.reject(reason());
    }
  }
}
