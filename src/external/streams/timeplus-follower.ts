import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../log/logger.ts';
import type { Follower } from './external-stream-kind.ts';
import { quoteRemote, remoteName, remoteQuery, type TimeplusRemote } from './timeplus-remote.ts';

export interface TimeplusFollowerOptions {
  readonly describe: string;
  readonly remote: TimeplusRemote;
  /** The columns read (the external stream's), `_tp_time` besides. */
  readonly columns: readonly string[];
  readonly stateFile?: string;
  commit(rows: Record<string, unknown>[], idempotencyId: string): Promise<void>;
  readonly logger?: Logger;
}

/** Waits before reconnecting after a failure: doubles from 500 ms to 30 s. */
const RETRY = { baseMs: 500, maxMs: 30_000 };

/** What the state file keeps: the remote `_tp_sn` of the last row committed (`rows`: an older file's count). */
interface FollowerState {
  sn?: number;
  rows?: number;
}

/**
 * Follows a stream of another server: a streaming query over its SSE channel, each batch committed
 * into the local stream with the batch's remote sequence numbers as idempotency id. The remote
 * `_tp_sn` of the last row committed is kept; after a restart or a broken connection the query
 * starts again after it (`WHERE _tp_sn > n`, a rewind predicate both Proton and Tributary seek
 * with), and from the earliest row only the first time. (A state file of an older version holds
 * a count of rows instead: that once reads from the earliest row and skips as many.)
 */
export class TimeplusFollower implements Follower {
  private lastSn: number | undefined;
  /** Rows to skip from the earliest (an older state file's count), until a sequence number is known. */
  private skip = 0;
  private readonly stopper = new AbortController();
  private loop: Promise<void> | undefined;

  constructor(private readonly o: TimeplusFollowerOptions) {}

  async start(): Promise<void> {
    if (this.o.stateFile) {
      try {
        const state = JSON.parse(await readFile(this.o.stateFile, 'utf8')) as FollowerState;
        if (typeof state.sn === 'number') this.lastSn = state.sn;
        else if (typeof state.rows === 'number') this.skip = state.rows;
      } catch {
        this.lastSn = undefined;
      }
    }
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopper.abort();
    await this.loop;
  }

  async destroy(): Promise<void> {
    await this.stop();
    if (this.o.stateFile) await rm(this.o.stateFile, { force: true });
  }

  /** The remote query: after the last sequence number committed, else from the earliest row. */
  query(): string {
    const cols = [...this.o.columns.map(quoteRemote), '_tp_time', '_tp_sn'].join(', ');
    const from = `SELECT ${cols} FROM ${remoteName(this.o.remote)}`;
    return this.lastSn !== undefined
      ? `${from} WHERE _tp_sn > ${this.lastSn}`
      : `${from} SETTINGS seek_to='earliest'`;
  }

  private async run(): Promise<void> {
    const signal = this.stopper.signal;
    let failures = 0;
    let lastError = '';
    while (!signal.aborted) {
      let seen = 0;
      try {
        await remoteQuery(this.o.remote, this.query(), signal, async ({ columns, rows }) => {
          const snAt = columns.indexOf('_tp_sn');
          if (snAt < 0) throw new Error('the remote answered no _tp_sn column');
          const from = seen;
          seen += rows.length;
          let fresh = rows;
          if (this.lastSn === undefined && this.skip > 0) fresh = rows.slice(Math.max(0, this.skip - from));
          else if (this.lastSn !== undefined) {
            const last = this.lastSn;
            fresh = rows.filter((row) => Number(row[snAt]) > last);
          }
          if (!fresh.length) return true;
          const first = Number((fresh[0] as unknown[])[snAt]);
          const end = Number((fresh[fresh.length - 1] as unknown[])[snAt]);
          const objects = fresh.map((row) =>
            Object.fromEntries(columns.flatMap((c, i) => (i === snAt ? [] : [[c, row[i]]]))),
          );
          await this.o.commit(objects, `timeplus:sn:${first}:${end}`);
          this.lastSn = end;
          this.skip = 0;
          await this.save();
          failures = 0;
          return true;
        });
      } catch (e) {
        const message = e instanceof Error ? e.message : String(e);
        if (message !== lastError)
          this.o.logger?.warn(
            { stream: this.o.describe, err: message },
            'timeplus external stream read failed',
          );
        lastError = message;
      }
      if (signal.aborted) break;
      failures++;
      const wait = Math.min(RETRY.maxMs, RETRY.baseMs * 2 ** Math.min(failures - 1, 16));
      await sleep(wait, undefined, { signal }).catch(() => undefined);
    }
  }

  private async save(): Promise<void> {
    if (!this.o.stateFile || this.lastSn === undefined) return;
    const tmp = `${this.o.stateFile}.tmp`;
    await mkdir(dirname(this.o.stateFile), { recursive: true });
    await writeFile(tmp, JSON.stringify({ sn: this.lastSn } satisfies FollowerState));
    await rename(tmp, this.o.stateFile);
  }
}
