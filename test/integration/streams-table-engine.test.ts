/**
 * CREATE STREAM with a table ENGINE (Memory, MergeTree, ...) makes a plain table, as in Proton: only
 * the declared columns (no `_tp_time`, its index, or the ORDER BY / PARTITION BY on it), still
 * ingested, logged and tailed as every stream. A stream without ENGINE keeps `_tp_time`.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { StreamingApi } from '../helpers/streaming-client.ts';
import { rows } from '../helpers/streams.ts';

let api: StreamingApi;
before(async () => {
  api = await StreamingApi.open();
  await api.exec('CREATE STREAM te_mem (id int32, s string) ENGINE = Memory');
  await api.exec(
    'CREATE STREAM te_mt (id int32, v float64, d date) ENGINE = MergeTree() PARTITION BY d ORDER BY (id, d)',
  );
  await api.exec('CREATE STREAM te_plain (id int32, s string)');
});
after(async () => {
  await api.close();
});

async function streamResource(name: string): Promise<Record<string, unknown>> {
  const r = await api.get(`/v1beta2/streams/${name}`);
  assert.equal(r.status, 200);
  return (await r.json()) as Record<string, unknown>;
}

const columnNames = (resource: Record<string, unknown>) =>
  (resource.columns as { name: string }[]).map((c) => c.name);

test('ENGINE = Memory: SELECT * and DESCRIBE show only the declared columns', async () => {
  await api.exec("INSERT INTO te_mem (id, s) VALUES (1, 'a'), (2, 'b')");
  const all = await api.historical('SELECT * FROM table(te_mem) ORDER BY id');
  assert.deepEqual(
    all.header.map((c) => c.name),
    ['id', 's'],
  );
  assert.deepEqual(all.rows, [
    [1, 'a'],
    [2, 'b'],
  ]);
  const described = await api.historical('DESCRIBE te_mem');
  assert.deepEqual(
    described.rows.map((r) => r[0]),
    ['id', 's'],
  );
  const resource = await streamResource('te_mem');
  assert.deepEqual(columnNames(resource), ['id', 's']);
  assert.match(String(resource.create_query), /\nENGINE = Memory$/);
  assert.equal(resource.engine, 'Memory');
  // `_tp_time` is not there (Proton: unknown identifier); `_tp_sn` is, hidden from `*`.
  const r = await api.post('/v1beta2/queries', { sql: 'SELECT _tp_time FROM table(te_mem)' });
  assert.equal(r.status, 400, await r.text());
  const sns = await api.historical('SELECT _tp_sn FROM table(te_mem) ORDER BY _tp_sn');
  assert.deepEqual(sns.rows, [[0], [1]]);
});

test('ENGINE = MergeTree: only the declared columns; ORDER BY and PARTITION BY as declared', async () => {
  await api.exec("INSERT INTO te_mt (id, v, d) VALUES (2, 0.5, '2024-01-02'), (1, 1.5, '2024-01-01')");
  const all = await api.historical('SELECT * FROM table(te_mt) ORDER BY id');
  assert.deepEqual(
    all.header.map((c) => c.name),
    ['id', 'v', 'd'],
  );
  assert.deepEqual(all.rows, [
    [1, 1.5, '2024-01-01'],
    [2, 0.5, '2024-01-02'],
  ]);
  const described = await api.historical('DESCRIBE te_mt');
  assert.deepEqual(
    described.rows.map((r) => r[0]),
    ['id', 'v', 'd'],
  );
  const resource = await streamResource('te_mt');
  assert.equal(resource.engine, 'MergeTree');
  assert.equal(
    resource.create_query,
    [
      'CREATE STREAM default.te_mt',
      '(',
      '  `id` int32,',
      '  `v` float64,',
      '  `d` date',
      ')',
      'ENGINE = MergeTree()',
      'ORDER BY (id, d)',
      'PARTITION BY d',
    ].join('\n'),
  );
  // The historical store is keyed as declared (nothing on _tp_time).
  const [keys] = await rows(
    api.h,
    "SELECT sorting_key, partition_key FROM system.tables WHERE database = 'default' AND name = '.tp_history.te_mt'",
  );
  assert.deepEqual(keys, ['id, d', 'd']);
});

test('a stream without ENGINE (or with ENGINE = Stream) keeps _tp_time', async () => {
  await api.exec("INSERT INTO te_plain (id, s) VALUES (1, 'a')");
  const all = await api.historical('SELECT * FROM table(te_plain)');
  assert.deepEqual(
    all.header.map((c) => c.name),
    ['id', 's', '_tp_time'],
  );
  const plain = await streamResource('te_plain');
  assert.deepEqual(columnNames(plain), ['id', 's', '_tp_time']);
  assert.equal(plain.engine, 'Stream');
  await api.exec('CREATE STREAM te_stream_engine (id int32) ENGINE = Stream(1, 1, rand())');
  assert.deepEqual(columnNames(await streamResource('te_stream_engine')), ['id', '_tp_time']);
});

test('REST ingest into an engine stream: rows read back, no commit time to fill', async () => {
  await api.exec('CREATE STREAM te_ingest (id int32, s string) ENGINE = MergeTree ORDER BY id');
  await api.ingest(
    'te_ingest',
    ['id', 's'],
    [
      [3, 'c'],
      [1, 'a'],
    ],
  );
  const r = await fetch(`${api.base}/v1beta2/streams/te_ingest/ingest`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from('admin:admin-password-for-tests').toString('base64')}`,
      'content-type': 'application/x-ndjson',
    },
    body: '{"id": 2, "s": "b"}\n',
  });
  assert.equal(r.status, 200, await r.text());
  const all = await api.historical('SELECT * FROM table(te_ingest) ORDER BY id');
  assert.deepEqual(all.rows, [
    [1, 'a'],
    [2, 'b'],
    [3, 'c'],
  ]);
});

test('a streaming tail over an engine stream emits its new rows', async () => {
  await api.exec('CREATE STREAM te_tail (id int32, s string) ENGINE = Memory');
  const q = await api.start('SELECT id, s FROM te_tail WHERE id > 1');
  assert.deepEqual(q.header, ['id', 's']);
  await api.execAndWait(q, "INSERT INTO te_tail (id, s) VALUES (1, 'a'), (2, 'b'), (3, 'c')", 2);
  assert.deepEqual(q.rows, [
    [2, 'b'],
    [3, 'c'],
  ]);
  const star = await api.start('SELECT * FROM te_tail');
  assert.deepEqual(star.header, ['id', 's']);
  await api.execAndWait(star, "INSERT INTO te_tail (id, s) VALUES (4, 'd')", 1);
  assert.deepEqual(star.rows, [[4, 'd']]);
  await q.cancel();
  await star.cancel();
});

test('a window over an engine stream without a time column names the stream and its missing _tp_time', async () => {
  for (const sql of [
    'SELECT window_start, count() FROM tumble(te_mem, 5s) GROUP BY window_start',
    'SELECT window_start, count() FROM hop(te_mem, 1s, 5s) GROUP BY window_start',
    'SELECT window_start, count() FROM tumble(te_mem, _tp_time, 5s) GROUP BY window_start',
    'SELECT window_start, count() FROM session(te_mem, 5s) GROUP BY window_start',
    'WITH x AS (SELECT * FROM te_mem) SELECT count() FROM x JOIN tumble(default.te_mem, 5s) AS w ON x.id = w.id',
  ]) {
    const e = await api.startError(sql);
    assert.equal(e.status, 400, sql);
    assert.equal(e.code, 47, sql);
    assert.match(e.message, /te_mem/, sql);
    assert.match(e.message, /_tp_time/, sql);
    assert.match(e.message, /ENGINE = Memory/, sql);
  }
  const historical = await api.post('/v1beta2/queries', {
    sql: 'SELECT window_start, count() FROM table(tumble(te_mem, 5s)) GROUP BY window_start',
  });
  const body = (await historical.json()) as { code: number; message: string };
  assert.equal(historical.status, 400);
  assert.equal(body.code, 47);
  assert.match(body.message, /te_mem.*_tp_time|_tp_time.*te_mem/);
});

test('EMIT LAST and seek_to a time need _tp_time: refused by name; seek_to earliest reads all', async () => {
  for (const sql of [
    'SELECT id FROM te_mem EMIT LAST 5s',
    "SELECT id FROM te_mem SETTINGS seek_to = '-1h'",
    "SELECT id FROM te_mem SETTINGS seek_to = '2024-01-01 00:00:00'",
  ]) {
    const e = await api.startError(sql);
    assert.equal(e.status, 400, sql);
    assert.equal(e.code, 47, sql);
    assert.match(e.message, /stream default\.te_mem has no _tp_time column/, sql);
  }
  const q = await api.start("SELECT id FROM te_mem SETTINGS seek_to = 'earliest'");
  await q.waitForRows(2);
  assert.deepEqual(q.rows, [[1], [2]]);
  await q.cancel();
});

test('stats of an engine stream: its rows, and no earliest/latest event', async () => {
  const r = await api.get('/v1beta2/streams/te_mem/stats');
  const body = (await r.json()) as Record<string, unknown>;
  assert.equal(r.status, 200, JSON.stringify(body));
  assert.equal(body.row_count, 2);
  assert.equal(body.earliest_event, undefined);
  assert.equal(body.latest_event, undefined);
});

test('ALTER and RENAME keep an engine stream a plain table', async () => {
  await api.exec('CREATE STREAM te_alter (id int32) ENGINE = Memory');
  await api.exec('INSERT INTO te_alter (id) VALUES (1)');
  await api.exec('ALTER STREAM te_alter ADD COLUMN c int32 DEFAULT id * 10');
  await api.exec('RENAME STREAM te_alter TO te_altered');
  const resource = await streamResource('te_altered');
  assert.deepEqual(columnNames(resource), ['id', 'c']);
  assert.match(String(resource.create_query), /\nENGINE = Memory$/);
  assert.deepEqual((await api.historical('SELECT * FROM table(te_altered)')).rows, [[1, 10]]);
});

test('a restart keeps an engine stream as it was declared', async () => {
  const before = await streamResource('te_mt');
  await api.h.restart().then(async (h) => {
    api = await StreamingApi.attach(h);
  });
  const again = await streamResource('te_mt');
  assert.equal(again.create_query, before.create_query);
  assert.deepEqual(columnNames(again), ['id', 'v', 'd']);
  const all = await api.historical('SELECT * FROM table(te_mt) ORDER BY id');
  assert.deepEqual(all.rows, [
    [1, 1.5, '2024-01-01'],
    [2, 0.5, '2024-01-02'],
  ]);
  await api.exec("INSERT INTO te_mt (id, v, d) VALUES (3, 2.5, '2024-01-03')");
  assert.equal((await api.historical('SELECT count() FROM table(te_mt)')).rows[0]?.[0], 3);
});
