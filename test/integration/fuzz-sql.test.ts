/**
 * SQL fuzzing from a fixed seed: statements of the conformance corpus, mutated (token deletion,
 * duplication, swaps and insertions, deep nesting, long operator chains, random bytes, huge
 * literals, unicode, truncation), go through /v1beta2/format and /v1beta2/sqlanalyze (in-process),
 * and a bounded subset through /v1beta2/exec and /v1beta2/queries against the real engine
 * (streaming queries are cancelled at once). No answer may be a 5xx and the server must stay up.
 *
 * TRIBUTARY_FUZZ_SCALE (default 1) multiplies the counts; `npm run fuzz` runs it larger.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ADMIN, authHeader, type Harness, startHarness } from '../helpers/harness.ts';
import { corpusStatements } from '../helpers/sql-corpus.ts';

const SCALE = Math.max(Number(process.env.TRIBUTARY_FUZZ_SCALE ?? 1) || 1, 0.01);
const TOOL_STATEMENTS = Math.round(20000 * SCALE);
const ENGINE_STATEMENTS = Math.round(1000 * SCALE);
const SEED = 0x7eb1a7;
/** The runner's 180 s per test, scaled with the work (a larger `npm run fuzz` run takes longer). */
const TIMEOUT = { timeout: Math.max(180000, 180000 * SCALE) };

/** mulberry32: a small deterministic PRNG. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const rand = prng(SEED);
const int = (n: number) => Math.floor(rand() * n);
const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)] as T;

const TOKEN =
  /'(?:[^'\\]|\\.)*'?|"(?:[^"\\]|\\.)*"?|`[^`]*`?|\d+(?:\.\d+)?(?:e[+-]?\d+)?|\w+|::|->|[<>!=]=|\|\||\s+|[^\s\w]/giu;
const INSERTS = [
  '(',
  ')',
  ',',
  ';',
  'NOT',
  'OR',
  'AND',
  'SELECT',
  'FROM',
  'WHERE',
  'GROUP BY',
  'EMIT',
  'SETTINGS',
  'table(',
  'tumble(',
  'file(',
  "'",
  '"',
  '`',
  '[',
  ']',
  '{',
  '}',
  '::',
  '->',
  '?',
  ':',
  '*',
  '-',
  '1e400',
  '0x',
  'NULL',
  'INTERVAL',
  '5s',
  'LIMIT',
  'JOIN',
  'UNION',
  'CAST(',
  ' AS ',
  'readonly = 0',
  '\u0000',
  '\u{1F600}',
  'é',
  '\\',
  '--',
  '/*',
  '$$',
];

function tokens(sql: string): string[] {
  return sql.match(TOKEN) ?? [sql];
}

/** One mutation of `sql`. */
function mutate(sql: string): string {
  const t = tokens(sql);
  const i = int(Math.max(t.length, 1));
  switch (int(12)) {
    case 0:
      t.splice(i, 1);
      return t.join('');
    case 1:
      t.splice(i, 0, t[i] ?? '');
      return t.join('');
    case 2: {
      const j = int(t.length);
      [t[i], t[j]] = [t[j] as string, t[i] as string];
      return t.join('');
    }
    case 3:
      t.splice(i, 0, ` ${pick(INSERTS)} `);
      return t.join('');
    case 4: {
      const depth = rand() < 0.1 ? 250 + int(400) : 1 + int(60);
      return sql.replace(/\bSELECT\b/i, `SELECT ${'('.repeat(depth)}1${')'.repeat(depth)} AS d, `);
    }
    case 5: {
      const n = rand() < 0.1 ? 1000 + int(4000) : 1 + int(200);
      const op = pick([' OR ', ' AND ', ' || ', ' + ', ' - ', ' * ']);
      const chain = Array.from({ length: n }, (_, k) => String(k)).join(op);
      return /\bWHERE\b/i.test(sql)
        ? sql.replace(/\bWHERE\b/i, `WHERE (${chain}) AND `)
        : `${sql} WHERE ${chain}`;
    }
    case 6: {
      const n = 1 + int(50);
      const bytes = Array.from({ length: n }, () => String.fromCharCode(int(0x3000)));
      t.splice(i, 0, bytes.join(''));
      return t.join('');
    }
    case 7:
      t.splice(
        i,
        0,
        pick([
          `'${'x'.repeat(100000)}'`,
          '9'.repeat(5000),
          `1e${int(100000)}`,
          `0x${'f'.repeat(200)}`,
          '1.'.repeat(50),
        ]),
      );
      return t.join('');
    case 8:
      return sql.replace(/\b[a-z_]\w*\b/i, pick(['ストリーム', 'ä\u0301', '\u{1F600}x', 'a\u200bb']));
    case 9:
      return sql.slice(0, int(sql.length + 1));
    case 10: {
      const n = 1 + int(400);
      return sql.replace(/\bSELECT\b/i, `SELECT ${'NOT '.repeat(n)}1 AS x, `);
    }
    default: {
      // Mostly shallow, now and then past the nesting limit (deep ones are slow to pretty-print).
      const n = rand() < 0.1 ? 250 + int(100) : 1 + int(30);
      return `SELECT * FROM ${'(SELECT * FROM '.repeat(n)}s${')'.repeat(n)}`;
    }
  }
}

function mutated(base: readonly string[], count: number): string[] {
  const out: string[] = [];
  for (let k = 0; k < count; k++) {
    let sql = pick(base);
    for (let m = 1 + int(3); m > 0; m--) sql = mutate(sql);
    out.push(sql.length ? sql : 'x');
  }
  return out;
}

let h: Harness;
let base = '';
const corpus = corpusStatements();

/** Statements over the stream the fuzz test creates, so engine-bound mutations reach the engine. */
const LOCAL = [
  'SELECT a, b FROM table(fz) WHERE a > 1 ORDER BY a LIMIT 5',
  'SELECT count(), max(a), b FROM table(fz) GROUP BY b',
  'SELECT window_start, count() FROM tumble(table(fz), t, 1s) GROUP BY window_start',
  "SELECT to_string(a) || b AS s, a + 1, if(a > 2, 'x', 'y') FROM table(fz) WHERE b IN ('x', 'y')",
  'SELECT * FROM fz WHERE a > 0',
  'SELECT a, lag(a) FROM fz',
  'SELECT count() FROM tumble(fz, t, 1s) GROUP BY window_start EMIT AFTER WATERMARK',
  'SELECT number, number * 2 FROM numbers(10) WHERE number % 2 = 0',
  'WITH x AS (SELECT a FROM table(fz)) SELECT sum(a) FROM x',
  "SELECT a FROM table(fz) SETTINGS max_threads = 1, seek_to = 'earliest'",
];

before(async () => {
  h = await startHarness();
  base = `${await h.trb.listen()}/default/api`;
  for (const sql of [
    'CREATE STREAM fz (a int64, b string, t datetime64(3))',
    "INSERT INTO fz (a, b, t) VALUES (1, 'x', '2024-01-01 00:00:00'), (2, 'y', '2024-01-01 00:00:01'), (3, 'z', '2024-01-01 00:00:02')",
  ]) {
    const r = await h.call('POST', '/v1beta2/exec', { body: { sql, type: 'ddl' } });
    assert.equal(r.statusCode, 204, r.body);
  }
});
after(async () => {
  await h.close();
});

function describe(sql: string): string {
  return sql.length > 300 ? `${sql.slice(0, 300)}... (${sql.length} chars)` : sql;
}

test(
  `${TOOL_STATEMENTS} mutated corpus statements: /format and /sqlanalyze never answer 5xx`,
  TIMEOUT,
  async () => {
    assert.ok(corpus.length > 1000, `corpus has only ${corpus.length} statements`);
    const failures: string[] = [];
    for (const sql of mutated(corpus, TOOL_STATEMENTS)) {
      for (const route of ['/v1beta2/format', '/v1beta2/sqlanalyze']) {
        // The analyzer describes valid SELECTs on the engine: keep that to the statements the
        // corpus's streams would not resolve anyway (most), which is what keeps this fast.
        const r = await h.call('POST', route, { body: { sql } });
        if (r.statusCode >= 500)
          failures.push(`${route} ${r.statusCode} ${r.body.slice(0, 200)}\n    ${describe(sql)}`);
      }
    }
    assert.deepEqual(failures.slice(0, 20), [], `${failures.length} 5xx answers`);
  },
);

test(
  `${ENGINE_STATEMENTS} mutated statements through /exec and /queries against the engine`,
  TIMEOUT,
  async () => {
    const failures: string[] = [];
    const statements = [
      ...mutated(LOCAL, Math.ceil(ENGINE_STATEMENTS / 2)),
      ...mutated(corpus, Math.floor(ENGINE_STATEMENTS / 2)),
    ];
    for (const sql of statements) {
      const e = await h.call('POST', '/v1beta2/exec', {
        body: { sql, type: 'historical', timeout_ms: 5000 },
      });
      if (e.statusCode >= 500)
        failures.push(`/exec ${e.statusCode} ${e.body.slice(0, 200)}\n    ${describe(sql)}`);
      // /queries over a real socket; a streaming query is cancelled as soon as it answers.
      const controller = new AbortController();
      try {
        const res = await fetch(`${base}/v1beta2/queries`, {
          method: 'POST',
          headers: { ...authHeader(ADMIN), 'content-type': 'application/json' },
          body: JSON.stringify({ sql }),
          signal: controller.signal,
        });
        if (res.status >= 500)
          failures.push(`/queries ${res.status} ${(await res.text()).slice(0, 200)}\n    ${describe(sql)}`);
        controller.abort();
      } catch (err) {
        if (!controller.signal.aborted)
          failures.push(`/queries failed: ${String(err)}\n    ${describe(sql)}`);
      }
    }
    assert.deepEqual(failures.slice(0, 20), [], `${failures.length} failures`);
    // The server is up and answers after all of it.
    const info = await h.call('GET', '/info');
    assert.equal(info.statusCode, 200, info.body);
    const ok = await h.call('POST', '/v1beta2/exec', {
      body: { sql: 'SELECT count() FROM table(fz)', type: 'historical' },
    });
    assert.deepEqual(ok.json().data, [[3]]);
  },
);
