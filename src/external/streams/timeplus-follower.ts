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

/**
 * Follows a stream of another server: a streaming query over its SSE channel from the earliest
 * row, each batch committed into the local stream with the batch's row positions as idempotency
 * id. How many rows were committed is kept; after a restart or a broken connection the query runs
 * again from the earliest row and skips that many (so rows the remote's retention dropped shift
 * the count: see docs).
 */
export class TimeplusFollower implements Follower {
  private committed = 0;
  private readonly stopper = new AbortController();
  private loop: Promise<void> | undefined;

  constructor(private readonly o: TimeplusFollowerOptions) {}

  async start(): Promise<void> {
    if (this.o.stateFile) {
      try {
        this.committed = (JSON.parse(await readFile(this.o.stateFile, 'utf8')) as { rows: number }).rows;
      } catch {
        this.committed = 0;
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

  private async run(): Promise<void> {
    const signal = this.stopper.signal;
    const cols = [...this.o.columns.map(quoteRemote), '_tp_time'].join(', ');
    const sql = `SELECT ${cols} FROM ${remoteName(this.o.remote)} SETTINGS seek_to='earliest'`;
    let failures = 0;
    let lastError = '';
    while (!signal.aborted) {
      let seen = 0;
      try {
        await remoteQuery(this.o.remote, sql, signal, async ({ columns, rows }) => {
          const from = seen;
          seen += rows.length;
          const fresh = rows.slice(Math.max(0, this.committed - from));
          if (!fresh.length) return true;
          const start = seen - fresh.length;
          const objects = fresh.map((row) => Object.fromEntries(columns.map((c, i) => [c, row[i]])));
          await this.o.commit(objects, `timeplus:${start}:${seen}`);
          this.committed = seen;
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
    if (!this.o.stateFile) return;
    const tmp = `${this.o.stateFile}.tmp`;
    await mkdir(dirname(this.o.stateFile), { recursive: true });
    await writeFile(tmp, JSON.stringify({ rows: this.committed }));
    await rename(tmp, this.o.stateFile);
  }
}
