// Durable executions (src/streaming/durability.ts): what a checkpoint save costs, and what the
// journal costs per step.
//   npm run bench -- checkpoint [--groups 1000,100000] [--steps 400] [--rows 100]
//
// Tributary runs in-process on a temporary data directory.
// - save: a state table of N groups (`sum`, `count`, `max` states of a GROUP BY over `numbers(N)`)
//   is saved 5 times by FileCheckpointStore (table copy into _tributary_checkpoints, atomic JSON,
//   drop of the previous copy, journal truncate); the median and the worst wall time are printed.
// - steps: a stream holds `steps` commits of `rows` rows each; a tail query
//   (`SELECT id, v * 2 FROM s WHERE v % 3 != 0`) reads them one commit per step (the next commit is
//   revealed as the step's read ends, so steps follow each other without waiting), once without
//   durability and once durable (each step journaled and fdatasync'd; checkpoint interval 1 hour,
//   so no save in between). Printed: steps/s and rows/s of each run and the cost per step.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Tributary } from '../src/cli/tributary.ts';
import { DEFAULTS } from '../src/config/config.ts';
import { silentLogger } from '../src/log/logger.ts';
import { FileCheckpointStore } from '../src/streaming/checkpoint/file-checkpoint-store.ts';
import type { CommittedRanges } from '../src/streaming/source-cursor.ts';
import { storeRanges } from '../src/streaming/store-ranges.ts';
import { StreamingExecution } from '../src/streaming/streaming-execution.ts';
import { option } from './bench-args.ts';

const USER = { username: 'admin', role: 'admin' as const };

/** Reveals the next boundary each time a step's read of the stream ends. */
class SteppingRanges implements CommittedRanges {
  private at = 0;
  private listener: ((sn: number) => void) | undefined;
  constructor(
    private readonly real: CommittedRanges,
    private readonly boundaries: readonly number[],
  ) {}
  committedSn(): number {
    return this.boundaries[0] ?? -1;
  }
  subscribe(_k: string, l: (sn: number) => void): () => void {
    this.listener = l;
    return () => {
      this.listener = undefined;
    };
  }
  async read<T>(keys: readonly string[], work: () => Promise<T>): Promise<T> {
    const r = await this.real.read(keys, work);
    if (this.at + 1 < this.boundaries.length) this.listener?.(this.boundaries[++this.at]!);
    return r;
  }
  resolveReads(sql: string): string {
    return this.real.resolveReads(sql);
  }
  get done(): boolean {
    return this.at + 1 >= this.boundaries.length;
  }
}

export default async function main(args: string[]): Promise<void> {
  const groups = option(args, 'groups', '1000,100000').split(',').map(Number);
  const steps = Number(option(args, 'steps', '400'));
  const rows = Number(option(args, 'rows', '100'));
  const dataDir = await mkdtemp(join(tmpdir(), 'tributary-bench-ckpt-'));
  const trb = await Tributary.open(
    { ...DEFAULTS, dataDir, port: 0, host: '127.0.0.1', adminPassword: 'bench-password', logLevel: 'silent' },
    silentLogger(),
  );
  const s = trb.services;
  const run = async (sql: string) => {
    const plan = await s.planner.plan(sql, { user: USER });
    if (plan.kind === 'statement') await plan.run(new AbortController().signal);
  };
  try {
    await s.engine.query('CREATE DATABASE IF NOT EXISTS bench');
    for (const n of groups) {
      await s.engine.query('DROP TABLE IF EXISTS bench.state');
      await s.engine.query(
        `CREATE TABLE bench.state ENGINE = Memory AS SELECT toString(number) AS k, sumState(number) AS s, ` +
          `countState() AS c, maxState(toString(number)) AS m FROM numbers(${n}) GROUP BY k`,
      );
      const store = new FileCheckpointStore(s.engine, dataDir, `bench-${n}`);
      const times: number[] = [];
      for (let i = 0; i < 5; i++) {
        const t0 = performance.now();
        await store.save({
          seq: i,
          processedSn: {},
          processedTime: 0,
          savedAt: Date.now(),
          state: { i },
          tables: { state: 'bench.state' },
        });
        times.push(performance.now() - t0);
      }
      await store.destroy();
      times.sort((a, b) => a - b);
      console.log(
        `save, ${n} groups: median ${times[2]!.toFixed(1)} ms, worst ${times[4]!.toFixed(1)} ms (5 saves)`,
      );
    }

    await run('CREATE STREAM bs (id string, v int32)');
    const boundaries: number[] = [];
    for (let b = 0; b < steps; b++) {
      const values = Array.from({ length: rows }, (_, i) => `('r${b}_${i}', ${b * rows + i})`).join(', ');
      await run(`INSERT INTO bs (id, v) VALUES ${values}`);
      boundaries.push(s.streams.committedSn('default', 'bs'));
    }
    const start = boundaries[0]! - rows;
    const measure = async (durable: boolean) => {
      const planned = await s.planner.plan('SELECT id, v * 2 FROM bs WHERE v % 3 != 0', {
        user: USER,
        type: 'streaming',
      });
      if (!(planned instanceof StreamingExecution)) throw new Error('not streaming');
      const ranges = new SteppingRanges(storeRanges(s.streams), boundaries);
      const program = { ...planned.program, startAfter: [start] };
      const execution = new StreamingExecution(s.engine, ranges, program, planned.analysis, ['default.bs']);
      const controller = new AbortController();
      let out = 0;
      const store = new FileCheckpointStore(s.engine, dataDir, `bench-tail-${durable}`);
      const t0 = performance.now();
      await execution.run(
        {
          rows: (r) => {
            out += r.length;
            if (ranges.done) controller.abort();
          },
        },
        controller.signal,
        durable ? { store, checkpointIntervalMs: 3_600_000 } : undefined,
      );
      const ms = performance.now() - t0;
      await store.destroy();
      return { ms, out };
    };
    await measure(false); // warm-up
    const plain = await measure(false);
    const durable = await measure(true);
    const line = (name: string, r: { ms: number }) =>
      `${name}: ${steps} steps in ${r.ms.toFixed(0)} ms, ${((steps * 1000) / r.ms).toFixed(0)} steps/s, ` +
      `${((steps * rows * 1000) / r.ms).toFixed(0)} events/s, ${(r.ms / steps).toFixed(2)} ms/step`;
    console.log(line('tail, not durable', plain));
    console.log(line('tail, durable', durable));
    console.log(`journal cost: ${((durable.ms - plain.ms) / steps).toFixed(2)} ms per step`);
  } finally {
    await trb.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}
