// Streaming queries end to end: ingest-to-event latency of a tail query and a 1-second tumble at a
// paced ingest rate, and the sustained events/s of a 10-group global aggregation, each printed next
// to the engine's own time for the same SQL over the same rows, measured in the same run.
//   npm run bench -- latency [--seconds 10] [--warmup 3] [--rates 1000,50000] [--queries ingest,tail,tumble]
//     [--rounds 1] [--tail-gap-ms <default>[,...]] [--tail-late-share <default>[,...]] [--interval-ms 10] [--batch-ms 0] [--concurrency 4] [--only latency|throughput] [--history 0] [--history-parts 20]
// `ingest` is the same paced load with no query: the baseline a query's cores are compared with
// ("adds" = its cores - ingest's, same rate, same run); `--rounds n` alternates the cases n times;
// `--tail-gap-ms a,b` runs each query case once per longest tail step gap (src/streaming/step-pacing.ts),
// `--tail-late-share a,b` once per share of commits a tail may hold back (with each gap).
//
// Tributary runs in-process on a temporary data directory and listens on 127.0.0.1. The client (a
// worker thread, bench/latency-client.mjs: its own event loop, same process) opens the query's SSE
// channel (POST /v1beta2/queries), then ingests over REST (POST /v1beta2/streams/{name}/ingest,
// compact JSON) into `bench_events (k string, v float64, t datetime64(3))`:
// - latency: every `interval-ms` a batch of the rows due at the target rate (≤ 8 requests in flight;
//   when behind, the rows due go into the next batch); every row carries its send time in v (and t,
//   to the millisecond). Tail latency per row = arrival of its SSE event - v. Tumble latency per
//   window = arrival of the window's row - send time of the batch that closed it (the first batch
//   with t >= window_end). Only rows/windows sent in the measured period count.
// - throughput: `concurrency` requests of 10,000 rows in flight, as fast as the server accepts;
//   the query's processed events/s from the counts of its periodic emits over time. Then the same
//   query with seek_to='earliest' over everything stored (the executor's own ceiling, from the
//   engine time of its steps, as the first emit waits for the 1 s period).
// Baseline: the stream's own rows of one batch / one second copied into a Memory table with the
// same columns, and the same SQL in ClickHouse form run on the engine (idle, after the case):
// median wall time of the engine call and the implied engine-only events/s.
// Also shown over each measured period: process CPU (cores, incl. the client), the main thread's
// event-loop utilisation, every engine call of the process (count and mean wall ms, engine-reported
// ms in brackets: the executor's `query`, the stream writer's `insert`) and the engine time of the
// query's steps from its pipeline (ms per second of the period: how busy the executor was).
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventLoopUtilization } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { Tributary } from '../src/cli/tributary.ts';
import { DEFAULTS } from '../src/config/config.ts';
import type { Engine } from '../src/engine/engine.ts';
import { silentLogger } from '../src/log/logger.ts';
import { option } from './bench-args.ts';
import { type ThreadCpu, threadCpu, threadCpuSince } from './thread-cpu.ts';

const PASSWORD = 'bench-password';
const AUTH = `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`;
const STREAM = 'bench_events';
const BASELINE = 'default.bench_baseline';

const QUERIES = {
  tail: {
    proton: `SELECT k, v, t FROM ${STREAM} WHERE v > 0`,
    engine: `SELECT k, v, t FROM ${BASELINE} WHERE v > 0`,
  },
  // The same tail made ineligible for the flat form by a WITH clause (src/streaming/flat-tail.ts):
  // each step reads a range subquery, as every tail did before (A/B in one run).
  tailsub: {
    proton: `WITH 0 AS zero SELECT k, v, t FROM ${STREAM} WHERE v > zero`,
    engine: `SELECT k, v, t FROM ${BASELINE} WHERE v > 0`,
  },
  tumble: {
    proton: `SELECT window_end, count(), max(v) FROM tumble(${STREAM}, t, 1s) GROUP BY window_end`,
    engine:
      'SELECT toStartOfInterval(t, INTERVAL 1 SECOND) + INTERVAL 1 SECOND AS window_end, count(), max(v) ' +
      `FROM ${BASELINE} GROUP BY window_end`,
  },
  global: {
    proton: `SELECT k, count(), sum(v) FROM ${STREAM} GROUP BY k EMIT PERIODIC 1s`,
    engine: `SELECT k, count(), sum(v) FROM ${BASELINE} GROUP BY k`,
  },
} as const;
type QueryKind = keyof typeof QUERIES;
/** A latency case: a query, or `ingest` (the same load with no query). */
type LatencyKind = 'ingest' | 'tail' | 'tailsub' | 'tumble';

interface Options {
  seconds: number;
  warmup: number;
  rates: number[];
  queries: LatencyKind[];
  rounds: number;
  /** Longest tail step gaps to run each query case with (undefined: the server's default). */
  tailGaps: (number | undefined)[];
  /** Late shares of tail pacing to run each query case with (undefined: the server's default). */
  tailShares: (number | undefined)[];
  intervalMs: number;
  batchMs: number;
  concurrency: number;
  only: string;
  /** Rows written into the stream before each case, as `historyParts` parts of its MergeTree (`--history`). */
  history: number;
  historyParts: number;
}

/** Every (gap, late share) pair the options ask each query case to run with. */
function pacingVariants(o: Options): [number | undefined, number | undefined][] {
  return o.tailGaps.flatMap((g) => o.tailShares.map((s): [number | undefined, number | undefined] => [g, s]));
}

function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * p) - 1)] as number;
}

function median(xs: number[]): number {
  return percentile(
    [...xs].sort((a, b) => a - b),
    0.5,
  );
}

const int = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '-');
const ms = (n: number) => (Number.isFinite(n) ? (n < 10 ? n.toFixed(1) : Math.round(n).toString()) : '-');

/** Run the client in a worker thread; `meter` runs over its measured period. */
function runClient<T>(
  data: Record<string, unknown>,
  meter: Meter,
): Promise<T & { errors: string[]; queryId: string }> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./latency-client.mjs', import.meta.url), { workerData: data });
    worker.on(
      'message',
      (m: T & { phase?: string; error?: string; errors: string[]; queryId: string; tid?: string }) => {
        if (m.phase === 'start') meter.start(m.queryId, m.tid);
        else if (m.phase === 'end') meter.stop(m.queryId);
        else if (m.error) reject(new Error(`${m.error} ${m.errors.join('; ')}`));
        else resolve(m);
      },
    );
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (code !== 0) reject(new Error(`client exited with ${code}`));
    });
  });
}

interface EngineTime {
  rows: number;
  wallMs: number;
  engineMs: number;
}

/** The engine's own time for `sql` over `rows` rows of the stream copied into a Memory table. */
async function engineTime(
  engine: Engine,
  kind: QueryKind,
  fromSn: number,
  rows: number,
): Promise<EngineTime> {
  await engine.query(`DROP TABLE IF EXISTS ${BASELINE}`);
  await engine.query(
    `CREATE TABLE ${BASELINE} ENGINE = Memory AS SELECT k, v, t FROM default.${STREAM} ` +
      `WHERE _tp_sn >= ${fromSn} AND _tp_sn < ${fromSn + rows}`,
  );
  const time = await engineTimeOn(engine, QUERIES[kind].engine, rows);
  await engine.query(`DROP TABLE ${BASELINE}`);
  return time;
}

/** Median wall time of `sql` on the idle engine (and the engine-reported time), over `rows` rows. */
async function engineTimeOn(engine: Engine, sql: string, rows: number): Promise<EngineTime> {
  for (let i = 0; i < 3; i++) await engine.query(sql);
  const wall: number[] = [];
  const own: number[] = [];
  const t0 = performance.now();
  while ((wall.length < 20 || performance.now() - t0 < 500) && wall.length < 1000) {
    const t = performance.now();
    const r = await engine.query(sql);
    wall.push(performance.now() - t);
    own.push(r.elapsedMs);
  }
  return { rows, wallMs: median(wall), engineMs: median(own) };
}

const evs = (e: EngineTime) => (e.rows * 1000) / e.wallMs;
const engineCell = (e: EngineTime | undefined) =>
  e === undefined
    ? '-'
    : `${int(e.rows).padStart(6)} rows ${ms(e.wallMs).padStart(5)} ms (${ms(e.engineMs)}) ${int(evs(e)).padStart(11)}/s`;

/** Engine calls made by anyone in the process (the executor's `query`, the stream writer's `insert`). */
interface CallCounts {
  query: number;
  queryMs: number;
  queryEngineMs: number;
  insert: number;
  insertMs: number;
  insertEngineMs: number;
}

/** Wrap the engine's `query` and `insert` to count calls and their wall time (incl. waiting for a session). */
function countCalls(engine: Engine): CallCounts {
  const c: CallCounts = { query: 0, queryMs: 0, queryEngineMs: 0, insert: 0, insertMs: 0, insertEngineMs: 0 };
  const query = engine.query.bind(engine);
  const insert = engine.insert.bind(engine);
  engine.query = async (...a) => {
    const t = performance.now();
    try {
      const r = await query(...a);
      c.queryEngineMs += r.elapsedMs;
      return r;
    } finally {
      c.query++;
      c.queryMs += performance.now() - t;
    }
  };
  engine.insert = async (...a) => {
    const t = performance.now();
    try {
      const r = await insert(...a);
      c.insertEngineMs += r.elapsedMs;
      return r;
    } finally {
      c.insert++;
      c.insertMs += performance.now() - t;
    }
  };
  return c;
}

/**
 * Over a measured period: main-thread busy share (ELU), process CPU in cores, engine calls, and
 * (with `api`) the engine time of the query's steps from its pipeline.
 */
class Meter {
  elu = Number.NaN;
  cores = Number.NaN;
  /** Process CPU without the client's thread (the load generator and SSE reader): the server's. */
  serverCores = Number.NaN;
  calls = '-';
  /** The server's cores by thread kind (bench/thread-cpu.ts). */
  byThread = '-';
  private client = new Set<string>();
  private threads: ThreadCpu | undefined;
  private t0 = 0;
  private cpu: NodeJS.CpuUsage | undefined;
  private eluStart: EventLoopUtilization | undefined;
  private before: CallCounts | undefined;

  private pipelines: Promise<Map<string, number>>[] = [];
  private seconds = 0;

  constructor(
    private readonly counts: CallCounts,
    private readonly api?: Api,
  ) {}

  start(queryId?: string, clientTid?: string): void {
    if (this.api && queryId) this.pipelines.push(this.api.pipeline(queryId));
    this.client = new Set(clientTid ? [clientTid] : []);
    this.threads = threadCpu(this.client);
    this.t0 = performance.now();
    this.cpu = process.cpuUsage();
    this.eluStart = performance.eventLoopUtilization();
    this.before = { ...this.counts };
  }

  stop(queryId?: string): void {
    if (!this.before) return;
    if (this.api && queryId) this.pipelines.push(this.api.pipeline(queryId));
    const s = (performance.now() - this.t0) / 1000;
    this.seconds = s;
    const u = process.cpuUsage(this.cpu);
    this.cores = (u.user + u.system) / 1e6 / s;
    const threads = threadCpuSince(this.threads, threadCpu(this.client));
    this.byThread = threads
      ? ['main', 'node pool', 'engine']
          .map((k) => `${k} ${((threads[k] ?? 0) / 1000 / s).toFixed(2)}`)
          .join(', ')
      : '-';
    this.serverCores =
      threads && this.client.size > 0 ? this.cores - (threads.generator ?? 0) / 1000 / s : Number.NaN;
    this.elu = performance.eventLoopUtilization(this.eluStart).utilization;
    const c = this.counts;
    const b = this.before;
    const q = c.query - b.query;
    const i = c.insert - b.insert;
    this.calls =
      `query ${Math.round(q / s)}/s x ${ms((c.queryMs - b.queryMs) / q)} ms ` +
      `(${ms((c.queryEngineMs - b.queryEngineMs) / q)}), ` +
      `insert ${Math.round(i / s)}/s x ${ms((c.insertMs - b.insertMs) / i)} ms ` +
      `(${ms((c.insertEngineMs - b.insertEngineMs) / i)})`;
  }

  /** Engine time of the query's steps over the period, in ms per second, per step name. */
  async steps(): Promise<string> {
    const [a, b] = await Promise.all(this.pipelines);
    if (!a || !b) return '-';
    const per = (name: string) => ((b.get(name) ?? 0) - (a.get(name) ?? 0)) / this.seconds;
    const names = [...b.keys()];
    const total = names.reduce((sum, n) => sum + per(n), 0);
    return `${Math.round(total)} ms/s (${names.map((n) => `${n} ${Math.round(per(n))}`).join(', ')})`;
  }
}

class Api {
  constructor(readonly base: string) {}
  async call(method: string, path: string, body?: unknown): Promise<unknown> {
    const res = await fetch(`${this.base}${path}`, {
      method,
      headers: { authorization: AUTH, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  }
  ddl(sql: string): Promise<unknown> {
    return this.call('POST', '/v1beta2/exec', { sql, type: 'ddl' });
  }
  /** Engine time so far of the query's steps (`pipeline`), ms per step name. */
  async pipeline(id: string): Promise<Map<string, number>> {
    const p = (await this.call('GET', `/v1beta2/queries/${id}/pipeline`)) as {
      nodes: { name: string; metric: { processing_time_ns: number } }[];
    };
    return new Map(p.nodes.map((n) => [n.name, n.metric.processing_time_ns / 1e6]));
  }

  /** Engine time of the query's steps over its whole life: total ms, and ms/s per step name. */
  async steps(id: string): Promise<{ totalMs: number; text: string }> {
    const q = (await this.call('GET', `/v1beta2/queries/${id}`)) as { duration: number };
    const p = (await this.call('GET', `/v1beta2/queries/${id}/pipeline`)) as {
      nodes: { name: string; metric: { processing_time_ns: number } }[];
    };
    const s = q.duration / 1000;
    const totalMs = p.nodes.reduce((sum, n) => sum + n.metric.processing_time_ns, 0) / 1e6;
    const parts = p.nodes.map((n) => `${n.name} ${Math.round(n.metric.processing_time_ns / 1e6 / s)}`);
    return { totalMs, text: `${Math.round(totalMs / s)} ms/s (${parts.join(', ')})` };
  }
}

interface LatencyReport {
  t0: number;
  mStart: number;
  mEnd: number;
  sends: number[];
  counts: number[];
  acks: number[];
  expectedTail: number;
  tailReceived: number;
  tailLatencies: Float64Array;
  windows: { text: string; count: number; maxV: number; arrival: number }[];
}

interface LatencyFigure {
  query: LatencyKind;
  rate: number;
  achieved: number;
  samples: number;
  p50: number;
  p99: number;
  max: number;
  ackP50: number;
  ackP99: number;
  note: string;
  elu: number;
  cores: number;
  serverCores: number;
  byThread: string;
  steps: string;
  calls: string;
  batch: EngineTime | undefined;
  second: EngineTime | undefined;
}

/** Index of the first element of ascending `xs` that is >= x. */
function lowerBound(xs: number[], x: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((xs[mid] as number) < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

interface Bench {
  /** Set the longest tail step gap (ms) and late share of the server's pacing (undefined: its default). */
  setTailPacing: (gapMs: number | undefined, lateShare: number | undefined) => void;
  api: Api;
  engine: Engine;
  calls: CallCounts;
  o: Options;
  /** Write `rows` rows into the stream as `parts` inserts, each moved into the MergeTree at once. */
  preload: (rows: number, parts: number) => Promise<void>;
}

async function latencyCase(b: Bench, query: LatencyKind, rate: number): Promise<LatencyFigure> {
  const { api, engine, o } = b;
  await api.ddl(`CREATE STREAM ${STREAM} (k string, v float64, t datetime64(3))`);
  if (o.history > 0) await b.preload(o.history, o.historyParts);
  const meter = new Meter(b.calls, api);
  const r = await runClient<LatencyReport>(
    {
      mode: 'latency',
      kind: query === 'tailsub' ? 'tail' : query,
      base: api.base,
      auth: AUTH,
      stream: STREAM,
      sql: query === 'ingest' ? undefined : QUERIES[query].proton,
      batching: { count: 1000, time_ms: o.batchMs },
      rate,
      intervalMs: o.intervalMs,
      maxInFlight: 8,
      warmupMs: o.warmup * 1000,
      measureMs: o.seconds * 1000,
      tailMs: 1500,
      drainMs: 10_000,
    },
    meter,
  );
  const inPeriod = (s: number) => s >= r.mStart && s < r.mEnd;
  let rows = 0;
  const ackLat: number[] = [];
  r.sends.forEach((s, i) => {
    if (!inPeriod(s)) return;
    rows += r.counts[i] as number;
    ackLat.push((r.acks[i] as number) - s);
  });
  ackLat.sort((a, b) => a - b);
  let lat: ArrayLike<number>;
  let note: string;
  if (query === 'ingest') {
    lat = ackLat;
    note = '';
  } else if (query === 'tail' || query === 'tailsub') {
    lat = r.tailLatencies.sort();
    note = r.tailReceived === r.expectedTail ? '' : `${r.tailReceived} of ${r.expectedTail} rows arrived`;
  } else {
    const list: number[] = [];
    let windowRows = 0;
    let sentRows = 0;
    for (const w of r.windows) {
      const end = Math.floor(w.maxV / 1000) * 1000 + 1000;
      const closer = lowerBound(r.sends, end); // t is the send time to the millisecond
      const closedAt = r.sends[closer];
      if (closedAt === undefined || !inPeriod(closedAt)) continue;
      list.push(w.arrival - closedAt);
      windowRows += w.count;
      r.sends.forEach((s, i) => {
        if (Math.floor(Math.floor(s) / 1000) * 1000 + 1000 === end) sentRows += r.counts[i] as number;
      });
    }
    lat = list.sort((a, b) => a - b);
    // Rows of a request acknowledged after a later one may be behind the watermark (late, dropped).
    const overtaken = r.acks.filter((a, i) => i > 0 && a < (r.acks[i - 1] as number)).length;
    note =
      windowRows === sentRows
        ? ''
        : `windows counted ${windowRows} of ${sentRows} rows sent (${overtaken} requests acknowledged before an earlier one)`;
  }
  const steps = query === 'ingest' ? '-' : await meter.steps();
  // The same rows: one batch and one second of what the case ingested, from its middle.
  const sent = r.counts.reduce((n, c) => n + c, 0);
  const batchRows = Math.max(1, Math.round((rate * o.intervalMs) / 1000));
  const from = Math.max(0, Math.floor(sent / 2) - rate);
  const batch = query === 'ingest' ? undefined : await engineTime(engine, query, from, batchRows);
  const second =
    query === 'ingest' ? undefined : await engineTime(engine, query, from, Math.min(rate, sent - from));
  await api.ddl(`DROP STREAM ${STREAM}`);
  return {
    query,
    rate,
    achieved: rows / o.seconds,
    samples: lat.length,
    p50: percentile(lat, 0.5),
    p99: percentile(lat, 0.99),
    max: percentile(lat, 1),
    ackP50: percentile(ackLat, 0.5),
    ackP99: percentile(ackLat, 0.99),
    note: [note, ...r.errors].filter(Boolean).join('; '),
    elu: meter.elu,
    cores: meter.cores,
    serverCores: meter.serverCores,
    byThread: meter.byThread,
    steps,
    calls: meter.calls,
    batch,
    second,
  };
}

async function latencySection(b: Bench): Promise<void> {
  const { o } = b;
  console.log(
    `ingest-to-event latency: one batch every ${o.intervalMs} ms at the target rate (REST compact JSON, ` +
      `≤ 8 requests in flight), batching_policy {count: 1000, time_ms: ${o.batchMs}}; ` +
      `${o.warmup} s warm-up, ${o.seconds} s measured per case`,
  );
  console.log(
    '  latency = SSE arrival - send time of the row (tail) / of the batch that closed the window (tumble); ' +
      'ack = ingest request round trip',
  );
  console.log(
    '  engine = the same SQL on the engine over the same rows (Memory table): median wall ms of one call ' +
      '(engine-reported ms) and rows / wall time',
  );
  console.log(
    `  ${'query'.padEnd(7)} ${'target/s'.padStart(8)} ${'achieved/s'.padStart(10)} ${'n'.padStart(7)} ` +
      `${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'max ms'.padStart(7)} ${'ack p50/p99'.padStart(12)} ` +
      `${'cores'.padStart(5)} ${'ELU'.padStart(4)} | engine, one batch${' '.repeat(24)} | engine, one second of rows`,
  );
  const ingestCores = new Map<number, number>();
  const ingestServerCores = new Map<number, number>();
  for (let round = 0; round < o.rounds; round++)
    for (const rate of o.rates) {
      for (const query of o.queries)
        for (const [gap, share] of query === 'ingest' ? [[undefined, undefined]] : pacingVariants(o)) {
          b.setTailPacing(gap, share);
          const f = await latencyCase(b, query, rate);
          if (query === 'ingest') ingestCores.set(rate, f.cores);
          if (query === 'ingest') ingestServerCores.set(rate, f.serverCores);
          const base = ingestCores.get(rate);
          const serverBase = ingestServerCores.get(rate);
          const serverAdds =
            serverBase !== undefined && Number.isFinite(f.serverCores) && Number.isFinite(serverBase)
              ? ` (the server alone, the client's thread left out: ${(f.serverCores - serverBase).toFixed(2)})`
              : '';
          const adds =
            query !== 'ingest' && base !== undefined
              ? `; adds ${(f.cores - base).toFixed(2)} cores over ingest alone${serverAdds}`
              : '';
          const label = `${query}${gap === undefined ? '' : `/${gap}`}${share === undefined ? '' : `/s${share}`}`;
          console.log(
            `  ${label.padEnd(7)} ${int(rate).padStart(8)} ${int(f.achieved).padStart(10)} ${int(f.samples).padStart(7)} ` +
              `${ms(f.p50).padStart(7)} ${ms(f.p99).padStart(7)} ${ms(f.max).padStart(7)} ` +
              `${`${ms(f.ackP50)}/${ms(f.ackP99)}`.padStart(12)} ${f.cores.toFixed(2).padStart(5)} ` +
              `${f.elu.toFixed(2).padStart(4)} | ${engineCell(f.batch)} | ${engineCell(f.second)}`,
          );
          console.log(
            `      engine calls: ${f.calls}; query steps: ${f.steps}${adds}${f.note ? `; ${f.note}` : ''}; ` +
              `server cores by thread: ${f.byThread}`,
          );
        }
    }
}

interface ThroughputReport {
  t0: number;
  mStart: number;
  mEnd: number;
  loadEnd: number;
  acks: number[];
  acked: number;
  samples: [number, number][];
  catchUpMs: number | undefined;
}

async function throughputSection(b: Bench): Promise<void> {
  const { api, engine, o } = b;
  const rowsPerRequest = 10_000;
  console.log(
    `10-group global aggregation (${QUERIES.global.proton}): ${o.concurrency} requests of ` +
      `${int(rowsPerRequest)} rows in flight as fast as the server accepts; ${o.warmup} s warm-up, ${o.seconds} s measured`,
  );
  await api.ddl(`CREATE STREAM ${STREAM} (k string, v float64, t datetime64(3))`);
  const meter = new Meter(b.calls, api);
  const r = await runClient<ThroughputReport>(
    {
      mode: 'throughput',
      base: api.base,
      auth: AUTH,
      stream: STREAM,
      sql: QUERIES.global.proton,
      batching: { count: 1000, time_ms: o.batchMs },
      rowsPerRequest,
      concurrency: o.concurrency,
      warmupMs: o.warmup * 1000,
      measureMs: o.seconds * 1000,
      drainMs: 30_000,
    },
    meter,
  );
  const ingested = r.acks.filter((a) => a >= r.mStart && a < r.mEnd).length * rowsPerRequest;
  const ingestRate = ingested / o.seconds;
  // The query's count at the last emit before the period and the last emit inside it.
  const before = r.samples.filter(([t]) => t <= r.mStart).at(-1) ?? r.samples[0];
  const inside = r.samples.filter(([t]) => t <= r.mEnd).at(-1);
  const processed =
    before && inside && inside[0] > before[0]
      ? ((inside[1] - before[1]) * 1000) / (inside[0] - before[0])
      : 0;
  const steps = await meter.steps();
  if (r.catchUpMs === undefined) {
    const text = (await engine.query(`SELECT count() FROM default.${STREAM}`, { format: 'TSV' })).text();
    r.errors.push(
      `the query's last emitted count is ${r.samples.at(-1)?.[1]}; ${r.acked} rows acknowledged, ${text.trim()} in the stream`,
    );
  }
  const request = await engineTime(engine, 'global', 0, rowsPerRequest);
  const second = await engineTime(
    engine,
    'global',
    0,
    Math.min(r.acked, Math.round(ingestRate / 1000) * 1000),
  );
  // The executor's own ceiling: the same aggregation over the rows already stored, from the earliest.
  const stored = Number(
    (await engine.query(`SELECT count() FROM default.${STREAM}`, { format: 'TSV' })).text(),
  );
  const backlogMeter = new Meter(b.calls);
  backlogMeter.start();
  const backlog = await runClient<{ ms: number | undefined; total: number }>(
    {
      mode: 'backlog',
      base: api.base,
      auth: AUTH,
      sql: `${QUERIES.global.proton} SETTINGS seek_to='earliest'`,
      batching: { count: 1000, time_ms: o.batchMs },
      expected: stored,
      drainMs: 120_000,
    },
    backlogMeter,
  );
  backlogMeter.stop();
  const backlogSteps = await api.steps(backlog.queryId);
  const whole = await engineTimeOn(
    engine,
    `SELECT k, count(), sum(v) FROM default.${STREAM} GROUP BY k`,
    stored,
  );
  await api.ddl(`DROP STREAM ${STREAM}`);
  console.log(
    `  ingest (acked)            ${int(ingestRate).padStart(11)} events/s   (${meter.cores.toFixed(2)} cores, main-thread ELU ${meter.elu.toFixed(2)})`,
  );
  console.log(
    `  query processed           ${int(processed).padStart(11)} events/s   (from its emitted counts; the emit counting ` +
      `every acknowledged row arrived ${r.catchUpMs === undefined ? 'not within 30 s' : `${ms(r.catchUpMs)} ms`} after the load stopped, emits being 1 s apart)`,
  );
  console.log(`  engine, GROUP BY k       ${engineCell(request)}`);
  console.log(`  engine, GROUP BY k       ${engineCell(second)}`);
  console.log(
    `      engine calls: ${meter.calls}; query steps: ${steps}${r.errors.length ? `; ${r.errors.join('; ')}` : ''}`,
  );
  // The first emit waits for the 1 s period; the steps' own engine time is the executor's cost.
  const backlogRate = (stored * 1000) / backlogSteps.totalMs;
  const took = backlog.ms === undefined ? `- (count ${backlog.total} after 120 s)` : `${ms(backlog.ms)} ms`;
  console.log(
    `  backlog from earliest     ${int(backlogRate).padStart(11)} events/s   (the same query with seek_to='earliest' over the ` +
      `${int(stored)} stored rows in ${ms(backlogSteps.totalMs)} ms of step engine time; first emit counting all of them ${took} after the request)`,
  );
  console.log(`  engine, on the stream    ${engineCell(whole)}`);
  console.log(`      engine calls: ${backlogMeter.calls}; query steps: ${backlogSteps.text}`);
}

export default async function main(args: string[] = []): Promise<void> {
  const o: Options = {
    seconds: Number(option(args, 'seconds', '10')),
    warmup: Number(option(args, 'warmup', '3')),
    rates: option(args, 'rates', '1000,50000').split(',').map(Number),
    queries: option(args, 'queries', 'ingest,tail,tumble').split(',') as Options['queries'],
    rounds: Number(option(args, 'rounds', '1')),
    tailGaps: option(args, 'tail-gap-ms', '')
      .split(',')
      .map((g) => (g === '' ? undefined : Number(g))),
    tailShares: option(args, 'tail-late-share', '')
      .split(',')
      .map((g) => (g === '' ? undefined : Number(g))),
    intervalMs: Number(option(args, 'interval-ms', '10')),
    batchMs: Number(option(args, 'batch-ms', '0')),
    concurrency: Number(option(args, 'concurrency', '4')),
    only: option(args, 'only', ''),
    history: Number(option(args, 'history', '0')),
    historyParts: Number(option(args, 'history-parts', '20')),
  };
  const dataDir = await mkdtemp(join(tmpdir(), 'tributary-bench-latency-'));
  const trb = await Tributary.open(
    { ...DEFAULTS, dataDir, port: 0, host: '127.0.0.1', adminPassword: PASSWORD, logLevel: 'silent' },
    silentLogger(),
  );
  try {
    const address = await trb.listen();
    const api = new Api(`${address}/default/api`);
    const { engine } = trb.services;
    console.log(
      `latency bench: server on ${address}, client in a worker thread; ${availableParallelism()} cores, ` +
        `load average ${loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')}`,
    );
    const pacing = trb.services.sharedReads?.pacing;
    const defaults = pacing ? { ...pacing } : undefined;
    const setTailPacing = (gapMs: number | undefined, lateShare: number | undefined) => {
      if (!pacing || !defaults) return;
      pacing.maxGapMs = gapMs ?? defaults.maxGapMs;
      pacing.lateShare = lateShare ?? defaults.lateShare;
    };
    const preload = async (rows: number, parts: number) => {
      const per = Math.ceil(rows / parts);
      for (let p = 0; p < parts; p++) {
        const data = Array.from({ length: per }, (_, i) => [
          `h${i % 100}`,
          i % 1000,
          '2026-01-01 00:00:00.000',
        ]);
        await trb.services.streams.ingest('default', STREAM, { columns: ['k', 'v', 't'], rows: data });
        await trb.services.streams.flush('default', STREAM);
      }
    };
    const b: Bench = { api, engine, calls: countCalls(engine), o, setTailPacing, preload };
    if (o.only !== 'throughput') await latencySection(b);
    if (o.only !== 'latency') await throughputSection(b);
    console.log(
      `load average at the end ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
  } finally {
    await trb.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}
