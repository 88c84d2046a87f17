/**
 * Continuous writing into an s3 external table: `CREATE MATERIALIZED VIEW v INTO <s3 table>`.
 * Rows are spooled until s3_min_upload_file_size or s3_max_upload_idle_seconds, new objects keep
 * being created while data flows, and a restart neither loses nor duplicates rows (objects read
 * back with the AWS SDK client and every row counted).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Harness, startHarness } from '../helpers/harness.ts';
import { type LocalS3, S3_KEY, S3_SECRET, startLocalS3 } from '../helpers/s3-server.ts';

let h: Harness;
let s3: LocalS3;
before(async () => {
  s3 = await startLocalS3();
  h = await startHarness();
});
after(async () => {
  await h.close();
  await s3.close();
});

async function exec(sql: string): Promise<void> {
  const r = await h.call('POST', '/v1beta2/queries', { body: { sql } });
  assert.equal(r.statusCode, 204, `${sql}: ${r.body}`);
}

const keys = () =>
  `endpoint='${s3.endpoint}/${s3.bucket}', access_key_id='${S3_KEY}', secret_access_key='${S3_SECRET}'`;

/** Every row of every object under `prefix`, as `level:n` strings, sorted. */
async function objectRows(prefix: string): Promise<string[]> {
  const out: string[] = [];
  for (const k of await s3.keys(prefix))
    for (const line of (await s3.get(k)).toString().split('\n'))
      if (line) {
        const r = JSON.parse(line) as { level: string; n: number };
        out.push(`${r.level}:${r.n}`);
      }
  return out.sort();
}

/** Poll the store until `prefix` holds `count` rows (or fail after a generous deadline). */
async function waitForRows(prefix: string, count: number): Promise<string[]> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const rows = await objectRows(prefix);
    if (rows.length >= count || Date.now() > deadline) return rows;
    await sleep(200);
  }
}

const expected = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => `${(from + i) % 2 ? 'odd' : 'even'}:${from + i}`);

test('a materialized view INTO an s3 table uploads after the idle time, a new object per batch', async () => {
  await exec('CREATE STREAM ev (level string, n int32)');
  await exec(
    `CREATE EXTERNAL TABLE out (level string, n int32) SETTINGS type='s3', ${keys()}, write_to='mv/part.json', s3_max_upload_idle_seconds=1`,
  );
  await exec('CREATE MATERIALIZED VIEW v INTO out AS SELECT level, n FROM ev');
  const values = (from: number, to: number) =>
    expected(from, to)
      .map((r) => {
        const [level, n] = r.split(':');
        return `('${level}', ${n})`;
      })
      .join(', ');
  await exec(`INSERT INTO ev (level, n) VALUES ${values(1, 10)}`);
  assert.deepEqual(await waitForRows('mv/', 10), expected(1, 10).sort());
  const first = await s3.keys('mv/');
  for (const k of first) assert.match(k, /^mv\/part\.\d{17}\.json$/);
  await exec(`INSERT INTO ev (level, n) VALUES ${values(11, 20)}`);
  assert.deepEqual(await waitForRows('mv/', 20), expected(1, 20).sort());
  assert.ok((await s3.keys('mv/')).length > first.length, 'new objects while data flows');
  // The table reads back what the view wrote.
  const r = await h.call('POST', '/v1beta2/queries', { body: { sql: 'SELECT count(), sum(n) FROM out' } });
  assert.match(r.body, /data: \[\[20, 210\]\]/);
  // It cannot be dropped while the view writes into it.
  const drop = await h.call('POST', '/v1beta2/queries', { body: { sql: 'DROP EXTERNAL TABLE out' } });
  assert.equal(drop.statusCode, 409, drop.body);
});

test('s3_min_upload_file_size: a full buffer is uploaded at once', async () => {
  await exec('CREATE STREAM ev2 (level string, n int32)');
  await exec(
    `CREATE EXTERNAL TABLE out2 (level string, n int32) PARTITION BY level SETTINGS type='s3', ${keys()}, write_to='mv2/{_partition_id}/p.json', s3_min_upload_file_size=1, s3_max_upload_idle_seconds=3600`,
  );
  await exec('CREATE MATERIALIZED VIEW v2 INTO out2 AS SELECT level, n FROM ev2');
  await exec(`INSERT INTO ev2 (level, n) VALUES ('odd', 1), ('even', 2)`);
  assert.deepEqual(await waitForRows('mv2/', 2), ['even:2', 'odd:1']);
  const k = await s3.keys('mv2/');
  assert.match(k[0] as string, /^mv2\/even\/p\.\d{17}\.json$/);
  assert.match(k[1] as string, /^mv2\/odd\/p\.\d{17}\.json$/);
});

test('a restart neither loses nor duplicates rows written through the view', async () => {
  await exec('CREATE STREAM ev3 (level string, n int32)');
  await exec(
    `CREATE EXTERNAL TABLE out3 (level string, n int32) SETTINGS type='s3', ${keys()}, write_to='mv3/part.json', s3_max_upload_idle_seconds=2`,
  );
  await exec('CREATE MATERIALIZED VIEW v3 INTO out3 AS SELECT level, n FROM ev3');
  for (let i = 1; i <= 60; i += 10) {
    const rows = expected(i, i + 9).map((r) => {
      const [level, n] = r.split(':');
      return `('${level}', ${n})`;
    });
    await exec(`INSERT INTO ev3 (level, n) VALUES ${rows.join(', ')}`);
  }
  // Stop while rows are still spooled (the idle time has not passed), then start again.
  h = await h.restart();
  for (let i = 61; i <= 80; i += 10) {
    const rows = expected(i, i + 9).map((r) => {
      const [level, n] = r.split(':');
      return `('${level}', ${n})`;
    });
    await exec(`INSERT INTO ev3 (level, n) VALUES ${rows.join(', ')}`);
  }
  const got = await waitForRows('mv3/', 80);
  // Give a duplicate the time to show up: the next idle period passes with nothing new.
  await sleep(3000);
  assert.deepEqual(await objectRows('mv3/'), expected(1, 80).sort());
  assert.equal(got.length, 80);
});
