/**
 * Drive streaming queries through the REST API over a real socket: run DDL/INSERT statements,
 * ingest rows, start a streaming query over SSE and collect what it emits.
 *
 * Nothing here asserts on timing: waits take generous timeouts and fail with what arrived so far.
 */
import assert from 'node:assert/strict';
import { ADMIN, authHeader, type Harness, startHarness } from './harness.ts';
import { readSse } from './sse.ts';

export type Row = unknown[];

export interface QueryInfo {
  id: string;
  status: string;
  message?: string;
  result: { header: { name: string; type: string }[] };
  [k: string]: unknown;
}

export interface Metrics {
  count: number;
  scanned_rows: number;
  last_event_time: number;
  [k: string]: unknown;
}

/** A harness listening on a real socket, with the REST helpers the streaming tests use. */
export class StreamingApi {
  private constructor(
    readonly h: Harness,
    readonly base: string,
  ) {}

  static async open(options: Parameters<typeof startHarness>[0] = {}): Promise<StreamingApi> {
    const h = await startHarness(options);
    const base = `${await h.trb.listen()}/default/api`;
    return new StreamingApi(h, base);
  }

  /** The helpers over a harness already running (e.g. after `h.restart()`). */
  static async attach(h: Harness): Promise<StreamingApi> {
    return new StreamingApi(h, `${await h.trb.listen()}/default/api`);
  }

  close(): Promise<void> {
    return this.h.close();
  }

  post(path: string, body: unknown, signal?: AbortSignal): Promise<Response> {
    return fetch(`${this.base}${path}`, {
      method: 'POST',
      headers: { ...authHeader(ADMIN), 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify(body),
      ...(signal ? { signal } : {}),
    });
  }

  async get(path: string): Promise<Response> {
    return fetch(`${this.base}${path}`, { headers: authHeader(ADMIN) });
  }

  private streams = 0;

  /**
   * CREATE STREAM `<prefix>_<n>` (a new name each call) with `columns` (the parenthesised list) and,
   * when given, `event_time_column`; answers the name.
   */
  async createStream(prefix: string, columns: string, eventTimeColumn?: string): Promise<string> {
    const name = `${prefix}_${++this.streams}`;
    const settings = eventTimeColumn ? ` SETTINGS event_time_column='${eventTimeColumn}'` : '';
    await this.exec(`CREATE STREAM ${name} ${columns}${settings}`);
    return name;
  }

  /** Run `sql`, then wait until `q` has `total` rows (or, when it should have no new row, for quiet). */
  async execAndWait(q: StreamingQuery, sql: string, total: number): Promise<void> {
    const before = (await q.waitForRows(0)).length;
    await this.exec(sql);
    if (total > before) await q.waitForRows(total);
    else await q.waitForQuiet(300);
  }

  /** A statement without a result (CREATE STREAM, INSERT, ...) through POST /v1beta2/queries: 204. */
  async exec(sql: string): Promise<void> {
    const r = await this.post('/v1beta2/queries', { sql });
    const text = await r.text();
    assert.equal(r.status, 204, `${sql}\n-> ${r.status} ${text}`);
  }

  /** POST /v1beta2/streams/{name}/ingest with a compact JSON body: 200. */
  async ingest(stream: string, columns: string[], data: Row[]): Promise<void> {
    const r = await fetch(`${this.base}/v1beta2/streams/${stream}/ingest`, {
      method: 'POST',
      headers: { ...authHeader(ADMIN), 'content-type': 'application/json' },
      body: JSON.stringify({ columns, data }),
    });
    const text = await r.text();
    assert.equal(r.status, 200, `ingest into ${stream} -> ${r.status} ${text}`);
  }

  /**
   * A historical query through POST /v1beta2/queries (in-process): its result header (name and
   * type of each column, from the `event: query` block) and every row of its data blocks.
   */
  async historical(sql: string): Promise<{ header: { name: string; type: string }[]; rows: Row[] }> {
    const r = await this.h.call('POST', '/v1beta2/queries', { body: { sql } });
    assert.equal(r.statusCode, 200, `${sql}: ${r.body}`);
    const rows: Row[] = [];
    let header: { name: string; type: string }[] = [];
    for (const block of r.body.split('\n\n')) {
      const lines = block.split('\n');
      const data = lines.find((l) => l.startsWith('data: '));
      if (!data) continue;
      const value = JSON.parse(data.slice(6));
      if (lines.some((l) => l.startsWith('event: '))) {
        if (value?.result?.header) header = value.result.header;
      } else rows.push(...(value as Row[]));
    }
    return { header, rows };
  }

  /** Start a streaming query and wait for its first `event: query`. */
  start(sql: string, options: { batchMs?: number } = {}): Promise<StreamingQuery> {
    return StreamingQuery.start(this, sql, options);
  }

  /** A query that must fail before it starts: the JSON error. */
  async startError(sql: string): Promise<{ status: number; code: number; message: string }> {
    const r = await this.post('/v1beta2/queries', { sql });
    const ct = String(r.headers.get('content-type'));
    if (ct.startsWith('text/event-stream')) {
      await r.body?.cancel();
      assert.fail(`expected an error for ${sql}, got an event stream`);
    }
    const body = (await r.json()) as { code: number; message: string };
    return { status: r.status, ...body };
  }
}

const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms));

/** A running streaming query: rows collected as they arrive. */
export class StreamingQuery {
  readonly rows: Row[] = [];
  /** Every data event, as it arrived (one emit may span several batches only past 1000 rows). */
  readonly batches: Row[][] = [];
  readonly metrics: Metrics[] = [];
  final: QueryInfo | undefined;
  readonly ended: Promise<QueryInfo | undefined>;
  private listeners: Array<() => void> = [];
  private readonly abort: AbortController;

  private constructor(
    private readonly api: StreamingApi,
    readonly sql: string,
    readonly info: QueryInfo,
    events: AsyncGenerator<{ event: string; data: string }>,
    abort: AbortController,
  ) {
    this.abort = abort;
    this.ended = this.consume(events);
  }

  get id(): string {
    return this.info.id;
  }

  get header(): string[] {
    return this.info.result.header.map((c) => c.name);
  }

  static async start(api: StreamingApi, sql: string, options: { batchMs?: number }): Promise<StreamingQuery> {
    const abort = new AbortController();
    const r = await api.post(
      '/v1beta2/queries',
      { sql, batching_policy: { time_ms: options.batchMs ?? 20 } },
      abort.signal,
    );
    const ct = String(r.headers.get('content-type'));
    if (!ct.startsWith('text/event-stream')) {
      assert.fail(`streaming query failed to start: ${r.status} ${await r.text()}\n${sql}`);
    }
    const events = readSse(r.body!);
    const first = await events.next();
    assert.ok(!first.done, 'the event stream ended before its first event');
    assert.equal(first.value.event, 'query');
    const info = JSON.parse(first.value.data) as QueryInfo;
    assert.equal(info.status, 'running', first.value.data);
    return new StreamingQuery(api, sql, info, events, abort);
  }

  private async consume(events: AsyncGenerator<{ event: string; data: string }>) {
    try {
      for await (const e of events) {
        if (e.event === 'message') {
          const batch = JSON.parse(e.data) as Row[];
          this.batches.push(batch);
          this.rows.push(...batch);
        } else if (e.event === 'metrics') {
          this.metrics.push(JSON.parse(e.data) as Metrics);
        } else if (e.event === 'query') {
          this.final = JSON.parse(e.data) as QueryInfo;
        }
        this.notify();
      }
    } catch {
      // aborted by disconnect()
    }
    this.notify();
    return this.final;
  }

  private notify() {
    for (const l of this.listeners.splice(0)) l();
  }

  private changed(timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(resolve, timeoutMs);
      this.listeners.push(() => {
        clearTimeout(t);
        resolve();
      });
    });
  }

  private describe(): string {
    return `query: ${this.sql}\nrows so far (${this.rows.length}): ${JSON.stringify(this.rows)}\nfinal: ${JSON.stringify(this.final?.status)} ${this.final?.message ?? ''}`;
  }

  /** Wait until at least `n` rows arrived in total; fails after `timeoutMs` showing what came. */
  async waitForRows(n: number, timeoutMs = 20_000): Promise<Row[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.rows.length < n) {
      if (this.final) assert.fail(`the query ended before ${n} rows\n${this.describe()}`);
      const left = deadline - Date.now();
      if (left <= 0) assert.fail(`timed out waiting for ${n} rows\n${this.describe()}`);
      await this.changed(left);
    }
    return this.rows;
  }

  /** Wait until no row has arrived for `ms` (at most `timeoutMs` in all); answers every row so far. */
  async waitForQuiet(ms: number, timeoutMs = 30_000): Promise<Row[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const before = this.rows.length;
      await sleep(ms);
      if (this.rows.length === before || this.final) return this.rows;
      if (Date.now() > deadline) assert.fail(`rows kept coming for ${timeoutMs} ms\n${this.describe()}`);
    }
  }

  /**
   * Every row once `count` rows arrived and then none for `quietMs` (with no row expected, the
   * quiet period is longer: it is all that shows a wrongly sent row).
   */
  async settle(count: number, quietMs = count > 0 ? 400 : 800): Promise<Row[]> {
    if (count > 0) await this.waitForRows(count);
    return this.waitForQuiet(quietMs);
  }

  /**
   * Wait until the executor has started reading at least `n` source rows in total (the metrics
   * event's scanned_rows, sent every second). Inserts made after this land in a later step, so
   * they are a separate batch for the watermark.
   */
  async waitForScanned(n: number, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while ((this.metrics.at(-1)?.scanned_rows ?? 0) < n) {
      if (this.final) assert.fail(`the query ended before scanning ${n} rows\n${this.describe()}`);
      const left = deadline - Date.now();
      if (left <= 0)
        assert.fail(
          `timed out waiting for scanned_rows >= ${n} (last ${JSON.stringify(this.metrics.at(-1))})\n${this.describe()}`,
        );
      await this.changed(left);
    }
  }

  /** Wait for the final `event: query`. */
  async waitForEnd(timeoutMs = 20_000): Promise<QueryInfo> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<undefined>((res) => {
      timer = setTimeout(() => res(undefined), timeoutMs);
    });
    const final = await Promise.race([this.ended, timeout]);
    clearTimeout(timer);
    if (!final) assert.fail(`the query did not end within ${timeoutMs} ms\n${this.describe()}`);
    return final;
  }

  /** POST /queries/{id}/cancel (204) and wait for the final `event: query`. */
  async cancel(): Promise<QueryInfo> {
    if (!this.final) {
      const r = await this.api.post(`/v1beta2/queries/${this.id}/cancel`, {});
      await r.text();
      assert.equal(r.status, 204);
    }
    return this.waitForEnd();
  }

  /** Drop the connection, as a client that goes away. */
  disconnect(): void {
    this.abort.abort();
  }

  /** The query's status as GET /queries/{id} reports it. */
  async status(): Promise<string> {
    const r = await this.api.get(`/v1beta2/queries/${this.id}`);
    return ((await r.json()) as QueryInfo).status;
  }
}

/** Rows sorted by their JSON text, for comparisons where the emit order is not defined. */
export function sorted(rows: readonly Row[]): Row[] {
  return [...rows].sort((a, b) => {
    const x = JSON.stringify(a);
    const y = JSON.stringify(b);
    return x < y ? -1 : x > y ? 1 : 0;
  });
}

/** Order-insensitive row comparison. */
export function assertSameRows(actual: readonly Row[], expected: readonly Row[], message?: string): void {
  assert.deepEqual(sorted(actual), sorted(expected), message);
}
