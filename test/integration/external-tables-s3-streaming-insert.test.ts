/**
 * `INSERT INTO <s3 table> SELECT ... FROM <stream>` runs as a streaming query: listed by
 * /v1beta2/queries, writing new objects while rows flow (the materialized views' writer and
 * spool), ending when canceled with what it still buffered uploaded. Objects read back with the
 * AWS SDK client.
 */
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startS3RequestLog } from '../helpers/s3-request-log.ts';
import { type LocalS3, S3_KEY, S3_SECRET, startLocalS3 } from '../helpers/s3-server.ts';
import { freePort } from '../helpers/serve-process.ts';
import { StreamingApi } from '../helpers/streaming-client.ts';

let api: StreamingApi;
let s3: LocalS3;
before(async () => {
  s3 = await startLocalS3();
  api = await StreamingApi.open();
});
after(async () => {
  await api.close();
  await s3.close();
});

const keys = () =>
  `endpoint='${s3.endpoint}/${s3.bucket}', access_key_id='${S3_KEY}', secret_access_key='${S3_SECRET}'`;

/** Every row of every object under `prefix` (JSONEachRow), as `k:n`, sorted. */
async function objectRows(prefix: string): Promise<string[]> {
  const out: string[] = [];
  for (const k of await s3.keys(prefix))
    for (const line of (await s3.get(k)).toString().split('\n'))
      if (line) {
        const r = JSON.parse(line) as { k: string; n: number };
        out.push(`${r.k}:${r.n}`);
      }
  return out.sort();
}

async function waitForRows(prefix: string, count: number): Promise<string[]> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const rows = await objectRows(prefix);
    if (rows.length >= count || Date.now() > deadline) return rows;
    await sleep(200);
  }
}

test('INSERT INTO s3 table SELECT FROM stream writes continuously until canceled', async () => {
  await api.exec('CREATE STREAM src (name string, v int32)');
  await api.exec(
    `CREATE EXTERNAL TABLE sink_s3 (k string, n int32) SETTINGS type='s3', ${keys()}, write_to='si/part.json'`,
  );
  // Positional: name -> k, v * 10 -> n; the INSERT's own SETTINGS set the idle time.
  const q = await api.start(
    'INSERT INTO sink_s3 (k, n) SETTINGS s3_max_upload_idle_seconds = 1 SELECT name, v * 10 FROM src',
  );
  assert.equal((q.info.analysis as { query_type: string }).query_type, 'insert');
  const listed = (await (await api.get('/v1beta2/queries')).json()) as { id: string; status: string }[];
  assert.equal(listed.find((x) => x.id === q.id)?.status, 'running');

  await api.ingest(
    'src',
    ['name', 'v'],
    [
      ['a', 1],
      ['b', 2],
    ],
  );
  assert.deepEqual(await waitForRows('si/', 2), ['a:10', 'b:20']);
  const first = await s3.keys('si/');
  for (const k of first) assert.match(k, /^si\/part\.\d{17}\.json$/);
  await api.ingest('src', ['name', 'v'], [['c', 3]]);
  assert.deepEqual(await waitForRows('si/', 3), ['a:10', 'b:20', 'c:30']);
  assert.ok((await s3.keys('si/')).length > first.length, 'a new object while rows flow');
  assert.equal(q.rows.length, 0, 'the client gets no rows');

  const info = await q.cancel();
  assert.equal(info.status, 'canceled');
  // Rows after the cancel are not written.
  await api.ingest('src', ['name', 'v'], [['d', 4]]);
  assert.deepEqual(await objectRows('si/'), ['a:10', 'b:20', 'c:30']);
});

test('cancel uploads the rows still buffered', async () => {
  await api.exec('CREATE STREAM src2 (k string, n int32)');
  await api.exec(
    `CREATE EXTERNAL TABLE sink2 (k string, n int32) SETTINGS type='s3', ${keys()}, write_to='si2/part.json', s3_max_upload_idle_seconds=3600`,
  );
  const q = await api.start('INSERT INTO sink2 SELECT k, n FROM src2');
  await api.ingest(
    'src2',
    ['k', 'n'],
    [
      ['x', 1],
      ['y', 2],
    ],
  );
  await q.waitForScanned(2);
  assert.deepEqual(await s3.keys('si2/'), [], 'buffered for the idle time');
  await q.cancel();
  assert.deepEqual(await objectRows('si2/'), ['x:1', 'y:2']);
});

test('a SELECT of another width is refused before anything runs', async () => {
  await api.exec('CREATE STREAM src3 (k string, n int32)');
  await api.exec(
    `CREATE EXTERNAL TABLE sink3 (k string, n int32) SETTINGS type='s3', ${keys()}, write_to='si3/part.json'`,
  );
  const e = await api.startError('INSERT INTO sink3 (k, n) SELECT k FROM src3');
  assert.equal(e.status, 400);
  assert.match(e.message, /names 2 columns but its SELECT has 1/);
  const ro = await api.startError(
    'INSERT INTO sink3 SETTINGS s3_max_upload_idle_secs = 1 SELECT k, n FROM src3',
  );
  assert.equal(ro.status, 400);
  assert.match(ro.message, /unknown setting s3_max_upload_idle_secs/);
});

test('a server stop ends the streaming INSERT and uploads what it buffered', async () => {
  await api.exec('CREATE STREAM src4 (k string, n int32)');
  await api.exec(
    `CREATE EXTERNAL TABLE sink4 (k string, n int32) SETTINGS type='s3', ${keys()}, write_to='si4/part.json', s3_max_upload_idle_seconds=3600`,
  );
  const q = await api.start('INSERT INTO sink4 SELECT k, n FROM src4');
  await api.ingest('src4', ['k', 'n'], [['s', 7]]);
  await q.waitForScanned(1);
  assert.deepEqual(await s3.keys('si4/'), []);
  api = await StreamingApi.attach(await api.h.restart());
  assert.deepEqual(await objectRows('si4/'), ['s:7']);
});

test('when the last upload fails, the buffered rows stay on disk and the next start uploads them', async () => {
  const port = await freePort();
  let proxy = await startS3RequestLog(s3.endpoint, port);
  await api.exec('CREATE STREAM src5 (k string, n int32)');
  await api.exec(
    `CREATE EXTERNAL TABLE sink5 (k string, n int32) SETTINGS type='s3', endpoint='${proxy.endpoint}/${s3.bucket}', access_key_id='${S3_KEY}', secret_access_key='${S3_SECRET}', write_to='si5/part.json', s3_max_upload_idle_seconds=3600`,
  );
  const q = await api.start('INSERT INTO sink5 SELECT k, n FROM src5');
  await api.ingest(
    'src5',
    ['k', 'n'],
    [
      ['p', 1],
      ['q', 2],
    ],
  );
  await q.waitForScanned(2);
  await proxy.close(); // the store is unreachable when the INSERT ends
  await q.cancel();
  assert.deepEqual(await s3.keys('si5/'), []);
  const root = join(api.h.dataDir, 'external_writes');
  const kept = (await readdir(root)).filter((d) => d.startsWith('insert-'));
  assert.equal(kept.length, 1, 'the spool is kept');
  proxy = await startS3RequestLog(s3.endpoint, port);
  try {
    api = await StreamingApi.attach(await api.h.restart());
    assert.deepEqual(await waitForRows('si5/', 2), ['p:1', 'q:2']);
    for (let i = 0; (await readdir(root)).some((d) => d.startsWith('insert-')); i++) {
      assert.ok(i < 600, 'the spool is removed after its upload');
      await sleep(100);
    }
  } finally {
    await proxy.close();
  }
});
