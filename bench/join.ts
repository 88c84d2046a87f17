// Streaming joins under a steady flow: events/s and RSS over time for a stream x stream
// `date_diff_within` range join and a stream x versioned_kv enrichment, with the engine's own time
// for a one-shot join of the same rows printed beside them.
//   npm run bench -- join [--minutes 1 | --seconds 60] [--rate 2000] [--keys 1000] [--cases range,enrich,kv]
//
// Tributary runs in-process on a temporary data directory. Every 100 ms the bench ingests
// `rate / 10` rows over REST (compact JSON) into each input stream, event time = now, key =
// sequence % keys:
// - range: `l` and `r` (k int32, v int64, t datetime64(3)); the query
//   `SELECT count() FROM l JOIN r ON l.k = r.k AND date_diff_within(2s, l.t, r.t) EMIT PERIODIC 1s`.
// - enrich: `e` (append) and `d` (versioned_kv, primary key k, every key rewritten over and over);
//   `SELECT count() FROM e JOIN d ON e.k = d.k EMIT PERIODIC 1s`.
// - kv (not run unless asked): `a` and `b`, both versioned_kv (primary key k), each key rewritten
//   over and over on both sides; `SELECT count() FROM a JOIN b ON a.k = b.k EMIT PERIODIC 1s`, a join
//   of changelog inputs whose sides are kept as their latest row per key (join-side-state.ts): its
//   step time must not grow with the rows stored.
// Every 5 s one line: rows ingested per second over the interval, the query's latest count, the
// process RSS, the engine time of the query's steps (ms per second) and the load average. RSS must
// not grow with time (the range join reads only live buckets; the enrichment and the kv join keep
// one row per key plus the rows of the last steps).
// Baseline: the same join run once on the engine over all rows stored at the end (wall ms). Its
// count is not the streaming count: the range join follows Proton's bucket pruning (a new row does
// not meet rows of a bucket already pruned, even within the range), and the enrichment joins each
// row with the right side as it was at that step, not as it is at the end.
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Tributary } from '../src/cli/tributary.ts';
import { DEFAULTS } from '../src/config/config.ts';
import type { Engine } from '../src/engine/engine.ts';
import { silentLogger } from '../src/log/logger.ts';
import { option } from './bench-args.ts';

const PASSWORD = 'bench-password';
const AUTH = `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`;

interface Options {
  seconds: number;
  rate: number;
  keys: number;
  cases: string[];
}

const int = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '-');
const mb = () => Math.round(process.memoryUsage().rss / 2 ** 20);

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
  ingest(stream: string, columns: string[], data: unknown[][]): Promise<unknown> {
    return this.call('POST', `/v1beta2/streams/${stream}/ingest`, { columns, data });
  }
  /** Engine time so far of the query's steps, ms. */
  async stepMs(id: string): Promise<number> {
    const p = (await this.call('GET', `/v1beta2/queries/${id}/pipeline`)) as {
      nodes: { metric: { processing_time_ns: number } }[];
    };
    return p.nodes.reduce((s, n) => s + n.metric.processing_time_ns, 0) / 1e6;
  }
}

/** A streaming query whose rows are `[count]`: its id and latest count, read from the event channel. */
async function openCount(
  api: Api,
  sql: string,
): Promise<{ id: string; last: () => number; close: () => void }> {
  const abort = new AbortController();
  const res = await fetch(`${api.base}/v1beta2/queries`, {
    method: 'POST',
    headers: { authorization: AUTH, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ sql }),
    signal: abort.signal,
  });
  if (!res.ok || !res.body) throw new Error(`query answered ${res.status}: ${await res.text()}`);
  let last = 0;
  let id = '';
  let resolveId: (v: string) => void = () => undefined;
  const gotId = new Promise<string>((r) => {
    resolveId = r;
  });
  (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let sep = buffer.indexOf('\n\n');
      while (sep >= 0) {
        const block = buffer.slice(0, sep);
        buffer = buffer.slice(sep + 2);
        let event = 'message';
        let data = '';
        for (const line of block.split('\n')) {
          if (line.startsWith('event: ')) event = line.slice(7);
          else if (line.startsWith('data: ')) data += line.slice(6);
        }
        if (event === 'query') {
          id = (JSON.parse(data) as { id: string }).id;
          resolveId(id);
        } else if (event === 'message') {
          const rows = JSON.parse(data) as unknown[][];
          const v = rows.at(-1)?.[0];
          if (v !== undefined) last = Number(v);
        }
        sep = buffer.indexOf('\n\n');
      }
    }
  })().catch(() => undefined);
  await gotId;
  return { id, last: () => last, close: () => abort.abort() };
}

interface Case {
  name: string;
  ddl: string[];
  query: string;
  /** The rows of one 100 ms tick, per stream. */
  tick(seq: number, n: number, now: number): { stream: string; columns: string[]; data: unknown[][] }[];
  /** The same join once on the engine, over everything stored. */
  baseline: string;
}

function cases(o: Options): Case[] {
  const t = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
  const all: Case[] = [
    {
      name: 'range',
      ddl: [
        'CREATE STREAM bj_l (k int32, v int64, t datetime64(3))',
        'CREATE STREAM bj_r (k int32, v int64, t datetime64(3))',
      ],
      query:
        'SELECT count() FROM bj_l AS l INNER JOIN bj_r AS r ON l.k = r.k AND date_diff_within(2s, l.t, r.t) EMIT PERIODIC 1s',
      tick: (seq, n, now) =>
        ['bj_l', 'bj_r'].map((stream) => ({
          stream,
          columns: ['k', 'v', 't'],
          data: Array.from({ length: n }, (_, i) => [(seq + i) % o.keys, seq + i, t(now)]),
        })),
      baseline:
        'SELECT count() FROM default.bj_l AS l INNER JOIN default.bj_r AS r ON l.k = r.k ' +
        'WHERE abs(toUnixTimestamp64Milli(l.t) - toUnixTimestamp64Milli(r.t)) <= 2000',
    },
    {
      name: 'enrich',
      ddl: [
        'CREATE STREAM bj_e (k int32, v int64)',
        "CREATE STREAM bj_d (k int32, name string) PRIMARY KEY k SETTINGS mode='versioned_kv'",
      ],
      query: 'SELECT count() FROM bj_e AS e INNER JOIN bj_d AS d ON e.k = d.k EMIT PERIODIC 1s',
      tick: (seq, n) => [
        {
          stream: 'bj_e',
          columns: ['k', 'v'],
          data: Array.from({ length: n }, (_, i) => [(seq + i) % o.keys, seq + i]),
        },
        {
          stream: 'bj_d',
          columns: ['k', 'name'],
          // A tenth of the rate, walking through every key in turn.
          data: Array.from({ length: Math.max(1, Math.floor(n / 10)) }, (_, i) => {
            const u = Math.floor(seq / 10) + i;
            return [u % o.keys, `n${u}`];
          }),
        },
      ],
      baseline:
        'SELECT count() FROM default.bj_e AS e INNER JOIN ' +
        '(SELECT k, argMax(name, _tp_sn) AS name FROM default.bj_d GROUP BY k) AS d ON e.k = d.k',
    },
  ];
  all.push({
    name: 'kv',
    ddl: [
      "CREATE STREAM bj_a (k int32, v int64) PRIMARY KEY k SETTINGS mode='versioned_kv'",
      "CREATE STREAM bj_b (k int32, w int64) PRIMARY KEY k SETTINGS mode='versioned_kv'",
    ],
    query: 'SELECT count() FROM bj_a AS a INNER JOIN bj_b AS b ON a.k = b.k EMIT PERIODIC 1s',
    tick: (seq, n) =>
      [
        ['bj_a', 'v'],
        ['bj_b', 'w'],
      ].map(([stream, column]) => ({
        stream: stream as string,
        columns: ['k', column as string],
        data: Array.from({ length: n }, (_, i) => [(seq + i) % o.keys, seq + i]),
      })),
    baseline:
      'SELECT count() FROM (SELECT DISTINCT k FROM default.bj_a) AS a INNER JOIN ' +
      '(SELECT DISTINCT k FROM default.bj_b) AS b ON a.k = b.k',
  });
  return all.filter((c) => o.cases.includes(c.name));
}

async function runCase(api: Api, engine: Engine, c: Case, o: Options): Promise<void> {
  for (const d of c.ddl) await api.ddl(d);
  const q = await openCount(api, c.query);
  const perTick = Math.max(1, Math.round(o.rate / 10));
  console.log(`\n${c.name}: ${c.query}`);
  console.log(
    `  ${'s'.padStart(4)} ${'rows/s in'.padStart(10)} ${'count'.padStart(14)} ${'RSS MB'.padStart(7)} ${'step ms/s'.padStart(9)} ${'load'.padStart(5)}`,
  );
  const t0 = performance.now();
  let seq = 0;
  let sent = 0;
  let lastReport = t0;
  let lastSent = 0;
  let lastSteps = 0;
  const rss: number[] = [];
  while (performance.now() - t0 < o.seconds * 1000) {
    const tickStart = performance.now();
    const batches = c.tick(seq, perTick, Date.now());
    await Promise.all(batches.map((b) => api.ingest(b.stream, b.columns, b.data)));
    seq += perTick;
    sent += batches.reduce((n, b) => n + b.data.length, 0);
    const now = performance.now();
    if (now - lastReport >= 5000) {
      const steps = await api.stepMs(q.id);
      const s = (now - lastReport) / 1000;
      rss.push(mb());
      console.log(
        `  ${int((now - t0) / 1000).padStart(4)} ${int((sent - lastSent) / s).padStart(10)} ${int(q.last()).padStart(14)} ${String(rss.at(-1)).padStart(7)} ${int((steps - lastSteps) / s).padStart(9)} ${(loadavg()[0] ?? 0).toFixed(1).padStart(5)}`,
      );
      lastReport = now;
      lastSent = sent;
      lastSteps = steps;
    }
    const wait = 100 - (performance.now() - tickStart);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  await new Promise((r) => setTimeout(r, 2000));
  const final = q.last();
  q.close();
  const half = Math.floor(rss.length / 2);
  const first = rss.slice(0, Math.max(1, half));
  const second = rss.slice(half);
  const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  console.log(
    `  ${int(sent)} rows in ${o.seconds} s (${int(sent / o.seconds)}/s); final count ${int(final)}; ` +
      `RSS first half ${int(avg(first))} MB, second half ${int(avg(second))} MB`,
  );
  const b0 = performance.now();
  const r = await engine.query(c.baseline, { format: 'TSV' });
  const wall = performance.now() - b0;
  console.log(
    `  engine, the same join once over all ${int(sent)} stored rows: count ${r.text().trim()} in ${int(wall)} ms (${int((sent * 1000) / wall)} rows/s)`,
  );
  for (const d of c.ddl)
    await api.ddl(`DROP STREAM ${/CREATE STREAM (\w+)/.exec(d)?.[1]}`).catch(() => undefined);
}

export default async function main(args: string[] = []): Promise<void> {
  const o: Options = {
    seconds: args.includes('--minutes')
      ? Number(option(args, 'minutes', '1')) * 60
      : Number(option(args, 'seconds', '60')),
    rate: Number(option(args, 'rate', '2000')),
    keys: Number(option(args, 'keys', '1000')),
    cases: option(args, 'cases', 'range,enrich').split(','),
  };
  const dataDir = await mkdtemp(join(tmpdir(), 'tributary-bench-join-'));
  const trb = await Tributary.open(
    { ...DEFAULTS, dataDir, port: 0, host: '127.0.0.1', adminPassword: PASSWORD, logLevel: 'silent' },
    silentLogger(),
  );
  try {
    const address = await trb.listen();
    const api = new Api(`${address}/default/api`);
    console.log(
      `join bench: ${o.rate} rows/s into each input for ${o.seconds} s, ${o.keys} keys; ${availableParallelism()} cores, load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    for (const c of cases(o)) await runCase(api, trb.services.engine, c, o);
  } finally {
    await trb.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}
