import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { drainPending, Session } from 'chdb';
import { err, type TributaryError } from '../errors/tributary-error.ts';
import type {
  Engine,
  EngineChunk,
  EngineInfo,
  EngineInsertOptions,
  EngineInsertResult,
  EngineLane,
  EngineQueryOptions,
  EngineResult,
} from './engine.ts';
import { engineError } from './engine-error.ts';
import { type Lease, SessionPool } from './session-pool.ts';
import { quoteString, withSettings } from './settings-clause.ts';

export interface ChdbEngineOptions {
  dataPath: string;
  /** Sessions per lane; defaults: 2 system, 2 stream, 2 user. */
  sessions?: Partial<Record<EngineLane, number>>;
  /**
   * Where user-defined functions live: the engine loads every `<dir>/*_function.xml` (executable
   * functions, src/udf/udf-engine-files.ts) and runs their commands from `dir`;
   * `SYSTEM RELOAD FUNCTIONS` picks up changes.
   */
  udfDir?: string;
}

/**
 * Engine arguments given at connect. The background-scheduler sleeps make DELETE and merges answer
 * in tens of milliseconds instead of seconds (chdb-notes.md §3); denormals are quoted so JSON
 * output carries `"inf"`, `"-inf"`, `"nan"`; the query size allows large inline batches.
 */
const CONNECTION_ARGS = [
  '--max_query_size=268435456',
  '--output_format_json_quote_denormals=1',
  '--background_processing_pool_task_sleep_seconds_when_no_work_min=0.01',
  '--background_processing_pool_task_sleep_seconds_when_no_work_max=0.05',
  '--background_processing_pool_thread_sleep_seconds_if_nothing_to_do=0.01',
  '--background_processing_pool_thread_sleep_seconds_random_part=0',
  '--background_processing_pool_task_sleep_seconds_when_no_work_random_part=0',
];

/**
 * Arguments of the `system` and `stream` lanes' sessions, whose statements answer a few rows each
 * (streaming steps, catalog reads, inserts). The engine formats a result on helper threads by
 * default, which costs more than the formatting itself when the result is small: `SELECT 1` takes
 * 0.73 ms of CPU with it, 0.47 ms without; a 10-row tail step from a stream's front 1.6-1.9 ms
 * against 1.3 ms (bench/README.md, "The engine's fixed cost of a statement"). The `user` lane,
 * which answers historical queries of any size, keeps the default.
 */
const SMALL_RESULT_ARGS = ['--output_format_parallel_formatting=0'];

const CANCELED_CODE = 394;
const TIMEOUT_CODE = 159;

function unavailable(detail = 'the engine is closed'): TributaryError {
  return err('ENGINE_UNAVAILABLE', { detail });
}

/** The chDB engine: a pool of sessions on one data directory, plus one control session. */
export class ChdbEngine implements Engine {
  readonly dataPath: string;
  private readonly pool: SessionPool<Session>;
  private readonly control: Session;
  private open = true;
  private readonly inFlight = new Set<Promise<unknown>>();
  /** The statement each busy session runs (diagnostics, `activity`). */
  private readonly busy = new Map<Session, { lane: EngineLane; statement: string; since: number }>();

  constructor(options: ChdbEngineOptions) {
    this.dataPath = options.dataPath;
    mkdirSync(this.dataPath, { recursive: true });
    const udfArgs = options.udfDir
      ? [
          `--user_defined_executable_functions_config=${join(options.udfDir, '*_function.xml')}`,
          `--user_scripts_path=${options.udfDir}`,
        ]
      : [];
    const connectionArgs = [...CONNECTION_ARGS, ...udfArgs];
    const make = () => new Session(this.dataPath, { connectionArgs });
    const makeSmall = () =>
      new Session(this.dataPath, { connectionArgs: [...connectionArgs, ...SMALL_RESULT_ARGS] });
    const system = Array.from({ length: options.sessions?.system ?? 2 }, makeSmall);
    const stream = Array.from({ length: options.sessions?.stream ?? 2 }, makeSmall);
    const user = Array.from({ length: options.sessions?.user ?? 2 }, make);
    this.pool = new SessionPool<Session>({ system, stream, user });
    this.control = make();
  }

  async query(sql: string, options: EngineQueryOptions = {}): Promise<EngineResult> {
    const lease = await this.acquire(options.lane ?? 'system', sql);
    try {
      return await this.cancellable(options, async (settings) => {
        const r = await lease.session.queryAsync(
          withSettings(sql, this.guarded(settings, options), { merge: !!options.userSql }),
          {
            format: options.format ?? 'JSONCompactEachRow',
          },
        );
        return {
          text: () => r.text(),
          bytes: () => r.bytes(),
          elapsedMs: r.elapsed * 1000,
          rowsRead: r.rowsRead,
          bytesRead: r.bytesRead,
        };
      });
    } finally {
      this.release(lease);
    }
  }

  async *stream(sql: string, options: EngineQueryOptions = {}): AsyncIterable<EngineChunk> {
    const lease: Lease<Session> = await this.acquire(options.lane ?? 'user', sql);
    const tag = `trb:${randomUUID()}`;
    const settings = this.guarded(
      { ...options.settings, log_comment: tag, ...this.timeoutSettings(options) },
      options,
    );
    const abort = () => void this.kill(tag);
    // The engine's max_execution_time usually ends the query first (TIMEOUT_EXCEEDED); when this
    // timer's kill wins instead, the cancellation it causes is still the timeout.
    let timedOut = false;
    const onTimeout = () => {
      timedOut = true;
      abort();
    };
    options.signal?.addEventListener('abort', abort, { once: true });
    const timer = options.timeoutMs ? setTimeout(onTimeout, options.timeoutMs) : undefined;
    try {
      const stream = lease.session.queryStream(withSettings(sql, settings, { merge: !!options.userSql }), {
        format: options.format ?? 'JSONCompactEachRow',
      });
      try {
        for await (const chunk of stream) {
          if (options.signal?.aborted) throw err('QUERY_CANCELED');
          yield { rows: chunk.numRows, text: () => chunk.text() };
        }
      } finally {
        if (!stream.closed) stream.cancel();
      }
    } catch (e) {
      throw this.mapFailure(e, options, timedOut);
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', abort);
      this.release(lease);
    }
  }

  async insert(
    table: string,
    payload: Buffer | string,
    options: EngineInsertOptions,
  ): Promise<EngineInsertResult> {
    const lease = await this.acquire(options.lane ?? 'system', `INSERT INTO ${table}`);
    try {
      const r = await this.track(
        lease.session.insert({
          table,
          values: payload,
          format: options.format,
          ...(options.columns ? { columns: options.columns } : {}),
          ...(options.settings ? { settings: { ...options.settings } } : {}),
        }),
      );
      return { rowsWritten: r.rowsWritten, elapsedMs: r.elapsed * 1000 };
    } catch (e) {
      throw engineError(e);
    } finally {
      this.release(lease);
    }
  }

  async ping(): Promise<EngineInfo> {
    if (!this.open) throw unavailable();
    try {
      const r = await this.track(this.control.queryAsync('SELECT version()', { format: 'TSV' }));
      return { version: r.text().trim() };
    } catch (e) {
      throw unavailable(engineError(e).message);
    }
  }

  load(): { running: number; waiting: number } {
    return this.pool.load();
  }

  /**
   * What the engine is doing now, for diagnostics: per lane its sessions, busy ones and queued
   * callers, and each running statement (its first 160 characters) with how long it has run.
   */
  activity(): {
    lanes: ReturnType<SessionPool<Session>['lanes']>;
    running: { lane: EngineLane; statement: string; ms: number }[];
  } {
    const now = Date.now();
    return {
      lanes: this.pool.lanes(),
      running: [...this.busy.values()].map((b) => ({
        lane: b.lane,
        statement: b.statement,
        ms: now - b.since,
      })),
    };
  }

  private async acquire(lane: EngineLane, statement: string): Promise<Lease<Session>> {
    const lease = await this.pool.acquire(lane, () => unavailable());
    this.busy.set(lease.session, { lane, statement: statement.slice(0, 160), since: Date.now() });
    return lease;
  }

  private release(lease: Lease<Session>): void {
    this.busy.delete(lease.session);
    this.pool.release(lease);
  }

  async close(): Promise<void> {
    if (!this.open) return;
    this.open = false;
    this.pool.close(() => unavailable());
    await Promise.allSettled([...this.inFlight]);
    for (const s of this.pool.all()) s.close();
    this.control.close();
    await drainPending();
  }

  /** Ask the engine to stop the statement tagged `tag`; repeats until it is gone. */
  private async kill(tag: string): Promise<void> {
    if (!this.open) return;
    try {
      await this.control.queryAsync(`KILL QUERY WHERE Settings['log_comment'] = ${quoteString(tag)} ASYNC`, {
        format: 'TSV',
      });
    } catch {
      // The statement may have ended on its own; nothing to kill.
    }
  }

  /**
   * User-derived SQL runs with `readonly = 1` first in its SETTINGS clause (the engine checks a
   * clause's changes against the settings before it, so ours that follow still apply). chDB 3.4
   * offers nothing stronger: it runs as one users.xml user that cannot be restricted, ignores
   * `user_files_path` for absolute paths and has EXECUTE AS disabled (docs/operations.md).
   */
  private guarded(
    settings: EngineQueryOptions['settings'],
    options: EngineQueryOptions,
  ): EngineQueryOptions['settings'] {
    return options.userSql ? { readonly: 1, ...settings } : settings;
  }

  private timeoutSettings(options: EngineQueryOptions): Record<string, number> {
    return options.timeoutMs ? { max_execution_time: Math.max(options.timeoutMs, 1) / 1000 } : {};
  }

  /**
   * Run `run` so that aborting `options.signal` or passing `options.timeoutMs` stops the statement
   * inside the engine (an abandoned chDB call would otherwise keep computing).
   */
  private async cancellable<T>(
    options: EngineQueryOptions,
    run: (settings: EngineQueryOptions['settings']) => Promise<T>,
  ): Promise<T> {
    if (options.signal?.aborted) throw err('QUERY_CANCELED');
    if (!options.signal && !options.timeoutMs) {
      try {
        return await this.track(run(options.settings));
      } catch (e) {
        throw engineError(e);
      }
    }
    const tag = `trb:${randomUUID()}`;
    let done = false;
    let timedOut = false;
    const killLoop = async () => {
      while (!done && this.open) {
        await this.kill(tag);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const onAbort = () => void killLoop();
    const timer = options.timeoutMs
      ? setTimeout(() => {
          timedOut = true;
          void killLoop();
        }, options.timeoutMs + 50)
      : undefined;
    options.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      return await this.track(
        run({ ...options.settings, log_comment: tag, ...this.timeoutSettings(options) }),
      );
    } catch (e) {
      throw this.mapFailure(e, options, timedOut);
    } finally {
      done = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
    }
  }

  private mapFailure(e: unknown, options: EngineQueryOptions, timedOut = false): TributaryError {
    const mapped = engineError(e);
    const udfTimeout = mapped.errorName === 'UDF_TIMEOUT';
    if ((mapped.code === TIMEOUT_CODE && !udfTimeout) || (timedOut && mapped.code === CANCELED_CODE)) {
      return err('QUERY_TIMEOUT', { timeout_ms: options.timeoutMs }, e);
    }
    if (mapped.code === CANCELED_CODE || options.signal?.aborted) return err('QUERY_CANCELED', {}, e);
    return mapped;
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.inFlight.add(p);
    const forget = () => this.inFlight.delete(p);
    p.then(forget, forget);
    return p;
  }
}
