// User-defined functions: rows/s through a scalar JavaScript UDF and through a JavaScript aggregate
// in a tumble window, each beside the same logic written as built-in SQL, in the same run and the
// same server (in-process Tributary, over its HTTP API).
//   npm run bench -- udf [--rows 1000000] [--rounds 3] [--windows 20] [--window-rows 20000]
//     [--group-rows 10000,100000,1000000]
//
// - scalar: a historical `SELECT sum(f(x)) FROM numbers(rows)`, f = `x + 5` in JavaScript
//   (add_five: the function gets a batch's column and returns the array) vs `x + 5` in SQL;
// - aggregate: a streaming `SELECT window_start, second_largest(v) FROM tumble(s, ts, 1s) GROUP BY
//   window_start` vs `array_reverse_sort(group_uniq_array(v))[2]`; `windows` batches of
//   `window-rows` rows, one 1-second window each, ingested one after the other; a last row closes
//   the last window. Rate = rows ingested / time from the first ingest to the last window emitted.
// - group growth: what one emit of a JavaScript aggregate costs for a group of n rows (a historical
//   `SELECT second_largest(v) FROM numbers(n)`, the call an emit makes over a group's kept values)
//   beside the SQL form, and the bytes of the state the engine keeps for that group, for each n of
//   `--group-rows` (default 10000,100000,1000000).

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Tributary } from '../src/cli/tributary.ts';
import { DEFAULTS } from '../src/config/config.ts';
import { silentLogger } from '../src/log/logger.ts';
import { option } from './bench-args.ts';

const PASSWORD = 'bench-password';
const AUTH = `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`;

const ADD_FIVE = `CREATE FUNCTION bench_add_five(x float64) RETURNS float64 LANGUAGE JAVASCRIPT AS $$
  function bench_add_five(x) { const out = new Array(x.length); for (let i = 0; i < x.length; i++) out[i] = x[i] + 5; return out; }
$$`;
const SECOND_LARGEST = `CREATE AGGREGATE FUNCTION bench_second_largest(v float64) RETURNS float64 LANGUAGE JAVASCRIPT AS $$
{
  initialize: function () { this.max = -Infinity; this.sec = -Infinity; },
  process: function (values) {
    for (let i = 0; i < values.length; i++) {
      const x = values[i];
      if (x > this.max) { this.sec = this.max; this.max = x; } else if (x < this.max && x > this.sec) this.sec = x;
    }
  },
  finalize: function () { return this.sec; }
}
$$`;

/** The same aggregate keeping its state serialized (serialize/deserialize: src/udf/uda-state.ts). */
const SECOND_LARGEST_SERIALIZED = SECOND_LARGEST.replace(
  'bench_second_largest',
  'bench_second_largest_s',
).replace(
  '  finalize: function () { return this.sec; }',
  `  finalize: function () { return this.sec; },
  serialize: function () { return JSON.stringify([this.max, this.sec]); },
  deserialize: function (s) { const a = JSON.parse(s); this.max = a[0]; this.sec = a[1]; }`,
);

class Client {
  constructor(private readonly base: string) {}

  post(path: string, body: unknown, signal?: AbortSignal): Promise<Response> {
    return fetch(`${this.base}${path}`, {
      method: 'POST',
      headers: { authorization: AUTH, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      ...(signal ? { signal } : {}),
    });
  }

  async exec(sql: string): Promise<void> {
    const r = await this.post('/v1beta2/queries', { sql });
    if (r.status !== 204) throw new Error(`${sql} -> ${r.status} ${await r.text()}`);
  }

  /** A historical query's rows (it fails loudly on a failed query). */
  async rows(sql: string): Promise<unknown[][]> {
    const r = await this.post('/v1beta2/queries', { sql });
    const text = await r.text();
    if (!r.ok) throw new Error(`${sql} -> ${r.status} ${text}`);
    const out: unknown[][] = [];
    for (const block of text.split('\n\n')) {
      const data = block.split('\n').find((l) => l.startsWith('data: '));
      if (!data) continue;
      if (block.startsWith('event: query')) {
        const q = JSON.parse(data.slice(6)) as { status: string; message?: string };
        if (q.status === 'failed') throw new Error(`${sql} failed: ${q.message}`);
      } else if (!block.startsWith('event:')) out.push(...(JSON.parse(data.slice(6)) as unknown[][]));
    }
    return out;
  }

  async ingest(stream: string, columns: string[], data: unknown[][]): Promise<void> {
    const r = await this.post(`/v1beta2/streams/${stream}/ingest`, { columns, data });
    if (r.status !== 200) throw new Error(`ingest -> ${r.status} ${await r.text()}`);
  }

  /** Start a streaming query; `onRows` gets each data event's rows. Abort `signal` to cancel it. */
  async stream(sql: string, onRows: (rows: unknown[][]) => void, signal: AbortSignal): Promise<void> {
    const r = await this.post('/v1beta2/queries', { sql }, signal);
    if (!r.ok || !r.body) throw new Error(`${sql} -> ${r.status} ${await r.text()}`);
    const reader = r.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    let started!: () => void;
    const running = new Promise<void>((res) => {
      started = res;
    });
    void (async () => {
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return;
          buffer += decoder.decode(value, { stream: true });
          let end = buffer.indexOf('\n\n');
          while (end >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const data = block.split('\n').find((l) => l.startsWith('data: '));
            if (block.startsWith('event: query')) started();
            else if (data && !block.startsWith('event:')) onRows(JSON.parse(data.slice(6)) as unknown[][]);
            end = buffer.indexOf('\n\n');
          }
        }
      } catch {
        // canceled
      }
    })();
    await running;
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

async function timeQuery(c: Client, sql: string, rounds: number): Promise<{ ms: number; result: unknown }> {
  let result: unknown;
  result = await c.rows(sql); // warm-up (starts the function's process)
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t = performance.now();
    result = await c.rows(sql);
    times.push(performance.now() - t);
  }
  return { ms: median(times), result };
}

async function tumble(
  c: Client,
  name: string,
  aggregate: string,
  windows: number,
  windowRows: number,
): Promise<{ ms: number; emitted: unknown[][] }> {
  await c.exec(`CREATE STREAM ${name} (v float64, ts datetime64(3, 'UTC')) SETTINGS event_time_column='ts'`);
  const emitted: unknown[][] = [];
  let wake: (() => void) | undefined;
  const abort = new AbortController();
  await c.stream(
    `SELECT window_start, ${aggregate} AS sec FROM tumble(${name}, ts, 1s) GROUP BY window_start`,
    (rows) => {
      emitted.push(...rows);
      wake?.();
    },
    abort.signal,
  );
  const t0 = Date.parse('2024-01-01T00:00:00Z');
  const stamp = (ms: number) => new Date(ms).toISOString().replace('T', ' ').slice(0, 23);
  const batches = Array.from({ length: windows }, (_, w) =>
    Array.from({ length: windowRows }, (_, i) => [
      (i * 7919) % windowRows,
      stamp(t0 + w * 1000 + (i % 1000)),
    ]),
  );
  const start = performance.now();
  for (const b of batches) await c.ingest(name, ['v', 'ts'], b);
  await c.ingest(name, ['v', 'ts'], [[0, stamp(t0 + windows * 1000 + 500)]]);
  while (emitted.length < windows) {
    await new Promise<void>((res) => {
      wake = res;
      setTimeout(res, 50);
    });
  }
  const ms = performance.now() - start;
  abort.abort();
  return { ms, emitted };
}

export default async function main(args: string[]): Promise<void> {
  const rows = Number(option(args, 'rows', '1000000'));
  const rounds = Number(option(args, 'rounds', '3'));
  const windows = Number(option(args, 'windows', '20'));
  const windowRows = Number(option(args, 'window-rows', '20000'));
  const groupRows = option(args, 'group-rows', '10000,100000,1000000').split(',').map(Number);
  const dataDir = await mkdtemp(join(tmpdir(), 'tributary-bench-udf-'));
  const trb = await Tributary.open(
    { ...DEFAULTS, dataDir, port: 0, host: '127.0.0.1', adminPassword: PASSWORD, logLevel: 'silent' },
    silentLogger(),
  );
  try {
    const c = new Client(`${await trb.listen()}/default/api`);
    await c.exec(ADD_FIVE);
    await c.exec(SECOND_LARGEST);
    await c.exec(SECOND_LARGEST_SERIALIZED);
    const rate = (n: number, ms: number) => Math.round((n / ms) * 1000).toLocaleString('en-US');

    const js = await timeQuery(
      c,
      `SELECT sum(bench_add_five(to_float64(number))) FROM numbers(${rows})`,
      rounds,
    );
    const sql = await timeQuery(c, `SELECT sum(to_float64(number) + 5) FROM numbers(${rows})`, rounds);
    if (JSON.stringify(js.result) !== JSON.stringify(sql.result))
      throw new Error(`scalar results differ: ${JSON.stringify(js.result)} vs ${JSON.stringify(sql.result)}`);
    console.log(
      `udf bench: scalar over ${rows} rows (median of ${rounds}); tumble over ${windows} x ${windowRows} rows`,
    );
    console.log('| case | time | rows/s |');
    console.log('|---|---:|---:|');
    console.log(`| scalar, JavaScript UDF \`x + 5\` | ${js.ms.toFixed(0)} ms | ${rate(rows, js.ms)} |`);
    console.log(`| scalar, built-in SQL \`x + 5\` | ${sql.ms.toFixed(0)} ms | ${rate(rows, sql.ms)} |`);

    const total = windows * windowRows + 1;
    const jsAgg = await tumble(c, 'bench_js', 'bench_second_largest(v)', windows, windowRows);
    const sqlAgg = await tumble(
      c,
      'bench_sql',
      'array_reverse_sort(group_uniq_array(v))[2]',
      windows,
      windowRows,
    );
    const key = (r: unknown[][]) =>
      JSON.stringify([...r].sort((a, b) => String(a[0]).localeCompare(String(b[0]))));
    if (key(jsAgg.emitted) !== key(sqlAgg.emitted)) throw new Error('tumble results differ');
    console.log(
      `| tumble 1s, JavaScript aggregate second_largest | ${jsAgg.ms.toFixed(0)} ms | ${rate(total, jsAgg.ms)} |`,
    );
    console.log(
      `| tumble 1s, built-in SQL \`array_reverse_sort(group_uniq_array(v))[2]\` | ${sqlAgg.ms.toFixed(0)} ms | ${rate(total, sqlAgg.ms)} |`,
    );

    // What an emit pays per group as the group grows (global aggregations keep every row).
    console.log('');
    console.log(
      '| group rows | JavaScript aggregate emit over the kept values | the same from a serialized state | built-in SQL | values kept (bytes) | serialized state (bytes) |',
    );
    console.log('|---:|---:|---:|---:|---:|---:|');
    for (const n of groupRows) {
      const from = `(SELECT to_float64(number) AS v FROM numbers(${n}))`;
      const jsEmit = await timeQuery(c, `SELECT bench_second_largest(v) FROM ${from}`, rounds);
      const sqlEmit = await timeQuery(
        c,
        `SELECT array_reverse_sort(group_uniq_array(v))[2] FROM ${from}`,
        rounds,
      );
      if (JSON.stringify(jsEmit.result) !== JSON.stringify(sqlEmit.result))
        throw new Error(
          `group results differ: ${JSON.stringify(jsEmit.result)} vs ${JSON.stringify(sqlEmit.result)}`,
        );
      const [[bytes]] = (await c.rows(`SELECT byte_size(group_array(v)) FROM ${from}`)) as [[number]];
      // what compaction leaves (the fold function over the values), and an emit from it
      const [[state]] = (await c.rows(
        `SELECT __trb_udafold_bench_second_largest_s(group_array(v), empty_array_int8(), []) FROM ${from}`,
      )) as [[string]];
      const quoted = `'${state.replace(/'/g, "''")}'`;
      const fromState = await timeQuery(
        c,
        `SELECT __trb_uda_bench_second_largest_s(array_slice([to_float64(0)], 1, 0), empty_array_int8(), [${quoted}])`,
        rounds,
      );
      if (JSON.stringify(fromState.result) !== JSON.stringify(jsEmit.result))
        throw new Error(
          `serialized results differ: ${JSON.stringify(fromState.result)} vs ${JSON.stringify(jsEmit.result)}`,
        );
      console.log(
        `| ${n.toLocaleString('en-US')} | ${jsEmit.ms.toFixed(0)} ms | ${fromState.ms.toFixed(0)} ms | ${sqlEmit.ms.toFixed(0)} ms | ${Number(bytes).toLocaleString('en-US')} | ${state.length} |`,
      );
    }
  } finally {
    await trb.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}
