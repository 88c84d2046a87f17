// Retracting aggregations: the cost of one emit over the state of a retracting aggregation
// (retracting-input.ts), for live rows repeated in few tuples and for distinct tuples, with the
// tuples repeated by their net count (any retractable aggregate) and read once with their weight
// (count forms, min, max, ... only). The engine's aggregation of the same live rows as a plain
// table is printed beside them.
//   npm run bench -- retract [--rows 1000000] [--rounds 5]

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChdbEngine } from '../src/engine/chdb-engine.ts';
import type { SelectQuery } from '../src/sql/ast/query.ts';
import { parseQuery } from '../src/sql/parser/parse.ts';
import { splitAggregation } from '../src/streaming/aggregate-split.ts';
import { retractNetRows } from '../src/streaming/retracting-input.ts';
import { option } from './bench-args.ts';

export default async function main(args: string[]): Promise<void> {
  const rows = Number(option(args, 'rows', '1000000'));
  const rounds = Number(option(args, 'rounds', '5'));
  const dataDir = await mkdtemp(join(tmpdir(), 'trb-bench-retract-'));
  const engine = new ChdbEngine({ dataPath: dataDir, sessions: { system: 1, user: 1 } });
  const split = (sql: string) =>
    splitAggregation(parseQuery(sql) as SelectQuery, { window: false, retract: 'bench' });
  // The same aggregates, replicated (sum forces it) and weighted.
  const replicated = split('SELECT count(), min(v), max(v), sum(v) FROM s');
  const weighted = split('SELECT count(), min(v), max(v) FROM s');
  const time = async (sql: string) => {
    await engine.query(sql);
    const t = process.hrtime.bigint();
    for (let r = 0; r < rounds; r++) await engine.query(sql);
    return Number(process.hrtime.bigint() - t) / 1e6 / rounds;
  };
  try {
    console.log(`| live rows | distinct tuples | repeated tuples | weighted tuples | plain table |`);
    console.log(`|---:|---:|---:|---:|---:|`);
    for (const distinct of [100, rows / 10, rows]) {
      await engine.query('DROP TABLE IF EXISTS bench_state');
      await engine.query('DROP TABLE IF EXISTS bench_plain');
      // The compacted state: one row per tuple with its net count.
      await engine.query(
        `CREATE TABLE bench_state ENGINE = Memory AS SELECT toInt32(number) AS __x0, toInt64(${rows / distinct}) AS __d, toUInt64(1) AS __batch FROM numbers(${distinct})`,
      );
      await engine.query(
        `CREATE TABLE bench_plain ENGINE = Memory AS SELECT toInt32(number % ${distinct}) AS v FROM numbers(${rows})`,
      );
      const rep = await time(
        `SELECT count(), min(__x0), max(__x0), sum(__x0) FROM ${retractNetRows(replicated, 'bench_state', '1')}`,
      );
      const wei = await time(
        `SELECT toUInt64(sum(__n)), min(__x0), max(__x0) FROM ${retractNetRows(weighted, 'bench_state', '1')}`,
      );
      const plain = await time('SELECT count(), min(v), max(v), sum(v) FROM bench_plain');
      console.log(
        `| ${rows} | ${distinct} | ${rep.toFixed(1)} ms | ${wei.toFixed(1)} ms | ${plain.toFixed(1)} ms |`,
      );
    }
  } finally {
    await engine.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}
