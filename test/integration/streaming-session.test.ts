/**
 * Session windows through the REST API: idle timeout, maximum length (explicit and the default
 * 5 x idle), late rows, substreams, start/end conditions with inclusive/exclusive bounds, ON UPDATE
 * and TIMEOUT. Semantics: streaming-sql-notes.md §1.5 (Session) and §1.7: window_start = the first
 * row; an open session's window_end = last row + 1 ms; a row at or past last + idle closes it with
 * window_end = last + idle; a row at or past start + max closes it with window_end = start + max;
 * the session watermark is the max event time of the substream (minus delay), recomputed per row,
 * so a row older than an earlier row of its substream is late. Expected rows of the start/end
 * conditions are those of the Proton smoke suite 0006_session_window.json ids 17-20.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { assertSameRows, StreamingApi } from '../helpers/streaming-client.ts';

let api: StreamingApi;
before(async () => {
  api = await StreamingApi.open();
});
after(async () => {
  await api.close();
});

const stream = (): Promise<string> =>
  api.createStream('session', "(id string, kind string, v float64, ts datetime64(3, 'UTC'))", 'ts');

/** One batch of (id, v, time) rows (kind ''). `time` is on 2020-02-02. */
function batch(name: string, rows: [string, number, string][]): Promise<void> {
  return api.ingest(
    name,
    ['id', 'kind', 'v', 'ts'],
    rows.map(([id, v, t]) => [id, '', v, `2020-02-02 ${t}`]),
  );
}

const at = (t: string) => `2020-02-02 ${t}`;

test('idle timeout and maximum length close sessions per substream; a row older than its substream max is late', async () => {
  const s = await stream();
  const q = await api.start(
    `SELECT id, count() AS c, sum(v) AS total, window_start, window_end FROM session(${s}, ts, 2s, 5s) PARTITION BY id GROUP BY window_start, window_end`,
  );
  // dev1 tests the idle timeout, dev2 the maximum length (5s). dev2's rows come after dev1's in each
  // batch with older times: with one shared watermark they would be late; per substream they are not.
  await batch(s, [
    ['dev1', 1, '20:00:00.000'],
    ['dev1', 2, '20:00:01.000'],
    ['dev2', 1, '20:00:00.000'],
    ['dev2', 2, '20:00:01.500'],
  ]);
  await q.waitForScanned(4);
  // dev1 20:00:00.500 (4) is below dev1's max (20:00:01): late, dropped. 20:00:02.500 (8) is kept
  // (before the timeout 20:00:01 + 2s = 20:00:03).
  // dev2 20:00:03 (4) and 20:00:04.500 (8) are kept (each within 2s of the last, before 20:00:05).
  await batch(s, [
    ['dev1', 4, '20:00:00.500'],
    ['dev1', 8, '20:00:02.500'],
    ['dev2', 4, '20:00:03.000'],
    ['dev2', 8, '20:00:04.500'],
  ]);
  await q.waitForScanned(8);
  assert.deepEqual(q.rows, [], 'no session has closed yet');
  // dev1 20:00:04.600 >= 20:00:02.500 + 2s: the session closes at 20:00:04.500 with 00, 01, 02.5
  // (count 3, sum 11); the row opens a new session. dev2 20:00:05.500 >= 20:00:00 + 5s: the session
  // closes at its maximum, 20:00:05, with 4 rows (sum 15); the row opens a new session.
  await batch(s, [
    ['dev1', 16, '20:00:04.600'],
    ['dev2', 16, '20:00:05.500'],
  ]);
  await q.waitForRows(2);
  assertSameRows(await q.waitForQuiet(500), [
    ['dev1', 3, 11, at('20:00:00.000'), at('20:00:04.500')],
    ['dev2', 4, 15, at('20:00:00.000'), at('20:00:05.000')],
  ]);
  await q.cancel();
});

test('the default maximum length is 5 x idle', async () => {
  const s = await stream();
  const q = await api.start(
    `SELECT count() AS c, window_start, window_end FROM session(${s}, ts, 1s) GROUP BY window_start, window_end`,
  );
  // Rows 0.9 s apart never time out (idle 1s); 20:00:05 >= 20:00:00 + 5 x 1s closes the session at
  // 20:00:05 with the six earlier rows.
  await batch(s, [
    ['d', 1, '20:00:00.000'],
    ['d', 1, '20:00:00.900'],
    ['d', 1, '20:00:01.800'],
    ['d', 1, '20:00:02.700'],
    ['d', 1, '20:00:03.600'],
    ['d', 1, '20:00:04.500'],
    ['d', 1, '20:00:05.000'],
  ]);
  await q.waitForRows(1);
  assert.deepEqual(await q.waitForQuiet(500), [[6, at('20:00:00.000'), at('20:00:05.000')]]);
  await q.cancel();
});

test('start/end conditions: [ ] include, ( ) exclude the start and end rows; the 2-argument form includes both', async () => {
  const s = await stream();
  const sel = (cond: string) =>
    api.start(
      `SELECT min(v), max(v), count(), window_start, window_end FROM session(${s}, 5s, ${cond}) PARTITION BY id GROUP BY window_start, window_end`,
    );
  const closed = await sel("[kind='ca', kind='sh']");
  const endOpen = await sel("[kind='ca', kind='sh')");
  const startOpen = await sel("(kind='ca', kind='sh']");
  const bothOpen = await sel("(kind='ca', kind='sh')");
  const twoArgs = await sel("kind='ca', kind<>'ca'");
  // The rows of 0006 ids 18-20 (time column: _tp_time = ts).
  const rows: [string, number, string][] = [
    ['sh', 60.3, '19:59:55.262'],
    ['ca', 57.3, '20:00:00.261'],
    ['ca', 58.3, '20:00:05.260'],
    ['sh', 59.3, '20:00:08.262'],
    ['ca', 66, '20:00:10.263'],
    ['da', 67, '20:00:13.262'],
    ['ca', 68, '20:00:16.262'],
    ['sh', 69, '20:00:18.262'],
  ];
  await api.ingest(
    s,
    ['id', 'kind', 'v', 'ts'],
    rows.map(([kind, v, t]) => ['dev1', kind, v, `2020-02-02 ${t}`]),
  );
  for (const q of [closed, endOpen, startOpen, bothOpen]) await q.waitForRows(2);
  await twoArgs.waitForRows(3);
  // The 'sh' row at 19:59:55 is outside any session (no start row before it): ignored.
  // [ca, sh]: 57.3, 58.3, 59.3 (end row included: window_end = 08.262 + 1 ms); then 66, 67, 68, 69
  // (a 'ca' row inside an open session simply joins it).
  assertSameRows(closed.rows, [
    [57.3, 59.3, 3, at('20:00:00.261'), at('20:00:08.263')],
    [66, 69, 4, at('20:00:10.263'), at('20:00:18.263')],
  ]);
  // [ca, sh): the end row is excluded and window_end is its time (0006 id 18).
  assertSameRows(endOpen.rows, [
    [57.3, 58.3, 2, at('20:00:00.261'), at('20:00:08.262')],
    [66, 68, 3, at('20:00:10.263'), at('20:00:18.262')],
  ]);
  // (ca, sh]: the start row is excluded; the session starts at the next row (0006 id 19).
  assertSameRows(startOpen.rows, [
    [58.3, 59.3, 2, at('20:00:05.260'), at('20:00:08.263')],
    [67, 69, 3, at('20:00:13.262'), at('20:00:18.263')],
  ]);
  // (ca, sh): both excluded (0006 id 20).
  assertSameRows(bothOpen.rows, [
    [58.3, 58.3, 1, at('20:00:05.260'), at('20:00:08.262')],
    [67, 68, 2, at('20:00:13.262'), at('20:00:18.262')],
  ]);
  // start kind='ca', end kind<>'ca', both inclusive: the 'da' row at 13.262 ends the second session
  // (66, 67); 'ca' at 16.262 starts a third that the 'sh' row at 18.262 ends (68, 69).
  assertSameRows(await twoArgs.waitForQuiet(500), [
    [57.3, 59.3, 3, at('20:00:00.261'), at('20:00:08.263')],
    [66, 67, 2, at('20:00:10.263'), at('20:00:13.263')],
    [68, 69, 2, at('20:00:16.262'), at('20:00:18.263')],
  ]);
  for (const q of [closed, endOpen, startOpen, bothOpen, twoArgs]) await q.cancel();
});

test('session EMIT ON UPDATE: the open session after each batch, window_end = last row + 1 ms (0034 id 1)', async () => {
  const s = await stream();
  const q = await api.start(
    `SELECT window_start, window_end, min(v), max(v), count() FROM session(${s}, ts, 5m) GROUP BY window_start, window_end EMIT ON UPDATE`,
  );
  await batch(s, [['x', 1, '10:00:00.000']]);
  await q.waitForRows(1);
  await batch(s, [['x', 2, '10:00:05.000']]);
  await q.waitForRows(2);
  await batch(s, [['x', 3, '10:00:10.000']]);
  await q.waitForRows(3);
  assert.deepEqual(await q.waitForQuiet(500), [
    [at('10:00:00.000'), at('10:00:00.001'), 1, 1, 1],
    [at('10:00:00.000'), at('10:00:05.001'), 1, 2, 2],
    [at('10:00:00.000'), at('10:00:10.001'), 1, 3, 3],
  ]);
  await q.cancel();
});

test('session EMIT TIMEOUT: with no new rows for the timeout, open sessions are emitted and closed (0006 id 23)', async () => {
  const s = await stream();
  const q = await api.start(
    `SELECT id, window_start, window_end, sum(v) FROM session(${s}, ts, 10s) PARTITION BY id GROUP BY window_start, window_end EMIT TIMEOUT 1s`,
  );
  // Each session is emitted by the timeout with window_end = its last row + 1 ms. The second row
  // (2 s later, within the idle 10 s) starts a new session: the first one was closed by the timeout.
  await batch(s, [['dev1', 1, '20:00:00.000']]);
  await q.waitForRows(1);
  await batch(s, [['dev1', 2, '20:00:02.000']]);
  await q.waitForRows(2);
  assert.deepEqual(await q.waitForQuiet(1_500), [
    ['dev1', at('20:00:00.000'), at('20:00:00.001'), 1],
    ['dev1', at('20:00:02.000'), at('20:00:02.001'), 2],
  ]);
  await q.cancel();
});

test('emit_version() of a session aggregation counts per substream (0006 id 4, extended)', async () => {
  const s = await stream();
  const q = await api.start(
    `SELECT emit_version() AS ver, count() AS c, id, window_start, window_end FROM session(${s}, ts, 2s) WHERE id != 'dev4' PARTITION BY id GROUP BY window_start, window_end`,
  );
  // 0006 id 4: dev2 and dev3 have rows at :00, :01, :02, then :04 >= :02 + 2s closes [:00, :04)
  // with 3 rows, each its substream's first emit (version 0). dev1 (:00, :01) stays open; dev4 is
  // filtered out.
  await batch(s, [
    ['dev1', 1, '20:00:00.000'],
    ['dev2', 1, '20:00:00.000'],
    ['dev3', 1, '20:00:00.000'],
    ['dev1', 1, '20:00:01.000'],
    ['dev2', 1, '20:00:01.000'],
    ['dev3', 1, '20:00:01.000'],
    ['dev4', 1, '20:00:05.000'],
    ['dev2', 1, '20:00:02.000'],
    ['dev3', 1, '20:00:02.000'],
    ['dev2', 1, '20:00:04.000'],
    ['dev3', 1, '20:00:04.000'],
  ]);
  await q.waitForRows(2);
  // Then dev2 :06.5 closes dev2's [:04, :06) (its second emit: version 1) and dev1 :03.5 closes
  // dev1's [:00, :03) (its first emit: version 0, not 1).
  await batch(s, [
    ['dev2', 1, '20:00:06.500'],
    ['dev1', 1, '20:00:03.500'],
  ]);
  await q.waitForRows(4);
  const rows = await q.waitForQuiet(500);
  assertSameRows(rows.slice(0, 2), [
    [0, 3, 'dev2', at('20:00:00.000'), at('20:00:04.000')],
    [0, 3, 'dev3', at('20:00:00.000'), at('20:00:04.000')],
  ]);
  assertSameRows(rows.slice(2), [
    [1, 1, 'dev2', at('20:00:04.000'), at('20:00:06.000')],
    [0, 2, 'dev1', at('20:00:00.000'), at('20:00:03.000')],
  ]);
  await q.cancel();
});

test('window_start and window_end have the time column type: no zone added to a zoneless column, the zone kept otherwise', async () => {
  const plain = await api.createStream('session_plain', '(id int32, ts datetime64(3))');
  const zoned = await api.createStream('session_zoned', "(id int32, ts datetime64(3, 'Asia/Shanghai'))");
  const sql = (s: string) =>
    `SELECT id, count() AS c, window_start AS s, window_end AS e FROM session(${s}, ts, 5s) PARTITION BY id GROUP BY id, window_start, window_end`;
  const a = await api.start(sql(plain));
  const b = await api.start(sql(zoned));
  assert.deepEqual(
    a.info.result.header.slice(2).map((c) => c.type),
    ['datetime64(3)', 'datetime64(3)'],
  );
  assert.deepEqual(
    b.info.result.header.slice(2).map((c) => c.type),
    ["datetime64(3, 'Asia/Shanghai')", "datetime64(3, 'Asia/Shanghai')"],
  );
  // The zoned column's values are shown in its zone (UTC+8): the instants are unchanged.
  for (const s of [plain, zoned]) {
    await api.ingest(s, ['id', 'ts'], [[1, '2021-11-02T20:00:03Z']]);
    await api.ingest(s, ['id', 'ts'], [[1, '2021-11-02T20:00:10Z']]);
  }
  await a.waitForRows(1);
  await b.waitForRows(1);
  assert.deepEqual(a.rows[0], [1, 1, '2021-11-02 20:00:03.000', '2021-11-02 20:00:08.000']);
  assert.deepEqual(b.rows[0], [1, 1, '2021-11-03 04:00:03.000', '2021-11-03 04:00:08.000']);
  for (const q of [a, b]) await q.cancel();
});
