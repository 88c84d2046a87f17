/**
 * The kept state of joins with changelog inputs (join-side-state.ts): each side read as its state
 * lives in an engine table that each step's new rows update and that is compacted now and then,
 * so a step reads the state, not the side's history; a checkpointed run rebuilds the tables from
 * the streams when it is restored. Expected rows are computed by hand from the join's rules
 * (streaming-join-changelog.test.ts describes them).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { assertSameRows, type Row, StreamingApi } from '../helpers/streaming-client.ts';

let api: StreamingApi;
before(async () => {
  api = await StreamingApi.open();
});
after(async () => {
  await api.close();
});

/** Rows now in the kept tables of joins (`_tributary_state.j_*`, `k_*`). */
async function keptRows(): Promise<number> {
  const q = await api.start(
    "SELECT sum(total_rows) FROM system.tables WHERE database = '_tributary_state' AND (startsWith(name, 'j_') OR startsWith(name, 'k_'))",
  );
  await q.waitForEnd();
  return Number(q.rows[0]?.[0] ?? 0);
}

/** The net multiset of a changelog's rows: each row (without its sign) with the sum of its signs. */
function net(rows: readonly Row[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of rows) {
    const key = JSON.stringify(r.slice(0, -1));
    out.set(key, (out.get(key) ?? 0) + Number(r.at(-1)));
  }
  for (const [k, v] of out) if (v === 0) out.delete(k);
  return out;
}

test('changelog JOIN versioned_kv over 70 steps: compacted kept state, the same changes', async () => {
  const a = await api.createStream('ka', "(i int32, k string) SETTINGS mode='changelog'");
  const b = await api.createStream('kb', "(k string, v int32) PRIMARY KEY k SETTINGS mode='versioned_kv'");
  await api.exec(`INSERT INTO ${b} (k, v) VALUES ('k', 0), ('other', -1)`);
  const q = await api.start(`SELECT a.i, b.v, _tp_delta FROM ${a} AS a INNER JOIN ${b} AS b ON a.k = b.k`);
  await q.waitForScanned(0);
  // Each round: a's row v replaces row v-1 (+1 then -1), then b's key moves to v (the joined row
  // of v retracted with b's old value, added with its new one): more than the 64 appends between
  // two compactions of each side's table.
  const expected: Row[] = [];
  for (let v = 1; v <= 70; v++) {
    const retract = v > 1 ? `, (${v - 1}, 'k', -1)` : '';
    await api.exec(`INSERT INTO ${a} (i, k, _tp_delta) VALUES (${v}, 'k', 1)${retract}`);
    expected.push([v, v - 1, 1]);
    if (v > 1) expected.push([v - 1, v - 1, -1]);
    await q.waitForRows(expected.length);
    await api.exec(`INSERT INTO ${b} (k, v) VALUES ('k', ${v})`);
    expected.push([v, v - 1, -1], [v, v, 1]);
    await q.waitForRows(expected.length);
  }
  const rows = await q.settle(expected.length, 300);
  assertSameRows(rows, expected);
  assert.deepEqual([...net(rows)], [[JSON.stringify([70, 70]), 1]]);
  // 140 rows went into a and 72 into b; the tables hold the state (a row per side and key) and
  // the rows of the few steps since the last compaction.
  const kept = await keptRows();
  assert.ok(kept > 0 && kept < 40, `kept rows ${kept}`);
  // A new row of a meets b's latest row only.
  await api.exec(`INSERT INTO ${a} (i, k, _tp_delta) VALUES (100, 'k', 1), (101, 'other', 1)`);
  assertSameRows((await q.settle(expected.length + 2, 300)).slice(expected.length), [
    [100, 70, 1],
    [101, -1, 1],
  ]);
  await q.cancel();
  assert.equal(await keptRows(), 0, 'the kept tables are dropped with the query');
});

test('a side whose history is read in one step is compacted at once: the kept rows are its keys', async () => {
  const a = await api.createStream('ka', "(k int32, x int64) PRIMARY KEY k SETTINGS mode='versioned_kv'");
  const b = await api.createStream('kb', "(k int32, y int64) PRIMARY KEY k SETTINGS mode='versioned_kv'");
  // 20,000 versions of 10 keys on a, one row per key on b.
  await api.exec(`INSERT INTO ${a} (k, x) SELECT number % 10, number FROM numbers(20000)`);
  await api.exec(`INSERT INTO ${b} (k, y) SELECT number, number * 100 FROM numbers(10)`);
  const q = await api.start(`SELECT a.k, x, y, _tp_delta FROM ${a} AS a INNER JOIN ${b} AS b ON a.k = b.k`);
  // The state: each key's last version joined once.
  assertSameRows(
    await q.settle(10, 300),
    Array.from({ length: 10 }, (_, k) => [k, 19990 + k, k * 100, 1]),
  );
  assert.equal(await keptRows(), 20, 'one row per key and side');
  await api.exec(`INSERT INTO ${a} (k, x) VALUES (3, 1)`);
  assertSameRows((await q.settle(12, 300)).slice(10), [
    [3, 19993, 300, -1],
    [3, 1, 300, 1],
  ]);
  await q.cancel();
});

test('a subscribed join of versioned_kv streams is checkpointed: RECOVER rebuilds the sides and retracts right', async () => {
  const a = await api.createStream('ka', "(k string, x int32) PRIMARY KEY k SETTINGS mode='versioned_kv'");
  const b = await api.createStream('kb', "(k string, y int32) PRIMARY KEY k SETTINGS mode='versioned_kv'");
  const q = await api.start(
    `SUBSCRIBE TO SELECT a.k, x, y, _tp_delta FROM ${a} AS a INNER JOIN ${b} AS b ON a.k = b.k SETTINGS checkpoint_interval=1`,
  );
  await q.waitForScanned(0);
  await api.exec(`INSERT INTO ${a} (k, x) VALUES ('p', 1), ('q', 2)`);
  await api.exec(`INSERT INTO ${b} (k, y) VALUES ('p', 10)`);
  assertSameRows(await q.settle(1, 300), [['p', 1, 10, 1]]);
  await q.cancel();
  // While the query is away: q gets its b row, p a new x.
  await api.exec(`INSERT INTO ${b} (k, y) VALUES ('q', 20)`);
  await api.exec(`INSERT INTO ${a} (k, x) VALUES ('p', 3)`);
  const rec = await api.start(`RECOVER FROM '${q.id}'`);
  assertSameRows(await rec.settle(3, 300), [
    ['q', 2, 20, 1],
    ['p', 1, 10, -1],
    ['p', 3, 10, 1],
  ]);
  // After the restore, the sides are what they were before and during the pause.
  await api.exec(`INSERT INTO ${b} (k, y) VALUES ('p', 30)`);
  assertSameRows((await rec.settle(5, 300)).slice(3), [
    ['p', 3, 10, -1],
    ['p', 3, 30, 1],
  ]);
  await rec.cancel();
  await api.exec(`UNSUBSCRIBE TO '${q.id}'`);
});

test('a subscribed LEFT JOIN of versioned_kv streams is checkpointed: RECOVER rebuilds both sides', async () => {
  const a = await api.createStream('la', "(k string, x int32) PRIMARY KEY k SETTINGS mode='versioned_kv'");
  const b = await api.createStream('lb', "(k string, y int32) PRIMARY KEY k SETTINGS mode='versioned_kv'");
  const q = await api.start(
    `SUBSCRIBE TO SELECT a.k, x, y, _tp_delta FROM ${a} AS a LEFT JOIN ${b} AS b ON a.k = b.k SETTINGS checkpoint_interval=1`,
  );
  await q.waitForScanned(0);
  await api.exec(`INSERT INTO ${a} (k, x) VALUES ('p', 1), ('q', 2)`);
  assertSameRows(await q.settle(2, 300), [
    ['p', 1, 0, 1],
    ['q', 2, 0, 1],
  ]);
  await api.exec(`INSERT INTO ${b} (k, y) VALUES ('p', 10)`);
  assertSameRows((await q.settle(4, 300)).slice(2), [
    ['p', 1, 0, -1],
    ['p', 1, 10, 1],
  ]);
  await q.cancel();
  // While the query is away: q gets its b row (its defaults row goes), p a new x.
  await api.exec(`INSERT INTO ${b} (k, y) VALUES ('q', 20)`);
  await api.exec(`INSERT INTO ${a} (k, x) VALUES ('p', 3)`);
  const rec = await api.start(`RECOVER FROM '${q.id}'`);
  assertSameRows(await rec.settle(4, 300), [
    ['q', 2, 0, -1],
    ['q', 2, 20, 1],
    ['p', 1, 10, -1],
    ['p', 3, 10, 1],
  ]);
  // p's b row replaced.
  await api.exec(`INSERT INTO ${b} (k, y) VALUES ('p', 30)`);
  assertSameRows((await rec.settle(6, 300)).slice(4), [
    ['p', 3, 10, -1],
    ['p', 3, 30, 1],
  ]);
  await rec.cancel();
  await api.exec(`UNSUBSCRIBE TO '${q.id}'`);
});

test('a subscribed append JOIN versioned_kv (INNER, LEFT) is checkpointed: RECOVER sees the right rows of before and after', async () => {
  const l = await api.createStream('kl', '(i int32, s string)');
  const r = await api.createStream('kr', "(ii int32, ss string) PRIMARY KEY ss SETTINGS mode='versioned_kv'");
  const inner = await api.start(
    `SUBSCRIBE TO SELECT i, ii FROM ${l} INNER JOIN ${r} ON s = ss SETTINGS checkpoint_interval=1`,
  );
  const left = await api.start(
    `SUBSCRIBE TO SELECT i, ii FROM ${l} LEFT JOIN ${r} ON s = ss SETTINGS checkpoint_interval=1`,
  );
  await api.exec(`INSERT INTO ${r} (ii, ss) VALUES (1, 'a'), (2, 'b')`);
  await inner.waitForQuiet(300);
  await api.exec(`INSERT INTO ${l} (i, s) VALUES (10, 'a'), (11, 'c')`);
  assertSameRows(await inner.settle(1, 300), [[10, 1]]);
  assertSameRows(await left.settle(2, 300), [
    [10, 1],
    [11, 0],
  ]);
  await inner.cancel();
  await left.cancel();
  await api.exec(`INSERT INTO ${r} (ii, ss) VALUES (3, 'a'), (4, 'c')`);
  const innerRec = await api.start(`RECOVER FROM '${inner.id}'`);
  const leftRec = await api.start(`RECOVER FROM '${left.id}'`);
  await api.exec(`INSERT INTO ${l} (i, s) VALUES (20, 'a'), (30, 'b'), (40, 'c'), (50, 'd')`);
  assertSameRows(await innerRec.settle(3, 300), [
    [20, 3],
    [30, 2],
    [40, 4],
  ]);
  assertSameRows(await leftRec.settle(4, 300), [
    [20, 3],
    [30, 2],
    [40, 4],
    [50, 0],
  ]);
  for (const q of [innerRec, leftRec]) await q.cancel();
  for (const q of [inner, left]) await api.exec(`UNSUBSCRIBE TO '${q.id}'`);
});

test('a subscribed append JOIN changelog(s, key) keeps its state from the first run across RECOVER', async () => {
  const l = await api.createStream('kl', '(i int32, k string)');
  const r = await api.createStream('kr', '(j int32, kk string)');
  // Rows of r before the query are no part of changelog(r, kk), which starts with the query.
  await api.exec(`INSERT INTO ${r} (j, kk) VALUES (1, 'a')`);
  const q = await api.start(
    `SUBSCRIBE TO SELECT i, j FROM ${l} AS a INNER JOIN changelog(${r}, kk) AS b ON a.k = b.kk SETTINGS checkpoint_interval=1`,
  );
  await q.waitForScanned(0);
  await api.exec(`INSERT INTO ${r} (j, kk) VALUES (2, 'b')`);
  await q.waitForQuiet(300);
  await api.exec(`INSERT INTO ${l} (i, k) VALUES (10, 'a'), (11, 'b')`);
  assertSameRows(await q.settle(1, 300), [[11, 2]]);
  await q.cancel();
  // While away: b's key gets a new version, c its first.
  await api.exec(`INSERT INTO ${r} (j, kk) VALUES (3, 'b'), (4, 'c')`);
  const rec = await api.start(`RECOVER FROM '${q.id}'`);
  await api.exec(`INSERT INTO ${l} (i, k) VALUES (20, 'a'), (21, 'b'), (22, 'c')`);
  // a: still none (its row came before the first run); b: the version of the pause; c too.
  assertSameRows(await rec.settle(2, 300), [
    [21, 3],
    [22, 4],
  ]);
  await rec.cancel();
  await api.exec(`UNSUBSCRIBE TO '${q.id}'`);
});
