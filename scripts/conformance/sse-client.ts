// Client side of Tributary's query event channel (`POST /v1beta2/queries` answering
// text/event-stream): the first `event: query` carries the Query object with `result.header`; data
// events (no `event:` line) carry JSON arrays of rows, parsed losslessly (64-bit integers keep every
// digit); `event: metrics` is ignored; a final `event: query` tells how the query ended (finished,
// canceled, failed with an `error {code, message}`), then the server closes the connection.

import type { ClientRequest, IncomingMessage } from 'node:http';
import { parse } from 'lossless-json';
import type { Column } from './result-compare.ts';
import { type Deferred, deferred } from './timing.ts';

export interface SseEvent {
  event: string;
  data: string;
}

/** Incremental parser of the text/event-stream framing. */
export class SseParser {
  private buffer = '';
  private eventName = '';
  private data: string[] = [];

  /** Feed decoded text; returns the events completed by it. */
  feed(text: string): SseEvent[] {
    this.buffer += text;
    const out: SseEvent[] = [];
    for (;;) {
      const nl = this.buffer.search(/\r\n|\r|\n/);
      if (nl < 0) break;
      const line = this.buffer.slice(0, nl);
      const sepLen = this.buffer.startsWith('\r\n', nl) ? 2 : 1;
      // a lone trailing \r may be the first half of \r\n: wait for more text
      if (this.buffer[nl] === '\r' && sepLen === 1 && nl === this.buffer.length - 1) break;
      this.buffer = this.buffer.slice(nl + sepLen);
      const ev = this.line(line);
      if (ev) out.push(ev);
    }
    return out;
  }

  /** Dispatch what is pending at end of stream (a last event without its blank line). */
  end(): SseEvent[] {
    const out: SseEvent[] = [];
    if (this.buffer.length > 0) {
      const ev = this.line(this.buffer);
      this.buffer = '';
      if (ev) out.push(ev);
    }
    const ev = this.line('');
    if (ev) out.push(ev);
    return out;
  }

  private line(line: string): SseEvent | undefined {
    if (line === '') {
      if (this.data.length === 0) {
        this.eventName = '';
        return undefined;
      }
      const ev = { event: this.eventName || 'message', data: this.data.join('\n') };
      this.eventName = '';
      this.data = [];
      return ev;
    }
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.eventName = value;
    else if (field === 'data') this.data.push(value);
    return undefined;
  }
}

/** How a query's event stream ended. */
export interface QueryEnd {
  /** Final status from the last `query` event, or `closed` when the connection ended without one. */
  status: 'finished' | 'canceled' | 'failed' | 'closed' | 'aborted';
  error?: { code: number | undefined; message: string };
}

/** The cancel error of ClickHouse/Proton (QUERY_WAS_CANCELLED): a normal end for a killed query. */
export const QUERY_WAS_CANCELLED = 394;

/** A running query read from its SSE connection. */
export class QueryStream {
  id: string | undefined;
  columns: Column[] = [];
  readonly rows: unknown[][] = [];
  /** Resolves when the first `query` event arrived (the query is running). */
  readonly started: Deferred<boolean> = deferred<boolean>();
  /** Resolves when the connection ended. */
  readonly ended: Deferred<QueryEnd> = deferred<QueryEnd>();
  private finalStatus: QueryEnd | undefined;
  private readonly parser = new SseParser();

  constructor(
    private readonly req: ClientRequest,
    res: IncomingMessage,
  ) {
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      for (const ev of this.parser.feed(chunk)) this.onEvent(ev);
    });
    res.on('end', () => this.finish());
    res.on('close', () => this.finish());
    res.on('error', (e) => this.finish({ status: 'closed', error: { code: undefined, message: e.message } }));
  }

  get isEnded(): boolean {
    return this.ended.settled;
  }

  /** Close the connection (the server cancels a query whose client went away). */
  close(): void {
    if (this.isEnded) return;
    this.finish({ status: 'aborted' });
  }

  private onEvent(ev: SseEvent): void {
    if (ev.event === 'query') {
      let q: Record<string, unknown>;
      try {
        q = JSON.parse(ev.data) as Record<string, unknown>;
      } catch {
        return;
      }
      if (!this.started.settled) {
        this.id = typeof q.id === 'string' ? q.id : undefined;
        const header = (q.result as { header?: unknown } | undefined)?.header;
        this.columns = Array.isArray(header)
          ? header.map((h) => ({ name: String(h?.name ?? ''), type: String(h?.type ?? 'string') }))
          : [];
        this.started.resolve(true);
      }
      const status = q.status;
      if (status === 'finished' || status === 'canceled' || status === 'failed') {
        this.finalStatus = this.endOf(q);
      }
    } else if (ev.event === 'message') {
      let batch: unknown;
      try {
        batch = parse(ev.data);
      } catch {
        return;
      }
      if (Array.isArray(batch)) for (const row of batch) this.rows.push(Array.isArray(row) ? row : [row]);
    }
  }

  private endOf(q: Record<string, unknown>): QueryEnd {
    if (q.status !== 'failed') return { status: q.status as 'finished' | 'canceled' };
    const err = (q.error ?? {}) as { code?: unknown; message?: unknown };
    const code = typeof err.code === 'number' ? err.code : codeFromMessage(String(q.message ?? ''));
    if (code === QUERY_WAS_CANCELLED) return { status: 'canceled' };
    return { status: 'failed', error: { code, message: String(err.message ?? q.message ?? '') } };
  }

  private finish(end?: QueryEnd): void {
    if (this.isEnded) return;
    for (const ev of this.parser.end()) this.onEvent(ev);
    if (!this.started.settled) this.started.resolve(false);
    this.ended.resolve(this.finalStatus ?? end ?? { status: 'closed' });
    this.req.destroy();
  }
}

/** `Code: 60. DB::Exception: ...` in a message, when no code field came with it. */
export function codeFromMessage(message: string): number | undefined {
  const m = /\bCode:\s*(\d+)/.exec(message);
  return m ? Number(m[1]) : undefined;
}
