import type { ResultSink } from './result-sink.ts';
import type { StreamingProgram } from './streaming-program.ts';
import { VOLATILE } from './volatile-functions.ts';

/** A running execution as `SharedRuns` sees it. */
export interface JoinableRun {
  /**
   * Whether a query starting after `startAfter` (per source) gets exactly the rows this run hands
   * out from now on: the run is between events, its cursors stand at `startAfter`, and nothing it
   * keeps from earlier rows (aggregation state, emitted count) changes what it emits next.
   */
  joinableAt(startAfter: readonly number[]): boolean;
}

/**
 * Identical streaming queries run once (issue 12): a query whose program equals that of a running
 * one (`identicalRunKey`) and that starts where that run stands (`JoinableRun.joinableAt`) becomes
 * one more member of it. The run hands each batch of rows to every member's sink; a member that
 * leaves (its signal aborts, or its sink fails) only leaves, and the run stops once no member is
 * left. The rows each member gets are the ones it would have computed alone: same SQL, same start,
 * same rows.
 *
 * A slow member paces the run (the hand-over waits for every member's sink), as one slow client
 * paces its own query.
 */
export class SharedRuns {
  private readonly entries = new Map<string, Set<Entry>>();
  /** Queries that joined a run already going (metrics, tests). */
  joined = 0;

  /** Runs going now (tests). */
  get running(): number {
    let n = 0;
    for (const set of this.entries.values()) n += set.size;
    return n;
  }

  /**
   * Run `candidate` for `sink` until `signal` aborts, or join a running identical run instead.
   * `execute` runs the candidate for a sink standing for every member; `serving` is told which run
   * serves this query (the candidate itself, or the run it joined).
   */
  run<R extends JoinableRun>(
    key: string,
    startAfter: readonly number[],
    candidate: R,
    sink: ResultSink,
    signal: AbortSignal,
    execute: (sink: ResultSink, signal: AbortSignal) => Promise<void>,
    serving: (run: R) => void,
  ): Promise<void> {
    let set = this.entries.get(key);
    for (const entry of set ?? []) {
      if (!entry.ended && entry.run.joinableAt(startAfter)) {
        this.joined++;
        serving(entry.run as R);
        return this.member(entry, sink, signal);
      }
    }
    if (!set) {
      set = new Set();
      this.entries.set(key, set);
    }
    let ended!: () => void;
    const entry: Entry = {
      run: candidate,
      members: new Set(),
      abort: new AbortController(),
      ended: false,
      finished: new Promise<void>((resolve) => {
        ended = resolve;
      }),
    };
    set.add(entry);
    serving(candidate);
    const joined = this.member(entry, sink, signal);
    const fan: ResultSink = {
      rows: async (rows) => {
        await Promise.all(
          [...entry.members].map(async (m) => {
            try {
              await m.sink.rows(rows);
            } catch (e) {
              this.leave(entry, m, e);
            }
          }),
        );
      },
    };
    execute(fan, entry.abort.signal)
      .then(
        () => this.end(key, entry),
        (e: unknown) => this.end(key, entry, e),
      )
      .finally(ended);
    return joined;
  }

  private member(entry: Entry, sink: ResultSink, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const m: Member = { sink, resolve, reject, signal, onAbort: () => this.leave(entry, m) };
      if (signal.aborted) {
        if (entry.members.size > 0) resolve();
        else {
          entry.abort.abort();
          void entry.finished.then(resolve);
        }
        return;
      }
      entry.members.add(m);
      signal.addEventListener('abort', m.onAbort, { once: true });
    });
  }

  /** A member leaves: canceled (no error) or its sink failed (`error`). */
  private leave(entry: Entry, m: Member, error?: unknown): void {
    if (!entry.members.delete(m)) return;
    m.signal.removeEventListener('abort', m.onAbort);
    const settle = () => (error === undefined ? m.resolve() : m.reject(error));
    if (entry.members.size > 0) {
      settle();
      return;
    }
    // The last member ends once the run has stopped and dropped what it kept (as a query alone does).
    entry.abort.abort();
    void entry.finished.then(settle);
  }

  /** The run ended (LIMIT reached, stopped, or failed): every member ends with it. */
  private end(key: string, entry: Entry, error?: unknown): void {
    entry.ended = true;
    const set = this.entries.get(key);
    set?.delete(entry);
    if (set?.size === 0) this.entries.delete(key);
    for (const m of [...entry.members]) {
      entry.members.delete(m);
      m.signal.removeEventListener('abort', m.onAbort);
      if (error === undefined || m.signal.aborted) m.resolve();
      else m.reject(error);
    }
  }
}

interface Entry {
  run: JoinableRun;
  members: Set<Member>;
  /** Stops the run once no member is left. */
  abort: AbortController;
  ended: boolean;
  /** Settles once the run has stopped and cleaned up. */
  finished: Promise<void>;
}

interface Member {
  sink: ResultSink;
  resolve: () => void;
  reject: (e: unknown) => void;
  signal: AbortSignal;
  onAbort: () => void;
}

/**
 * The identity of a program whose runs may be shared, or undefined: queries over streams only (no
 * nested queries, joins, `table()` snapshots, dedup() key tables, session windows or lag() carries,
 * whose state or engine tables are the execution's own) and no function whose value depends on
 * when or where it runs. Equal keys mean equal SQL at every step over the same sources.
 */
export function identicalRunKey(p: StreamingProgram, alsoReads: readonly string[]): string | undefined {
  if (p.children.length > 0 || p.join || p.session || p.lags || p.tailVariants) return undefined;
  if ((p.dedups?.length ?? 0) > 0 || (p.snapshots?.length ?? 0) > 0) return undefined;
  if (p.sources.some((s) => s.kind !== 'stream')) return undefined;
  const { startAfter: _start, sources, ...rest } = p;
  let steps: string;
  try {
    steps = JSON.stringify(rest);
  } catch {
    return undefined; // a value JSON cannot print: no identity, no sharing
  }
  // The step SQL only: a stream's definition may hold `now64()` defaults, which no step runs.
  if (VOLATILE.test(steps)) return undefined;
  return JSON.stringify({ sources, alsoReads, steps });
}
