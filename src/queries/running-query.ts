import { randomUUID } from 'node:crypto';
import { type Actor, auditTimestamp } from '../catalog/audit.ts';
import { type TributaryError, toTributaryError } from '../errors/tributary-error.ts';
import type { PipelineStep, ResultSink } from '../streaming/result-sink.ts';
import type { RowsPlan } from './execution.ts';
import type { QueryInfo, QueryMetrics } from './query-types.ts';

export interface QueryRequest {
  sql: string;
  name?: string;
  description?: string;
  tags?: string[];
}

type RowListener = (rows: readonly string[]) => void | Promise<void>;
type EndListener = (info: QueryInfo) => void;

const EVENT_TIME_NAMES = ['_tp_time', 'event_time'];

/** One query from start to end: its lifecycle, its Query object and its metrics. */
export class RunningQuery {
  readonly id: string;
  private readonly controller = new AbortController();
  private readonly info: QueryInfo;
  private rowCount = 0;
  private readonly startedAt = Date.now();
  private firstRowAt = 0;
  /** When the query last produced result rows (ms since the epoch; 0 before the first). */
  private lastRowAt = 0;
  private readonly recent: Array<{ at: number; n: number }> = [];
  private rowListener: RowListener | undefined;
  private readonly endListeners: EndListener[] = [];
  private finished: Promise<void> | undefined;
  /** The username that started the query: only it (or an admin) may cancel or delete it. */
  readonly owner: string;

  constructor(
    request: QueryRequest,
    readonly plan: RowsPlan,
    actor: Actor,
  ) {
    this.id = plan.queryId ?? randomUUID();
    this.owner = actor.id;
    const header = plan.header;
    const index = (names: string[]) => header.findIndex((c) => names.includes(c.name));
    const at = auditTimestamp(new Date(this.startedAt));
    this.info = {
      id: this.id,
      name: request.name ?? '',
      description: request.description ?? '',
      sql: request.sql,
      tags: request.tags ?? [],
      status: 'running',
      message: '',
      analysis: plan.analysis,
      duration: 0,
      response_time: 0,
      start_time: this.startedAt,
      end_time: 0,
      result: { header },
      sinks: {},
      timeColumns: {
        eventTime: index(EVENT_TIME_NAMES),
        windowStart: index(['window_start']),
        windowEnd: index(['window_end']),
      },
      created_at: at,
      created_by: actor,
      last_updated_at: at,
      last_updated_by: actor,
    };
  }

  get status(): QueryInfo['status'] {
    return this.info.status;
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The Query object as the API shows it, with live duration for a running query. */
  snapshot(): QueryInfo {
    const end = this.info.end_time || Date.now();
    return { ...this.info, duration: end - this.startedAt, tags: [...this.info.tags] };
  }

  metrics(): QueryMetrics {
    const now = Date.now();
    while (this.recent.length > 0 && (this.recent[0]?.at ?? now) < now - 1000) this.recent.shift();
    const progress = this.plan.progress();
    return {
      count: this.rowCount,
      eps: this.recent.reduce((s, r) => s + r.n, 0),
      processing_time: (this.info.end_time || now) - this.startedAt,
      // The time of the last event the query sent (a result row), as Timeplus reports it.
      last_event_time: this.lastRowAt,
      response_time: this.info.response_time,
      scanned_rows: progress.scannedRows,
      scanned_bytes: progress.scannedBytes,
      ...(progress.sources
        ? {
            lag: progress.sources.map((s) => ({
              stream: s.stream,
              committed_sn: s.committedSn,
              processed_sn: s.processedSn,
              lag: Math.max(0, s.committedSn - s.processedSn),
            })),
          }
        : {}),
    };
  }

  pipeline(): PipelineStep[] {
    return this.plan.pipeline();
  }

  /** Receive result rows (one consumer: the client connection). */
  onRows(listener: RowListener): void {
    this.rowListener = listener;
  }

  onEnd(listener: EndListener): void {
    if (this.info.status !== 'running') listener(this.snapshot());
    else this.endListeners.push(listener);
  }

  /** Start producing rows; resolves when the query has ended, whatever the reason. */
  start(): Promise<void> {
    if (this.finished) return this.finished;
    const sink: ResultSink = {
      rows: (rows) => {
        if (rows.length === 0) return;
        const now = Date.now();
        if (!this.firstRowAt) {
          this.firstRowAt = now;
          this.info.response_time = now - this.startedAt;
        }
        this.rowCount += rows.length;
        this.lastRowAt = now;
        this.recent.push({ at: now, n: rows.length });
        return this.rowListener?.(rows);
      },
    };
    this.finished = this.plan.run(sink, this.controller.signal).then(
      () => this.end(this.controller.signal.aborted ? 'canceled' : 'finished'),
      (e: unknown) => {
        if (this.controller.signal.aborted) this.end('canceled');
        else this.end('failed', toTributaryError(e));
      },
    );
    return this.finished;
  }

  /** Resolves once the query has ended (at once for a query that never started). */
  done(): Promise<void> {
    return this.finished ?? Promise.resolve();
  }

  /** Cancel a running query; a no-op otherwise. Answers whether it was running. */
  cancel(): boolean {
    if (this.info.status !== 'running') return false;
    this.controller.abort();
    if (!this.finished) this.end('canceled');
    return true;
  }

  private end(status: 'finished' | 'canceled' | 'failed', error?: TributaryError): void {
    if (this.info.status !== 'running') return;
    this.info.status = status;
    this.info.end_time = Date.now();
    this.info.duration = this.info.end_time - this.startedAt;
    this.info.last_updated_at = auditTimestamp(new Date(this.info.end_time));
    if (error) {
      this.info.message = error.message;
      this.info.error = error.toBody();
    } else if (status === 'canceled') {
      this.info.message = 'canceled';
    }
    const snapshot = this.snapshot();
    for (const l of this.endListeners.splice(0)) l(snapshot);
  }
}
