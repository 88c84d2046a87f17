// Materialized views over one stream: input events/s with 1, 10 and 50 views (tail views
// `SELECT v, t FROM src` into implicit targets), the rate the views keep up with, and the lag from
// an input row committed to its output row committed (p50/p99), beside the raw ingest rate of the
// same machine in the same run (no views).
//   npm run bench -- mv [--views 1,10,50] [--seconds 5] [--batch 1000] [--writers 2] [--rate 0]
//     [--view-gap-ms 200]
//
// Method: writers send `batch`-row ingests back to back for `seconds`. Input commits are recorded
// (cumulative row count -> commit time) through the stream's committed-range notifications; every
// view's output commits are recorded the same way on its target. A tail view writes its input's
// rows in order, so output row k is input row k: the lag of an output commit is its time minus the
// commit time of the input row it ends with. "kept up" is the rows every view wrote divided by
// the time from the first input commit until the last view wrote its last row. Each run also
// prints the process CPU (cores) and how busy the main thread was; with MV_KINDS=1 the run's engine
// calls per kind (calls/s, engine-reported ms/s, wall ms/s incl. waiting for a session).
// With `--rate N` the writers send on a fixed schedule, N events/s in all (open loop), and the
// process CPU per input event is the cost to compare: on a shared machine it moves far less with
// the load than the closed loop's input rate (which is the writers' ingest latency).
// `--view-gap-ms` sets TRIBUTARY_VIEW_STEP_GAP_MS (views sharing a stream step together).

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SYSTEM_ACTOR } from '../src/catalog/audit.ts';
import { Tributary } from '../src/cli/tributary.ts';
import { DEFAULTS } from '../src/config/config.ts';
import { silentLogger } from '../src/log/logger.ts';
import { parseViewQuery } from '../src/views/view-store.ts';
import { option, percentile } from './bench-args.ts';
import { countEngineCalls } from './engine-call-kinds.ts';

interface RunResult {
  inputRows: number;
  inputPerSec: number;
  keptUpPerSec: number;
  lagP50: number;
  lagP99: number;
  drainedMs: number;
  /** Process CPU (user + system) over the run, in cores. */
  cpuCores: number;
  /** The main thread's event loop utilization over the run (0-1). */
  mainThread: number;
  /** Process CPU (user + system) over the run per input row, in µs (views' work included). */
  cpuPerRowUs: number;
}

async function drive(
  trb: Tributary,
  stream: string,
  seconds: number,
  batch: number,
  writers: number,
  rate = 0,
): Promise<{ rows: number; ms: number }> {
  const streams = trb.services.streams;
  let running = true;
  let rows = 0;
  let next = 0;
  const started = performance.now();
  // With a rate, each writer sends its batch on a fixed schedule (open loop) instead of back to back.
  const everyMs = rate > 0 ? (batch * writers * 1000) / rate : 0;
  const loops = Array.from({ length: writers }, async (_, w) => {
    let due = started + (everyMs * w) / writers;
    while (running) {
      if (everyMs > 0) {
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        due += everyMs;
        if (!running) break;
      }
      const data: unknown[][] = [];
      for (let i = 0; i < batch; i++) data.push([next++, Date.now()]);
      await streams.ingest('default', stream, { columns: ['v', 't'], rows: data });
      rows += batch;
    }
  });
  await new Promise((r) => setTimeout(r, seconds * 1000));
  running = false;
  await Promise.all(loops);
  return { rows, ms: performance.now() - started };
}

async function run(
  trb: Tributary,
  views: number,
  seconds: number,
  batch: number,
  writers: number,
  rate: number,
): Promise<RunResult> {
  const streams = trb.services.streams;
  const mvs = trb.services.mvs;
  const src = `src_${views}`;
  await streams.create(
    {
      name: src,
      columns: [
        { name: 'v', type: 'int64' },
        { name: 't', type: 'int64' },
      ],
    },
    SYSTEM_ACTOR,
  );
  const names = Array.from({ length: views }, (_, i) => `mv_${views}_${i}`);
  for (const name of names) {
    const text = `SELECT v, t FROM ${src}`;
    await mvs.create({ db: 'default', name, select: parseViewQuery(text) }, SYSTEM_ACTOR);
  }
  // Every view planned and running before the input starts.
  for (;;) {
    if (names.every((n) => mvs.state(mvs.require('default', n)).status === 'ExecutingPipeline')) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const inputCommits: Array<[number, number]> = []; // [cumulative rows, time]
  let inputCount = 0;
  const unsubs = [
    streams.subscribe('default', src, (r) => {
      inputCount += r.toSn - r.fromSn + 1;
      inputCommits.push([inputCount, performance.now()]);
    }),
  ];
  const lags: number[] = [];
  const outputCount = new Map<string, number>();
  let lastOutputAt = 0;
  const inputTimeOf = (row: number) => {
    // The first input commit whose cumulative count passes `row`.
    let lo = 0;
    let hi = inputCommits.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((inputCommits[mid] as [number, number])[0] > row) hi = mid;
      else lo = mid + 1;
    }
    return (inputCommits[lo] as [number, number])[1];
  };
  for (const name of names) {
    outputCount.set(name, 0);
    unsubs.push(
      streams.subscribe('default', name, (r) => {
        const now = performance.now();
        const c = (outputCount.get(name) ?? 0) + (r.toSn - r.fromSn + 1);
        outputCount.set(name, c);
        lags.push(now - inputTimeOf(c - 1));
        lastOutputAt = now;
      }),
    );
  }
  const firstAt = performance.now();
  const cpu0 = process.cpuUsage();
  const elu0 = performance.eventLoopUtilization();
  const input = await drive(trb, src, seconds, batch, writers, rate);
  // Let every view drain (bounded: a view that cannot keep up is reported as such).
  const deadline = performance.now() + 120_000;
  while (performance.now() < deadline && names.some((n) => (outputCount.get(n) ?? 0) < input.rows))
    await new Promise((r) => setTimeout(r, 50));
  const cpu = process.cpuUsage(cpu0);
  const elu = performance.eventLoopUtilization(elu0);
  for (const u of unsubs) u();
  const written = [...outputCount.values()].reduce((a, b) => a + b, 0);
  const drainedMs = lastOutputAt - firstAt;
  lags.sort((a, b) => a - b);
  for (const name of names) await mvs.drop('default', name);
  await streams.drop('default', src);
  return {
    inputRows: input.rows,
    inputPerSec: (input.rows / input.ms) * 1000,
    keptUpPerSec: (written / views / drainedMs) * 1000,
    lagP50: percentile(lags, 50),
    lagP99: percentile(lags, 99),
    drainedMs,
    cpuCores: (cpu.user + cpu.system) / 1000 / (performance.now() - firstAt),
    cpuPerRowUs: (cpu.user + cpu.system) / input.rows,
    mainThread: elu.utilization,
  };
}

async function rawIngest(trb: Tributary, seconds: number, batch: number, writers: number): Promise<number> {
  await trb.services.streams.create(
    {
      name: 'raw',
      columns: [
        { name: 'v', type: 'int64' },
        { name: 't', type: 'int64' },
      ],
    },
    SYSTEM_ACTOR,
  );
  const r = await drive(trb, 'raw', seconds, batch, writers);
  await trb.services.streams.drop('default', 'raw');
  return (r.rows / r.ms) * 1000;
}

export default async function main(args: string[]): Promise<void> {
  const counts = option(args, 'views', '1,10,50').split(',').map(Number);
  const seconds = Number(option(args, 'seconds', '5'));
  const batch = Number(option(args, 'batch', '1000'));
  const writers = Number(option(args, 'writers', '2'));
  const rate = Number(option(args, 'rate', '0'));
  const viewGapText = option(args, 'view-gap-ms', '');
  const viewGap = viewGapText === '' ? undefined : Number(viewGapText);
  const dataDir = await mkdtemp(join(tmpdir(), 'tributary-bench-mv-'));
  const trb = await Tributary.open(
    {
      ...DEFAULTS,
      ...(viewGap !== undefined ? { viewStepGapMs: viewGap } : {}),
      dataDir,
      port: 0,
      host: '127.0.0.1',
      adminPassword: 'bench-password',
      logLevel: 'silent',
    },
    silentLogger(),
  );
  try {
    const kinds = process.env.MV_KINDS ? countEngineCalls(trb.services.engine) : undefined;
    console.log(
      `mv bench: ${seconds} s of ${writers} writers x ${batch}-row ingests per run` +
        (rate > 0 ? `, ${rate} events/s in all` : ', back to back'),
    );
    const raw = await rawIngest(trb, seconds, batch, writers);
    console.log(`raw ingest (no views): ${Math.round(raw)} events/s`);
    console.log(
      'views | input events/s | kept up (events/s per view) | lag p50 | lag p99 | last output after | CPU cores | main thread busy | CPU µs per input event',
    );
    for (const n of counts) {
      kinds?.reset();
      const r = await run(trb, n, seconds, batch, writers, rate);
      console.log(
        `${String(n).padStart(5)} | ${String(Math.round(r.inputPerSec)).padStart(14)} | ${String(Math.round(r.keptUpPerSec)).padStart(27)} | ${r.lagP50.toFixed(0).padStart(5)} ms | ${r.lagP99.toFixed(0).padStart(5)} ms | ${(r.drainedMs / 1000).toFixed(1)} s | ${r.cpuCores.toFixed(2)} | ${(r.mainThread * 100).toFixed(0)}% | ${r.cpuPerRowUs.toFixed(1)}`,
      );
      // Diagnostics (MV_KINDS=1): the run's engine calls per kind, per second of the run.
      if (kinds) console.log(kinds.report(r.drainedMs / 1000));
    }
  } finally {
    await trb.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}
