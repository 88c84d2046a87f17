// Stream ingest through HTTP: rows/s of POST /v1beta2/streams/{name}/ingest for batches of 1, 100 and
// 10,000 rows in the compact and streaming (NDJSON) formats, sent over a real socket (the server
// listens on 127.0.0.1; a load generator in a worker thread keeps `concurrency` keep-alive requests
// in flight). Printed next to the baseline measured in the same run: a raw chDB insert of the same
// rows (engine.insert of JSONCompactEachRow into a plain MergeTree table, one insert in flight).
//   npm run bench -- ingest [--seconds 3] [--rounds 3] [--concurrency 1,4] [--batches 1,100,10000]
//                           [--clients 1,256] [--decompose yes|no]
// Many clients: 1-row compact requests from `--clients` keep-alive connections (raw sockets, one
// request in flight each), requests/s and latency p50/p99, beside a bare fastify route on its own
// port answering the same requests (body read as bytes, 200, empty body) in the same run; with
// `--decompose yes` (the default) also into a memory stream (no WAL) and a WAL-only stream (engine
// insert skipped), and for each case the CPU time per request by thread (thread-cpu.ts).
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism as availableCores, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import Fastify from 'fastify';
import { SYSTEM_ACTOR } from '../src/catalog/audit.ts';
import { Tributary } from '../src/cli/tributary.ts';
import { DEFAULTS } from '../src/config/config.ts';
import { silentLogger } from '../src/log/logger.ts';
import type { WriterCounters } from '../src/stream/stream-writer.ts';
import { postRequest, runSocketLoad, type SocketLoad } from './socket-load.ts';

/** The columns of every stream the ingest bench creates (the rows it sends fill them). */
const BENCH_COLUMNS = [
  { name: 't', type: "datetime64(3, 'UTC')" },
  { name: 'a', type: 'string' },
  { name: 'b', type: 'int64' },
  { name: 'c', type: 'float64' },
];

const PASSWORD = 'bench-password';
const COLUMNS = ['t', 'a', 'b', 'c'];

/** `n` rows: an event time, a short string, an int64 and a float64. */
function makeRows(n: number, offset: number): unknown[][] {
  const rows: unknown[][] = [];
  for (let k = 0; k < n; k++) {
    const i = offset + k;
    rows.push([new Date(1_700_000_000_000 + i).toISOString(), `user-${i % 1000}`, i * 7, (i % 997) * 1.25]);
  }
  return rows;
}

function compactBody(rows: unknown[][]): Buffer {
  return Buffer.from(JSON.stringify({ columns: COLUMNS, data: rows }));
}

function ndjsonBody(rows: unknown[][]): Buffer {
  return Buffer.from(rows.map((r) => JSON.stringify({ t: r[0], a: r[1], b: r[2], c: r[3] })).join('\n'));
}

interface Load {
  requests: number;
  failures: number;
  seconds: number;
  firstError?: string;
}

/** POST `body` `concurrency` at a time from a worker thread for `seconds`. */
function runLoad(
  url: string,
  body: Buffer,
  contentType: string,
  seconds: number,
  concurrency: number,
): Promise<Load> {
  const code = `
    const { workerData, parentPort } = require('node:worker_threads');
    const http = require('node:http');
    const { url, body, contentType, seconds, concurrency, auth } = workerData;
    const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
    const u = new URL(url);
    const headers = { 'content-type': contentType, 'content-length': body.length, authorization: auth };
    let requests = 0, failures = 0, stop = false, firstError;
    const payload = Buffer.from(body.buffer, body.byteOffset, body.length);
    const t0 = performance.now();
    function one() {
      return new Promise((resolve) => {
        const req = http.request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method: 'POST', agent, headers }, (res) => {
          let text = '';
          res.on('data', (c) => { text += c; });
          res.on('end', () => { if (res.statusCode === 200) requests++; else { failures++; firstError ??= res.statusCode + ' ' + text; } resolve(); });
        });
        req.on('error', (e) => { failures++; firstError ??= String(e); resolve(); });
        req.end(payload);
      });
    }
    async function loop() { while (!stop) await one(); }
    setTimeout(() => { stop = true; }, seconds * 1000);
    Promise.all(Array.from({ length: concurrency }, loop)).then(() => {
      parentPort.postMessage({ requests, failures, seconds: (performance.now() - t0) / 1000, firstError });
      agent.destroy();
    });
  `;
  const auth = `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`;
  return new Promise((resolve, reject) => {
    const worker = new Worker(code, {
      eval: true,
      workerData: { url, body, contentType, seconds, concurrency, auth },
    });
    worker.once('message', (m: Load) => {
      resolve(m);
      void worker.terminate();
    });
    worker.once('error', reject);
  });
}

class RssPeak {
  peak = 0;
  private readonly timer: NodeJS.Timeout;
  constructor() {
    this.timer = setInterval(() => this.sample(), 50);
    this.sample();
  }
  sample(): void {
    this.peak = Math.max(this.peak, process.memoryUsage.rss());
  }
  reset(): void {
    this.peak = 0;
    this.sample();
  }
  stop(): void {
    clearInterval(this.timer);
  }
}

function arg(args: string[], name: string, fallback: string): string {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? (args[i + 1] as string) : fallback;
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US').padStart(11);
const mb = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MB`;

interface Case {
  label: string;
  rates: number[];
  /** Per round: this case's rate over the compact raw baseline's rate measured just before it. */
  paired: number[];
  peakRss: number;
  cores: number[];
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

export default async function main(args: string[] = []): Promise<void> {
  const seconds = Number(arg(args, 'seconds', '3'));
  const rounds = Number(arg(args, 'rounds', '3'));
  const concurrencies = arg(args, 'concurrency', '1,4').split(',').map(Number);
  const batches = arg(args, 'batches', '1,100,10000').split(',').filter(Boolean).map(Number);
  const clients = arg(args, 'clients', '1,256').split(',').filter(Boolean).map(Number);
  const dataDir = await mkdtemp(join(tmpdir(), 'tributary-bench-ingest-'));
  const rss = new RssPeak();
  const trb = await Tributary.open(
    { ...DEFAULTS, dataDir, port: 0, host: '127.0.0.1', adminPassword: PASSWORD, logLevel: 'silent' },
    silentLogger(),
  );
  try {
    const address = await trb.listen();
    const { engine, streams } = trb.services;
    await engine.query(
      "CREATE TABLE default.raw_baseline (t DateTime64(3, 'UTC'), a String, b Int64, c Float64) ENGINE = MergeTree ORDER BY t",
    );
    console.log(
      `ingest bench: rows (t datetime64(3), a string, b int64, c float64); ${rounds} rounds of ${seconds} s per case, ` +
        'raw and HTTP interleaved, medians shown;',
    );
    console.log(
      `server on ${address}; HTTP load from a worker thread (keep-alive); ${availableCores()} cores`,
    );
    console.log(`  ${'case'.padEnd(58)} ${'rows/s'.padStart(11)}  vs raw   vs same  peak RSS  CPU`);
    let offset = 0;
    for (const n of batches) {
      const rows = makeRows(n, offset);
      offset += n;
      // Baselines: the same rows, already encoded, inserted straight into a MergeTree: as
      // JSONCompactEachRow (what a compact body carries) and as JSONEachRow (the NDJSON body itself),
      // with the engine's default settings; the third is the first with parallel parsing off, as
      // Tributary's own inserts below 10 MiB run (src/stream/stream-tables.ts insertSettings), to
      // compare like with like. The ratios use the first two.
      const baselines = [
        {
          format: 'JSONCompactEachRow',
          payload: Buffer.from(rows.map((r) => JSON.stringify(r)).join('\n')),
          case: {
            label: `raw chDB insert, JSONCompactEachRow -> MergeTree, ${n} rows`,
            rates: [],
            paired: [],
            peakRss: 0,
            cores: [],
          } as Case,
        },
        {
          format: 'JSONEachRow',
          payload: ndjsonBody(rows),
          case: {
            label: `raw chDB insert, JSONEachRow -> MergeTree, ${n} rows`,
            rates: [],
            paired: [],
            peakRss: 0,
            cores: [],
          } as Case,
        },
        {
          format: 'JSONCompactEachRow',
          payload: Buffer.from(rows.map((r) => JSON.stringify(r)).join('\n')),
          settings: { input_format_parallel_parsing: 0 },
          case: {
            label: `raw chDB insert, JSONCompactEachRow, no parallel parsing, ${n} rows`,
            rates: [],
            paired: [],
            peakRss: 0,
            cores: [],
          } as Case,
        },
      ] as const;
      const http: Case[] = [];
      const bodies = [
        ['compact', 'application/json', compactBody(rows)],
        ['streaming', 'application/x-ndjson', ndjsonBody(rows)],
      ] as const;
      for (const [format] of bodies) {
        for (const c of concurrencies) {
          http.push({
            label: `HTTP ${format}, ${n} rows/request, ${c} in flight`,
            rates: [],
            paired: [],
            peakRss: 0,
            cores: [],
          });
        }
      }
      for (let round = 0; round < rounds; round++) {
        for (const b of baselines) {
          await engine.query('TRUNCATE TABLE default.raw_baseline');
          rss.reset();
          let inserted = 0;
          const cpu = process.cpuUsage();
          const t0 = performance.now();
          while (performance.now() - t0 < seconds * 1000) {
            await engine.insert('default.raw_baseline', b.payload, {
              format: b.format,
              ...(b.format === 'JSONCompactEachRow' ? { columns: COLUMNS } : {}),
              ...('settings' in b ? { settings: b.settings } : {}),
            });
            inserted += n;
          }
          const ms = performance.now() - t0;
          b.case.rates.push((inserted * 1000) / ms);
          b.case.cores.push(coresSince(cpu, ms));
          b.case.peakRss = Math.max(b.case.peakRss, rss.peak);
        }
        let k = 0;
        for (const [format, contentType, body] of bodies) {
          for (const concurrency of concurrencies) {
            const c = http[k++] as Case;
            const name = `bench_${format}_${n}_${concurrency}`;
            await streams.create(
              {
                name,
                columns: BENCH_COLUMNS,
              },
              SYSTEM_ACTOR,
            );
            rss.reset();
            const cpu1 = process.cpuUsage();
            const t1 = performance.now();
            const load = await runLoad(
              `${address}/default/api/v1beta2/streams/${name}/ingest`,
              body,
              contentType,
              seconds,
              concurrency,
            );
            c.cores.push(coresSince(cpu1, performance.now() - t1));
            c.rates.push((load.requests * n) / load.seconds);
            c.paired.push((c.rates.at(-1) as number) / (baselines[0].case.rates.at(-1) as number));
            c.peakRss = Math.max(c.peakRss, rss.peak);
            if (load.failures > 0)
              console.log(`    ${c.label}: ${load.failures} failed requests, first: ${load.firstError}`);
            const [count] = (await engine.query(`SELECT count() FROM default.${name}`, { format: 'TSV' }))
              .text()
              .split('\n');
            if (Number(count) !== load.requests * n)
              console.log(`    ${c.label}: ${count} rows in the stream, ${load.requests * n} acknowledged`);
            await streams.drop('default', name);
          }
        }
      }
      const compactRaw = median(baselines[0].case.rates);
      const sameFormatRaw = [compactRaw, median(baselines[1].case.rates)];
      const pct = (a: number, b: number) => `${((a / b) * 100).toFixed(0)}%`;
      const line = (c: Case, ratio: string, ratioSame: string) =>
        console.log(
          `  ${c.label.padEnd(58)} ${fmt(median(c.rates))}  ${ratio.padStart(6)}  ${ratioSame.padStart(9)}  ${mb(c.peakRss).padStart(7)}  ${median(c.cores).toFixed(2)}`,
        );
      for (const b of baselines) line(b.case, '-', '-');
      http.forEach((c, i) => {
        const rate = median(c.rates);
        const same = sameFormatRaw[Math.floor(i / concurrencies.length)] as number;
        line(c, pct(rate, compactRaw), pct(rate, same));
      });
      for (const b of baselines)
        console.log(
          `    (per round, rows/s, ${b.format}: ${b.case.rates.map((r) => Math.round(r)).join(' / ')})`,
        );
      // A loaded machine moves the baseline between rounds (3x seen): the ratio to the baseline of
      // the same round, taken seconds apart, is steadier than the ratio of the medians.
      for (const c of http)
        console.log(
          `    (${c.label}: vs raw of the same round ${c.paired.map((r) => `${(r * 100).toFixed(0)}%`).join(' / ')}, median ${pct(median(c.paired), 1)})`,
        );
      const staged = streams.stageCounters();
      console.log(
        `    (large requests staged while checked, so far: ${staged.started} started, ${staged.moved} moved, ${staged.discarded} discarded)`,
      );
    }
    if (clients.length > 0)
      await manyClients(trb, address, clients, rounds, seconds, arg(args, 'decompose', 'yes') !== 'no');
    console.log(`  peak RSS of the whole run: ${mb(process.resourceUsage().maxRSS * 1024)}`);
  } finally {
    rss.stop();
    await trb.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

function coresSince(since: NodeJS.CpuUsage, wallMs: number): number {
  const u = process.cpuUsage(since);
  return (u.user + u.system) / 1000 / wallMs;
}

/** A bare fastify server: the same request answered with no work but reading the body. */
async function bareFastify(): Promise<{ port: number; close: () => Promise<void> }> {
  const app = Fastify({ logger: false });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  app.post('/ingest', async (_request, reply) =>
    reply.status(200).header('x-tributary-rows-written', 1).send(),
  );
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { port, close: () => app.close() };
}

/**
 * One case of the many-clients part: the bare route, or ingest into a fresh stream (`storageType`
 * 'memory': no WAL; `walOnly`: the engine insert skipped by the stream layer's test hook).
 */
interface ClientsCase {
  label: string;
  kind: 'bare' | 'ingest';
  storageType?: 'memory';
  walOnly?: boolean;
  results: Measured[];
  counters: WriterCounters[];
}

/**
 * 1-row compact requests from many keep-alive clients: Tributary beside a bare fastify route, and
 * with `decompose` two cases that each leave one stage of the commit out — a `memory` stream (no
 * WAL append) and a WAL-only stream (the engine insert skipped) — to show which stage bounds it.
 */
async function manyClients(
  trb: Tributary,
  address: string,
  clientCounts: number[],
  rounds: number,
  seconds: number,
  decompose: boolean,
): Promise<void> {
  const { engine, streams } = trb.services;
  const url = new URL(address);
  const bare = await bareFastify();
  const body = compactBody(makeRows(1, 0));
  const auth = `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`;
  const headers = { 'content-type': 'application/json', authorization: auth };
  console.log(
    `  many clients: 1-row compact requests, raw keep-alive sockets with one request in flight each (${rounds} rounds of ${seconds} s)`,
  );
  console.log(
    `  ${'case'.padEnd(58)} ${'requests/s'.padStart(11)}  vs bare  p50 ms  p99 ms  main µs/req  CPU`,
  );
  const walOnly = new Set<string>();
  streams.setTestHooks({ skipEngineInsert: (_db, name) => walOnly.has(name) });
  try {
    for (const n of clientCounts) {
      const cases: ClientsCase[] = [
        { label: `bare fastify route, ${n} clients`, kind: 'bare', results: [], counters: [] },
        { label: `HTTP ingest, 1 row/request, ${n} clients`, kind: 'ingest', results: [], counters: [] },
        ...(decompose
          ? [
              {
                label: `  same, memory stream (no WAL), ${n} clients`,
                kind: 'ingest',
                storageType: 'memory',
                results: [],
                counters: [],
              } as ClientsCase,
              {
                label: `  same, WAL only (engine insert skipped), ${n} clients`,
                kind: 'ingest',
                walOnly: true,
                results: [],
                counters: [],
              } as ClientsCase,
            ]
          : []),
      ];
      for (let round = 0; round < rounds; round++) {
        for (const [i, c] of cases.entries()) {
          if (c.kind === 'bare') {
            c.results.push(
              await measured(() =>
                runSocketLoad(
                  '127.0.0.1',
                  bare.port,
                  postRequest('127.0.0.1', '/ingest', headers, body),
                  seconds,
                  n,
                ),
              ),
            );
            continue;
          }
          const name = `bench_clients_${n}_${round}_${i}`;
          await streams.create(
            {
              name,
              columns: BENCH_COLUMNS,
              ...(c.storageType ? { storageType: c.storageType } : {}),
            },
            SYSTEM_ACTOR,
          );
          if (c.walOnly) walOnly.add(name);
          const path = `/default/api/v1beta2/streams/${name}/ingest`;
          const m = await measured(() =>
            runSocketLoad(
              url.hostname,
              Number(url.port),
              postRequest(url.hostname, path, headers, body),
              seconds,
              n,
            ),
          );
          c.results.push(m);
          c.counters.push(streams.writerCounters('default', name));
          const load = m.load;
          if (load.failures > 0)
            console.log(`    ${c.label}: ${load.failures} failed requests, first: ${load.firstError}`);
          if (!c.walOnly) {
            const [count] = (await engine.query(`SELECT count() FROM default.${name}`, { format: 'TSV' }))
              .text()
              .split('\n');
            if (Number(count) !== load.requests)
              console.log(`    ${c.label}: ${count} rows in the stream, ${load.requests} acknowledged`);
          }
          walOnly.delete(name);
          await streams.drop('default', name);
        }
      }
      const rate = (m: Measured) => m.load.requests / m.load.seconds;
      const bareRate = median((cases[0] as ClientsCase).results.map(rate));
      for (const c of cases) {
        const r = c.results;
        const rps = median(r.map(rate));
        const cells = [
          fmt(rps),
          `${((rps / bareRate) * 100).toFixed(0)}%`.padStart(7),
          median(r.map((m) => m.load.p50))
            .toFixed(1)
            .padStart(6),
          median(r.map((m) => m.load.p99))
            .toFixed(1)
            .padStart(6),
          median(r.map((m) => m.mainUs))
            .toFixed(0)
            .padStart(11),
          median(r.map((m) => m.cores)).toFixed(2),
        ];
        console.log(`  ${c.label.padEnd(58)} ${cells.join('  ')}`);
      }
      const ingest = cases[1] as ClientsCase;
      console.log(
        `    (group commit: ${ingest.counters.map((c) => `${(c.requests / Math.max(1, c.appends)).toFixed(1)} requests per WAL append, ${(c.requests / Math.max(1, c.inserts)).toFixed(1)} per engine insert`).join('; ')})`,
      );
      console.log(
        `    (per round, requests/s, ${cases.map((c) => `${c.label.trim().split(',')[0]}${c.label.includes('memory') ? ' memory' : c.walOnly ? ' WAL only' : ''}: ${c.results.map((m) => Math.round(rate(m))).join(' / ')}`).join('; ')})`,
      );
      // CPU time per request by thread (median over the rounds): moves far less with the machine's
      // load than requests/s, and says who pays — the server's main thread, the load generator
      // (same process, same two cores), Node's pool (engine calls, WAL writes; GC helpers), the engine.
      for (const c of cases) {
        const split = cpuPerRequest(c.results);
        if (split) console.log(`    (CPU µs per request, ${c.label.trim()}: ${split})`);
      }
    }
  } finally {
    streams.setTestHooks({});
    await bare.close();
  }
}

/** `main 40, generator 20, ...`: the median over rounds of each thread kind's CPU µs per request. */
function cpuPerRequest(rounds: Measured[]): string | undefined {
  const per = rounds
    .map((m) => (m.load.cpu ? { cpu: m.load.cpu, n: Math.max(1, m.load.requests) } : undefined))
    .filter((x) => x !== undefined);
  if (per.length === 0) return undefined;
  const kinds = ['main', 'generator', 'node pool', 'engine'];
  const cells = kinds.map((k) => `${k} ${median(per.map((p) => ((p.cpu[k] ?? 0) * 1000) / p.n)).toFixed(0)}`);
  const total = median(per.map((p) => (Object.values(p.cpu).reduce((a, b) => a + b, 0) * 1000) / p.n));
  return `${cells.join(', ')}; all threads ${total.toFixed(0)}`;
}

interface Measured {
  load: SocketLoad;
  /** Process CPU time / wall time while the load ran. */
  cores: number;
  /** Main-thread busy time per completed request (event-loop utilisation x wall / requests), µs. */
  mainUs: number;
}

async function measured(run: () => Promise<SocketLoad>): Promise<Measured> {
  const cpu = process.cpuUsage();
  const elu = performance.eventLoopUtilization();
  const t0 = performance.now();
  const load = await run();
  const wall = performance.now() - t0;
  const busy = performance.eventLoopUtilization(elu);
  return {
    load,
    cores: coresSince(cpu, wall),
    mainUs: (busy.active * 1000) / Math.max(1, load.requests + load.failures),
  };
}
