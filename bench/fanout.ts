// Many streaming queries on one stream while ingest is offered at a fixed rate (issue 12):
// ingest rate and ack latency with the queries, beside the same offered load with no query, and the
// event-to-query latency of the tails.
//   npm run bench -- fanout [--queries 100] [--rate 20000] [--seconds 10] [--interval-ms 10]
//     [--distinct-tails 10]
//
// Tributary runs in-process on a temporary data directory; ingest and queries are in-process calls
// (StreamStore.ingest, the planner's streaming executions with a sink per query), so the figures
// are the server's cost without HTTP. The stream is `fan (k string, v float64, t datetime64(3))`;
// every `interval-ms` the rows due at `rate` are sent as one ingest (at most 8 in flight; when
// behind, the rows due go into the next one), each row carrying its send time in v and t.
// Queries, in this mix (for 100; scaled for other counts):
// - 70% filtered tails `SELECT k, v, t FROM fan WHERE k = 'k<j>'`, `distinct-tails` distinct
//   filters (k has 10 values), so several clients watch each panel, as dashboards do;
// - 15% tumble(1s) counts, 10% hop(1s, 2s) counts, 5% global aggregations (EMIT PERIODIC 1s).
// Printed: offered and acknowledged rows/s, ack p50/p99 (ms) without and with the queries, the
// tails' event-to-query latency p50/p99 (arrival of a row at its query minus its send time), and
// at the end of the load how far the slowest query was behind (rows committed but not processed).

import { setMaxListeners } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { SYSTEM_ACTOR } from '../src/catalog/audit.ts';
import { Tributary } from '../src/cli/tributary.ts';
import { DEFAULTS } from '../src/config/config.ts';
import type { Engine } from '../src/engine/engine.ts';
import { silentLogger } from '../src/log/logger.ts';
import type { RowsPlan } from '../src/queries/execution.ts';
import { option, percentile } from './bench-args.ts';

const STREAM = 'fan';

interface LoadResult {
  offered: number;
  acked: number;
  ackP50: number;
  ackP99: number;
  cpu: number;
  /** Engine queries per second (the executor's; the writer inserts) and their engine-reported ms per second. */
  queryCalls: number;
  queryEngineMs: number;
}

/** Offer `rate` rows/s for `seconds`; answers the acknowledged rate and the ack latencies. */
async function offer(trb: Tributary, rate: number, seconds: number, intervalMs: number): Promise<LoadResult> {
  const streams = trb.services.streams;
  const acks: number[] = [];
  let acked = 0;
  let offered = 0;
  let inFlight = 0;
  const pending: Promise<void>[] = [];
  const cpu0 = process.cpuUsage();
  const calls0 = { ...engineCalls };
  const started = performance.now();
  const end = started + seconds * 1000;
  let k = 0;
  while (performance.now() < end) {
    const due = Math.floor(((performance.now() - started) / 1000) * rate) - offered;
    if (due > 0 && inFlight < 8) {
      const now = Date.now();
      const rows: unknown[][] = [];
      for (let i = 0; i < due; i++) rows.push([`k${k++ % 10}`, now, now]);
      offered += due;
      inFlight++;
      const sentAt = performance.now();
      pending.push(
        streams.ingest('default', STREAM, { columns: ['k', 'v', 't'], rows }).then(() => {
          inFlight--;
          acked += due;
          acks.push(performance.now() - sentAt);
        }),
      );
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  await Promise.all(pending);
  const wall = performance.now() - started;
  const used = process.cpuUsage(cpu0);
  acks.sort((a, b) => a - b);
  return {
    offered: (offered / wall) * 1000,
    acked: (acked / wall) * 1000,
    ackP50: percentile(acks, 50),
    ackP99: percentile(acks, 99),
    cpu: (used.user + used.system) / 1000 / wall,
    queryCalls: ((engineCalls.query - calls0.query) / wall) * 1000,
    queryEngineMs: ((engineCalls.engineMs - calls0.engineMs) / wall) * 1000,
  };
}

/** The executor's engine calls (`query`; the stream writer uses `insert`) and their engine-reported ms. */
const engineCalls = { query: 0, engineMs: 0 };
export const kinds = new Map<string, { n: number; ms: number }>();

function countQueryCalls(engine: Engine): void {
  const query = engine.query.bind(engine);
  engine.query = async (...a) => {
    const r = await query(...a);
    engineCalls.query++;
    engineCalls.engineMs += r.elapsedMs;
    if (process.env.FANOUT_KINDS) {
      const kind = String(a[0]).slice(0, 40).replace(/\d+/g, '#');
      const k = kinds.get(kind) ?? { n: 0, ms: 0 };
      k.n++;
      k.ms += r.elapsedMs;
      kinds.set(kind, k);
    }
    return r;
  };
}

function mix(queries: number, distinctTails: number): string[] {
  const tails = Math.round(queries * 0.7);
  const tumbles = Math.round(queries * 0.15);
  const hops = Math.round(queries * 0.1);
  const globals = Math.max(queries - tails - tumbles - hops, 0);
  const out: string[] = [];
  for (let j = 0; j < tails; j++) out.push(`SELECT k, v, t FROM ${STREAM} WHERE k = 'k${j % distinctTails}'`);
  for (let j = 0; j < tumbles; j++)
    out.push(
      `SELECT window_end, count() AS c, max(v) AS m FROM tumble(${STREAM}, t, 1s) GROUP BY window_end`,
    );
  for (let j = 0; j < hops; j++)
    out.push(`SELECT window_end, count() AS c FROM hop(${STREAM}, t, 1s, 2s) GROUP BY window_end`);
  for (let j = 0; j < globals; j++)
    out.push(`SELECT k, count() AS c, sum(v) AS s FROM ${STREAM} GROUP BY k EMIT PERIODIC 1s`);
  return out;
}

export default async function main(args: string[]): Promise<void> {
  const queries = Number(option(args, 'queries', '100'));
  const rate = Number(option(args, 'rate', '20000'));
  const seconds = Number(option(args, 'seconds', '10'));
  const intervalMs = Number(option(args, 'interval-ms', '10'));
  const distinctTails = Number(option(args, 'distinct-tails', '10'));
  const dataDir = await mkdtemp(join(tmpdir(), 'tributary-bench-fanout-'));
  const trb = await Tributary.open(
    { ...DEFAULTS, dataDir, port: 0, host: '127.0.0.1', adminPassword: 'bench-password', logLevel: 'silent' },
    silentLogger(),
  );
  countQueryCalls(trb.services.engine);
  const abort = new AbortController();
  setMaxListeners(0, abort.signal);
  const runs: Promise<void>[] = [];
  try {
    await trb.services.streams.create(
      {
        name: STREAM,
        columns: [
          { name: 'k', type: 'string' },
          { name: 'v', type: 'float64' },
          { name: 't', type: 'datetime64(3)' },
        ],
      },
      SYSTEM_ACTOR,
    );
    console.log(
      `fanout bench: ${rate} rows/s offered for ${seconds} s (every ${intervalMs} ms), ${queries} queries, load average ${loadavg()[0]?.toFixed(1)}`,
    );
    const base = await offer(trb, rate, seconds, intervalMs);

    const plans: RowsPlan[] = [];
    const latencies: number[] = [];
    let delivered = 0;
    const user = { username: 'admin', role: 'admin' as const };
    for (const [i, sql] of mix(queries, distinctTails).entries()) {
      const plan = (await trb.services.planner.plan(sql, { user, type: 'streaming' })) as RowsPlan;
      plans.push(plan);
      const tail = sql.includes('WHERE k =');
      runs.push(
        plan
          .run(
            {
              rows: (rows) => {
                delivered += rows.length;
                if (!tail) return;
                const now = Date.now();
                // One row in 10 is enough for the percentiles.
                for (let r = i % 10; r < rows.length; r += 10) {
                  const row = JSON.parse(rows[r] as string) as [string, number, string];
                  latencies.push(now - row[1]);
                }
              },
            },
            abort.signal,
          )
          .catch((e: unknown) => {
            if (!abort.signal.aborted) console.error(`query ${i} failed: ${(e as Error).message}`);
          }),
      );
    }
    // Every query planned and running before the load starts.
    await new Promise((r) => setTimeout(r, 500));
    const withQueries = await offer(trb, rate, seconds, intervalMs);
    const lags = plans.flatMap((p) => (p.progress().sources ?? []).map((s) => s.committedSn - s.processedSn));
    const behind = lags.length > 0 ? `${Math.max(0, ...lags)} rows` : 'n/a (no lag metrics)';
    latencies.sort((a, b) => a - b);

    const f = (n: number) => String(Math.round(n)).padStart(8);
    console.log('case          | offered rows/s | acked rows/s | vs none | ack p50 | ack p99 | CPU (cores)');
    console.log(
      `no queries    | ${f(base.offered)}       | ${f(base.acked)}     |    100% | ${base.ackP50.toFixed(1).padStart(5)} ms | ${base.ackP99.toFixed(1).padStart(5)} ms | ${base.cpu.toFixed(2)}`,
    );
    console.log(
      `${String(queries).padStart(3)} queries   | ${f(withQueries.offered)}       | ${f(withQueries.acked)}     | ${String(Math.round((withQueries.acked / base.acked) * 100)).padStart(6)}% | ${withQueries.ackP50.toFixed(1).padStart(5)} ms | ${withQueries.ackP99.toFixed(1).padStart(5)} ms | ${withQueries.cpu.toFixed(2)}`,
    );
    console.log(
      `engine queries: ${Math.round(base.queryCalls)}/s (${Math.round(base.queryEngineMs)} engine ms/s) without queries, ${Math.round(withQueries.queryCalls)}/s (${Math.round(withQueries.queryEngineMs)} engine ms/s) with them`,
    );
    console.log(
      `tails: event-to-query p50 ${percentile(latencies, 50).toFixed(0)} ms, p99 ${percentile(latencies, 99).toFixed(0)} ms (${latencies.length} samples); rows delivered to all queries ${delivered}; slowest query behind by ${behind} when the load stopped`,
    );
    if (process.env.FANOUT_KINDS) {
      // Diagnostics: engine calls and engine ms per statement kind; step calls of one query per shape.
      for (const [k, v] of kinds) console.log(`${v.n} ${Math.round(v.ms)} ms: ${k}`);
      const mixed = mix(queries, distinctTails);
      for (const i of [0, 70, 85, 95])
        console.log(mixed[i], JSON.stringify((plans[i] as { stepCalls?(): unknown }).stepCalls?.()));
    }
    const shared = trb.services.sharedReads;
    if (shared)
      console.log(
        `shared reads: ${shared.reads} engine reads, ${shared.hits} steps served by another's read; ${shared.runs.joined} queries joined an identical running one`,
      );
  } finally {
    abort.abort();
    await Promise.allSettled(runs);
    await trb.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}
