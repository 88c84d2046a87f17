// SQL front end: parse + translate time per statement over the Proton smoke corpus (every
// python-client `query` of the suite's JSON and YAML files), printed next to the baseline measured
// in the same run: the engine's own formatQuery() on the translated SQL (its parser + formatter),
// both as engine-reported time per statement in one batched call and as wall time per call.
//   npm run bench -- sql [--corpus <dir>] [--rounds 5] [--calls 300]

import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ChdbEngine } from '../src/engine/chdb-engine.ts';
import { quoteString } from '../src/engine/settings-clause.ts';
import { parseStatement } from '../src/sql/parser/parse.ts';
import type { TableResolver } from '../src/sql/translator/resolver.ts';
import { translate } from '../src/sql/translator/translate.ts';
import { option } from './bench-args.ts';

function corpus(dir: string): string[] {
  const out = new Set<string>();
  for (const file of readdirSync(dir).sort()) {
    const text = readFileSync(join(dir, file), 'utf8');
    const doc = file.endsWith('.json')
      ? JSON.parse(text)
      : file.endsWith('.yaml')
        ? parseYaml(text)
        : undefined;
    const visit = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(visit);
      else if (v && typeof v === 'object') {
        const o = v as Record<string, unknown>;
        if (o.client === 'python' && typeof o.query === 'string') out.add(o.query);
        Object.values(o).forEach(visit);
      }
    };
    visit(doc);
  }
  return [...out];
}

/** Every name is a stream stored under its own name; functions unknown to the map are UDFs. */
const resolver: TableResolver = {
  resolve: (db, name) => ({ kind: 'stream', engineSql: `\`${db ?? 'default'}\`.\`${name}\`` }),
  resolveFunction: (name) => ({ clickhouse: name }),
};

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length - 1) * p))] ?? 0;
}

const us = (ms: number) => `${(ms * 1000).toFixed(1)} µs`;

export default async function main(args: string[]): Promise<void> {
  const dir = option(args, 'corpus', '/work/shared/conformance/proton-smoke');
  const rounds = Number(option(args, 'rounds', '5'));
  const calls = Number(option(args, 'calls', '300'));
  const all = corpus(dir);

  // Which statements parse, and which translate (streaming-only ones have no engine form).
  const translated: { proton: string; engine: string }[] = [];
  let parsed = 0;
  for (const proton of all) {
    try {
      parseStatement(proton);
      parsed++;
      translated.push({ proton, engine: translate(proton, { resolver }) });
    } catch {
      // DDL and streaming-only statements: parsed (or not) but not translated
    }
  }

  // Warm up the JIT, then time parse-only and parse+translate per statement.
  for (const { proton } of translated) translate(proton, { resolver });
  const parseTimes: number[] = [];
  const translateTimes: number[] = [];
  for (let r = 0; r < rounds; r++) {
    for (const { proton } of translated) {
      const t0 = performance.now();
      const ast = parseStatement(proton);
      const t1 = performance.now();
      translate(ast, { resolver });
      const t2 = performance.now();
      parseTimes.push(t1 - t0);
      translateTimes.push(t2 - t1);
    }
  }
  const both = parseTimes.map((p, i) => p + (translateTimes[i] as number)).sort((a, b) => a - b);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

  // Baseline: the engine's formatQuery on the translated SQL.
  const dataDir = await mkdtemp(join(tmpdir(), 'tributary-bench-sql-'));
  const engine = new ChdbEngine({ dataPath: dataDir, sessions: { system: 1, user: 1 } });
  try {
    const literals = translated.map((t) => quoteString(t.engine)).join(', ');
    const batchSql = `SELECT sum(length(formatQuery(q))) FROM (SELECT arrayJoin([${literals}]) AS q)`;
    await engine.query(batchSql);
    const batch: number[] = [];
    for (let r = 0; r < rounds; r++) batch.push((await engine.query(batchSql)).elapsedMs / translated.length);
    const perCall: number[] = [];
    const sample = translated.slice(0, Math.min(calls, translated.length));
    for (const t of sample) {
      const t0 = performance.now();
      await engine.query(`SELECT formatQuery(${quoteString(t.engine)})`);
      perCall.push(performance.now() - t0);
    }
    perCall.sort((a, b) => a - b);

    console.log(`SQL front end over ${dir}`);
    console.log(
      `  statements: ${all.length} distinct, ${parsed} parse, ${translated.length} translate to engine SQL (the rest are DDL or streaming-only)`,
    );
    console.log(`  rounds: ${rounds}; per statement:`);
    console.log(`    parse                         mean ${us(mean(parseTimes))}`);
    console.log(`    translate (AST -> engine SQL) mean ${us(mean(translateTimes))}`);
    console.log(
      `    parse + translate             mean ${us(mean(both))}  p50 ${us(percentile(both, 0.5))}  p99 ${us(percentile(both, 0.99))}`,
    );
    console.log(`  baseline, same statements, engine formatQuery() of the translated SQL:`);
    console.log(`    engine-reported, batched      mean ${us(mean(batch))}`);
    console.log(
      `    one engine call each (${sample.length}) mean ${us(mean(perCall))}  p50 ${us(percentile(perCall, 0.5))}  p99 ${us(percentile(perCall, 0.99))}`,
    );
  } finally {
    await engine.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}
