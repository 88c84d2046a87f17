// Issue 15: a streaming `INSERT INTO <s3 table> SELECT ... FROM <stream>` ends with the server (it
// is a query, as in Proton), but the rows it spooled are not lost: after SIGKILL the next start
// uploads them as an object of the table (read back with the AWS SDK) and removes the spool.
// Without the upload at start, the rows stay in <data>/external_writes and the bucket stays empty.

import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { S3_KEY, S3_SECRET, startLocalS3 } from '../helpers/s3-server.ts';
import { freePort, type Run, serve, waitForInfo } from '../helpers/serve-process.ts';

const PASSWORD = 's3-insert-crash-password';
const auth = { authorization: `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}` };

/** Lengths (bytes) of the rows spooled by streaming INSERTs under `data`. */
async function spooled(data: string): Promise<number[]> {
  const root = join(data, 'external_writes');
  const dirs = await readdir(root).catch(() => [] as string[]);
  const out: number[] = [];
  for (const d of dirs.filter((x) => x.startsWith('insert-'))) {
    const state = await readFile(join(root, d, 'state.json'), 'utf8').catch(() => '{"length":0}');
    out.push((JSON.parse(state) as { length: number }).length);
  }
  return out;
}

test('rows a streaming INSERT spooled before SIGKILL are uploaded at the next start', async () => {
  const s3 = await startLocalS3();
  const data = await mkdtemp(join(tmpdir(), 'tributary-s3-insert-crash-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}/default/api`;
  const env = { TRIBUTARY_DATA: data, TRIBUTARY_LOG_LEVEL: 'warn', TRIBUTARY_ADMIN_PASSWORD: PASSWORD };
  const call = (path: string, body: unknown, signal?: AbortSignal) =>
    fetch(`${base}${path}`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      ...(signal ? { signal } : {}),
    });
  const ddl = async (sql: string) => {
    const r = await call('/v1beta2/exec', { sql, type: 'ddl' });
    assert.ok(r.status < 300, `${sql}: ${r.status} ${await r.text()}`);
  };
  let run: Run = serve(['--port', String(port)], env);
  const query = new AbortController();
  try {
    await waitForInfo(`${base}/info`, run);
    await ddl('CREATE STREAM src (k string, n int32)');
    await ddl(
      `CREATE EXTERNAL TABLE sink (k string, n int32) SETTINGS type='s3', endpoint='${s3.endpoint}/${s3.bucket}', access_key_id='${S3_KEY}', secret_access_key='${S3_SECRET}', write_to='crash/part.json', s3_max_upload_idle_seconds=3600`,
    );
    const started = await call(
      '/v1beta2/queries',
      { sql: 'INSERT INTO sink SELECT k, n * 2 FROM src' },
      query.signal,
    );
    assert.equal(started.status, 200);
    const reading = started.body?.getReader();
    await reading?.read(); // the query event: the INSERT runs
    const ingest = await call('/v1beta2/streams/src/ingest', {
      columns: ['k', 'n'],
      data: [
        ['a', 1],
        ['b', 2],
        ['c', 3],
      ],
    });
    assert.equal(ingest.status, 200);
    // The three rows are in the spool (an hour of idle time before any upload).
    for (let i = 0; ; i++) {
      const lengths = await spooled(data);
      if (lengths.length === 1 && (lengths[0] as number) > 0) break;
      assert.ok(i < 600, `the rows reach the spool: ${JSON.stringify(lengths)}`);
      await sleep(100);
    }
    assert.deepEqual(await s3.keys('crash/'), []);
    run.kill('SIGKILL');
    await run.exit;
    query.abort();

    run = serve(['--port', String(port)], env);
    await waitForInfo(`${base}/info`, run);
    let keys: string[] = [];
    for (let i = 0; i < 600 && keys.length === 0; i++) {
      keys = await s3.keys('crash/');
      if (!keys.length) await sleep(100);
    }
    assert.equal(keys.length, 1, 'one object with the spooled rows');
    assert.match(keys[0] as string, /^crash\/part\.\d{17}\.json$/);
    const rows = (await s3.get(keys[0] as string))
      .toString()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { k: string; n: number });
    assert.deepEqual(rows.map((r) => `${r.k}:${r.n}`).sort(), ['a:2', 'b:4', 'c:6']);
    for (let i = 0; ; i++) {
      if ((await spooled(data)).length === 0) break;
      assert.ok(i < 600, 'the spool is removed once uploaded');
      await sleep(100);
    }
  } finally {
    query.abort();
    run.kill('SIGKILL');
    await run.exit;
    await s3.close();
    await rm(data, { recursive: true, force: true });
  }
});
