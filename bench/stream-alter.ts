// How long ALTER STREAM (column commands) and RENAME STREAM keep a stream unavailable, as a client
// sees it, for a hybrid stream of 0 / 100k / 1M rows. While each statement runs, a writer sends
// 1-row ingests back to back (the largest ingest latency is the write pause) and a reader runs
// `SELECT count()` on the stream in a loop (the span from its first to its last failure is the
// read gap: the Buffer is dropped and created again). Baselines measured in the same run: the
// 1-row ingest latency with no DDL running (p50 and max), and the Buffer flush (`OPTIMIZE TABLE`).
//   npm run bench -- stream-alter [--rows 0,100000,1000000]

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Tributary } from '../src/cli/tributary.ts';
import { DEFAULTS } from '../src/config/config.ts';
import { silentLogger } from '../src/log/logger.ts';
import { option } from './bench-args.ts';

const ms = (v: number) => `${v.toFixed(1)} ms`;

interface Probe {
  stop(): Promise<{ maxIngestMs: number; ingests: number; readGapMs: number; readFailures: number }>;
}

function probe(trb: Tributary, stream: () => string): Probe {
  let running = true;
  let maxIngestMs = 0;
  let ingests = 0;
  let firstFail = 0;
  let lastFail = 0;
  let readFailures = 0;
  const writer = (async () => {
    while (running) {
      const t = performance.now();
      try {
        await trb.services.streams.ingest('default', stream(), { columns: ['a'], rows: [[1]] });
      } catch {
        // renamed: the old name is gone (yield, or this loop starves the event loop)
        await new Promise((r) => setImmediate(r));
      }
      maxIngestMs = Math.max(maxIngestMs, performance.now() - t);
      ingests++;
    }
  })();
  const reader = (async () => {
    while (running) {
      try {
        await trb.services.engine.query(`SELECT count() FROM default.\`${stream()}\``);
      } catch {
        const now = performance.now();
        if (!firstFail) firstFail = now;
        lastFail = now;
        readFailures++;
      }
      await new Promise((r) => setImmediate(r));
    }
  })();
  return {
    async stop() {
      running = false;
      await Promise.all([writer, reader]);
      return { maxIngestMs, ingests, readGapMs: firstFail ? lastFail - firstFail : 0, readFailures };
    },
  };
}

export default async function main(args: string[]): Promise<void> {
  const sizes = option(args, 'rows', '0,100000,1000000').split(',').map(Number);
  const dataDir = await mkdtemp(join(tmpdir(), 'tributary-bench-alter-'));
  const trb = await Tributary.open(
    { ...DEFAULTS, dataDir, port: 0, host: '127.0.0.1', adminPassword: 'bench-password', logLevel: 'silent' },
    silentLogger(),
  );
  const sql = async (text: string) => {
    const r = await trb.api.inject({
      method: 'POST',
      url: '/default/api/v1beta2/queries',
      headers: {
        authorization: `Basic ${Buffer.from('admin:bench-password').toString('base64')}`,
        'content-type': 'application/json',
      },
      payload: JSON.stringify({ sql: text }),
    });
    if (r.statusCode !== 204) throw new Error(`${text}: ${r.statusCode} ${r.body}`);
  };
  const rows: string[] = [];
  try {
    for (const n of sizes) {
      let name = `alter_${n}`;
      await sql(`CREATE STREAM ${name} (a int64, b string, c float64)`);
      for (let done = 0; done < n; done += 100_000) {
        const k = Math.min(100_000, n - done);
        const data = Array.from({ length: k }, (_, i) => [done + i, `row ${done + i}`, i / 3]);
        await trb.services.streams.ingest('default', name, { columns: ['a', 'b', 'c'], rows: data });
      }
      // Baselines: 1-row ingests with nothing else running; a Buffer flush.
      const lat: number[] = [];
      for (let i = 0; i < 50; i++) {
        const t = performance.now();
        await trb.services.streams.ingest('default', name, { columns: ['a'], rows: [[1]] });
        lat.push(performance.now() - t);
      }
      lat.sort((x, y) => x - y);
      await trb.services.streams.ingest('default', name, { columns: ['a'], rows: [[1]] });
      let t = performance.now();
      await trb.services.engine.query(`OPTIMIZE TABLE default.${name}`);
      const flush = performance.now() - t;
      rows.push(
        `| ${n.toLocaleString('en')} | baseline: 1-row ingest p50 / max, no DDL | ${ms(lat[25] as number)} / ${ms(lat.at(-1) as number)} | - | - |`,
        `| ${n.toLocaleString('en')} | baseline: Buffer flush (OPTIMIZE TABLE) | ${ms(flush)} | - | - |`,
      );
      const cases: Array<[string, string, string?]> = [
        ['ADD COLUMN d int64 DEFAULT a * 2', `ALTER STREAM ${name} ADD COLUMN d int64 DEFAULT a * 2`],
        ['RENAME COLUMN b TO b2', `ALTER STREAM ${name} RENAME COLUMN b TO b2`],
        ['MODIFY COLUMN c string (rewrites c)', `ALTER STREAM ${name} MODIFY COLUMN c string`],
        ['DROP COLUMN b2', `ALTER STREAM ${name} DROP COLUMN b2`],
        ["COMMENT COLUMN a '...'", `ALTER STREAM ${name} COMMENT COLUMN a 'the key'`],
        ['RENAME STREAM', `RENAME STREAM ${name} TO ${name}_r`, `${name}_r`],
      ];
      for (const [label, statement, renamed] of cases) {
        const p = probe(trb, () => name);
        await new Promise((r) => setTimeout(r, 50));
        t = performance.now();
        await sql(statement);
        const total = performance.now() - t;
        if (renamed) name = renamed;
        await new Promise((r) => setTimeout(r, 50));
        const o = await p.stop();
        rows.push(
          `| ${n.toLocaleString('en')} | ${label} | ${ms(total)} | ${ms(o.maxIngestMs)} | ${o.readFailures ? ms(o.readGapMs) : 'none'} |`,
        );
      }
    }
  } finally {
    await trb.close();
    await rm(dataDir, { recursive: true, force: true });
  }
  console.log(
    '| rows in stream | statement | statement time | largest 1-row ingest latency during it | read gap |',
  );
  console.log('|---:|---|---:|---:|---:|');
  for (const r of rows) console.log(r);
}
