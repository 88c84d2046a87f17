/**
 * bz2 objects of s3 external tables, which the engine has no codec for: Tributary compresses what
 * INSERT and materialized views write (bzip2) and decompresses what SELECT reads. Objects are
 * checked with the AWS SDK client: the `BZh` magic, and decompressed independently (bzip2 -d).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Harness, startHarness } from '../helpers/harness.ts';
import { startS3RequestLog } from '../helpers/s3-request-log.ts';
import { type LocalS3, S3_KEY, S3_SECRET, startLocalS3 } from '../helpers/s3-server.ts';
import { StreamingApi } from '../helpers/streaming-client.ts';

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

async function rows(sql: string): Promise<unknown[][]> {
  const r = await h.call('POST', '/v1beta2/queries', { body: { sql } });
  assert.equal(r.statusCode, 200, `${sql}: ${r.body}`);
  const out: unknown[][] = [];
  for (const block of r.body.split('\n\n')) {
    const lines = block.split('\n');
    const data = lines
      .filter((l) => l.startsWith('data: '))
      .map((l) => l.slice(6))
      .join('\n');
    if (!data || lines.some((l) => l.startsWith('event: '))) continue;
    out.push(...(JSON.parse(data) as unknown[][]));
  }
  return out;
}

const keys = () =>
  `endpoint='${s3.endpoint}/${s3.bucket}', access_key_id='${S3_KEY}', secret_access_key='${S3_SECRET}'`;

/** bzip2 run by the test itself, independently of Tributary. */
const bunzip = (bytes: Buffer) =>
  execFileSync('/usr/bin/bzip2', ['-d', '-c'], { input: bytes, maxBuffer: 1 << 28 }).toString();
const bzip = (text: string) => execFileSync('/usr/bin/bzip2', ['-z', '-c'], { input: text });

test('INSERT writes bz2 objects (inferred from .bz2, and given explicitly) that SELECT reads back', async () => {
  await exec(`CREATE EXTERNAL TABLE b1 (n int64) SETTINGS type='s3', ${keys()}, write_to='b1/d.csv.bz2'`);
  await exec('INSERT INTO b1 SELECT number FROM numbers(1000)');
  await exec('INSERT INTO b1 VALUES (1000), (1001)');
  const written = await s3.keys('b1/');
  assert.equal(written.length, 2);
  for (const k of written) {
    assert.match(k, /^b1\/d\.\d{17}\.csv\.bz2$/);
    const bytes = await s3.get(k);
    assert.equal(bytes.subarray(0, 3).toString(), 'BZh', k);
  }
  const lines = (await Promise.all(written.map(async (k) => bunzip(await s3.get(k)))))
    .join('')
    .split('\n')
    .filter(Boolean)
    .map(Number)
    .sort((a, b) => a - b);
  assert.equal(lines.length, 1002);
  assert.equal(lines[1001], 1001);
  assert.deepEqual(await rows('SELECT count(), sum(n) FROM b1'), [[1002, 501501]]);

  // compression_method='bz2' on a key without the extension.
  await exec(
    `CREATE EXTERNAL TABLE b2 (k string, n int32) SETTINGS type='s3', ${keys()}, write_to='b2/d.json', compression_method='bz2'`,
  );
  await exec(`INSERT INTO b2 VALUES ('a', 1), ('b', 2)`);
  const [k2] = await s3.keys('b2/');
  const text = bunzip(await s3.get(k2 as string));
  assert.deepEqual(
    text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l)),
    [
      { k: 'a', n: 1 },
      { k: 'b', n: 2 },
    ],
  );
  assert.deepEqual(await rows('SELECT k, n FROM b2 ORDER BY n'), [
    ['a', 1],
    ['b', 2],
  ]);
});

test('PARTITION BY: one bz2 object per partition, the template filled', async () => {
  await exec(
    `CREATE EXTERNAL TABLE bp (level string, n int32) PARTITION BY level SETTINGS type='s3', ${keys()}, write_to='bp/{_partition_id}/p.json.bz2'`,
  );
  await exec(`INSERT INTO bp VALUES ('odd', 1), ('even', 2), ('odd', 3)`);
  const k = await s3.keys('bp/');
  assert.equal(k.length, 2);
  assert.match(k[0] as string, /^bp\/even\/p\.\d{17}\.json\.bz2$/);
  assert.match(k[1] as string, /^bp\/odd\/p\.\d{17}\.json\.bz2$/);
  assert.equal(
    bunzip(await s3.get(k[1] as string))
      .split('\n')
      .filter(Boolean).length,
    2,
  );
  assert.deepEqual(await rows('SELECT level, sum(n) FROM bp GROUP BY level ORDER BY level'), [
    ['even', 2],
    ['odd', 4],
  ]);
  assert.deepEqual(await rows(`SELECT _file, n FROM bp WHERE level = 'even'`), [
    [(k[0] as string).split('/').pop(), 2],
  ]);
});

test('read_from over bz2 objects written by others: globs, new, changed and removed objects', async () => {
  await s3.put('in/a.csv.bz2', bzip('1,"x"\n2,"y"\n'));
  await s3.put('in/b.csv.bz2', bzip('3,"z"\n'));
  await s3.put('in/c.csv', '100,"plain"\n');
  await exec(
    `CREATE EXTERNAL TABLE bin (k int32, v string) SETTINGS type='s3', ${keys()}, read_from='in/*.csv.bz2'`,
  );
  assert.deepEqual(await rows('SELECT count(), sum(k) FROM bin'), [[3, 6]]);
  assert.deepEqual(await rows('SELECT _file, count() FROM bin GROUP BY _file ORDER BY _file'), [
    ['a.csv.bz2', 2],
    ['b.csv.bz2', 1],
  ]);
  // A new object, a rewritten one and a removed one are seen by the next SELECT.
  await s3.put('in/d.csv.bz2', bzip('10,"new"\n'));
  await s3.put('in/a.csv.bz2', bzip('5,"changed"\n'));
  await s3.client.send(
    new (await import('@aws-sdk/client-s3')).DeleteObjectCommand({ Bucket: s3.bucket, Key: 'in/b.csv.bz2' }),
  );
  assert.deepEqual(await rows('SELECT v FROM bin ORDER BY k'), [['changed'], ['new']]);
  // {a,b} alternatives and a range.
  await exec(
    `CREATE EXTERNAL TABLE bsel (k int32, v string) SETTINGS type='s3', ${keys()}, read_from='in/{a,d}.csv.bz2', compression_method='bz2'`,
  );
  assert.deepEqual(await rows('SELECT sum(k) FROM bsel'), [[15]]);
  // DROP removes the table's copies (and every engine table over them).
  assert.ok(existsSync(join(h.dataDir, 'external_reads', 'default.bin')));
  await exec('DROP EXTERNAL TABLE bin');
  assert.ok(!existsSync(join(h.dataDir, 'external_reads', 'default.bin')));
  await exec(
    `CREATE EXTERNAL TABLE bin (k int32, v string) SETTINGS type='s3', ${keys()}, read_from='in/*.csv.bz2'`,
  );
  assert.deepEqual(await rows('SELECT sum(k) FROM bin'), [[15]]);
});

test('an object that is not bz2: a clear error naming it (code 11207), no secret', async () => {
  await s3.put('bad/x.csv.bz2', 'not bz2 at all\n');
  await exec(`CREATE EXTERNAL TABLE bbad (k int32) SETTINGS type='s3', ${keys()}, read_from='bad/*.csv.bz2'`);
  const r = await h.call('POST', '/v1beta2/queries', { body: { sql: 'SELECT * FROM bbad' } });
  assert.equal(r.statusCode, 502, r.body);
  const body = r.json() as { code: number; message: string };
  assert.equal(body.code, 11207);
  assert.match(body.message, /bad\/x\.csv\.bz2/);
  assert.doesNotMatch(r.body, new RegExp(S3_SECRET));
});

test('a materialized view INTO a bz2 table uploads bz2 objects', async () => {
  await exec('CREATE STREAM bev (n int32)');
  await exec(
    `CREATE EXTERNAL TABLE bout (n int32) SETTINGS type='s3', ${keys()}, write_to='bmv/part.csv.bz2', s3_max_upload_idle_seconds=1`,
  );
  await exec('CREATE MATERIALIZED VIEW bmv INTO bout AS SELECT n FROM bev');
  await exec('INSERT INTO bev (n) VALUES (1), (2), (3)');
  const deadline = Date.now() + 60_000;
  let k: string[] = [];
  while (Date.now() < deadline) {
    k = await s3.keys('bmv/');
    if (k.length) break;
    await sleep(200);
  }
  assert.equal(k.length, 1);
  const bytes = await s3.get(k[0] as string);
  assert.equal(bytes.subarray(0, 3).toString(), 'BZh');
  assert.deepEqual(bunzip(bytes).split('\n').filter(Boolean).map(Number).sort(), [1, 2, 3]);
  assert.deepEqual(await rows('SELECT sum(n) FROM bout'), [[6]]);
});

test('a streaming query joining a stream with a bz2 table reads the objects as of its start', async () => {
  await s3.put('dim/names.csv.bz2', bzip('1,"one"\n2,"two"\n'));
  await exec(
    `CREATE EXTERNAL TABLE bdim (k int32, name string) SETTINGS type='s3', ${keys()}, read_from='dim/*.csv.bz2'`,
  );
  await exec('CREATE STREAM bclicks (k int32, v int32)');
  const api = await StreamingApi.attach(h);
  const q = await api.start('SELECT c.k, d.name FROM bclicks AS c INNER JOIN bdim AS d ON c.k = d.k');
  await api.ingest(
    'bclicks',
    ['k', 'v'],
    [
      [2, 20],
      [3, 30],
    ],
  );
  assert.deepEqual(await q.waitForRows(1), [[2, 'two']]);
  await q.cancel();
});

test('a large bz2 object goes up in parts under the s3_* upload limits; a small one in one PUT', async () => {
  const log = await startS3RequestLog(s3.endpoint);
  try {
    const through = `endpoint='${log.endpoint}/${s3.bucket}', access_key_id='${S3_KEY}', secret_access_key='${S3_SECRET}'`;
    // Hex digests compress to about half: a few MiB of bz2, above a 1 MiB single-part limit.
    await exec(
      `CREATE EXTERNAL TABLE bbig (n int64, h string) SETTINGS type='s3', ${through}, write_to='bbig/d.csv.bz2', s3_max_single_part_upload_size=1048576, s3_min_upload_part_size=524288, s3_upload_part_size_multiply_factor=2, s3_upload_part_size_multiply_parts_count_threshold=2`,
    );
    await exec(
      'INSERT INTO bbig SETTINGS s3_check_objects_after_upload = 1 SELECT number, hex(SHA256(toString(number))) FROM numbers(60000)',
    );
    const [key] = await s3.keys('bbig/');
    assert.ok(key);
    const bytes = await s3.get(key);
    assert.ok(bytes.length > 2 * 1048576, `a large object: ${bytes.length} bytes`);
    const mine = log.requests.filter((r) => r.includes(key));
    assert.equal(mine.filter((r) => r === `POST ${s3.bucket}/${key} uploads`).length, 1, mine.join('\n'));
    const parts = mine.filter((r) => r.includes('partNumber='));
    assert.ok(parts.length >= 3, mine.join('\n'));
    // Parts of 512 KiB, doubled every two parts; the last one holds the rest.
    const sizes = parts.map((r) => Number(r.split(' ').at(-1)));
    assert.deepEqual(sizes.slice(0, 3), [524288, 524288, 1048576]);
    assert.equal(
      sizes.reduce((a, b) => a + b, 0),
      bytes.length,
    );
    assert.ok(mine.includes(`POST ${s3.bucket}/${key} uploadId`), 'the upload is completed');
    assert.ok(!mine.some((r) => /^PUT \S+ \d+$/.test(r)), 'no single-part PUT of it');
    assert.ok(mine.includes(`HEAD ${s3.bucket}/${key}`), 'checked after the upload');
    const lines = bunzip(bytes).split('\n').filter(Boolean);
    assert.equal(lines.length, 60000);
    assert.deepEqual(await rows('SELECT count(), sum(n), count(DISTINCT h) FROM bbig'), [
      [60000, 1799970000, 60000],
    ]);

    // Under the engine's defaults (32 MiB single-part limit) the same object is one PUT.
    await exec(
      `CREATE EXTERNAL TABLE bsmall (n int64) SETTINGS type='s3', ${through}, write_to='bsmall/d.csv.bz2'`,
    );
    await exec('INSERT INTO bsmall SELECT number FROM numbers(1000)');
    const [small] = await s3.keys('bsmall/');
    const smallRequests = log.requests.filter((r) => r.includes(small as string));
    assert.equal(smallRequests.length, 1, smallRequests.join('\n'));
    assert.match(smallRequests[0] as string, /^PUT \S+ \d+$/);
  } finally {
    await log.close();
  }
});
