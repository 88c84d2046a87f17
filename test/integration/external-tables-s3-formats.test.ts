/**
 * s3 external tables: every data format and compression method written and read back (objects
 * checked with the AWS SDK client), TSV header lines skipped, Protobuf through a format schema,
 * INSERT SETTINGS, and the three credential paths (keys in settings, config_file, environment
 * through the AWS provider chain, role assumption refused) with no secret in any error.
 */
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type Harness, startHarness } from '../helpers/harness.ts';
import { type LocalS3, S3_KEY, S3_SECRET, startLocalS3 } from '../helpers/s3-server.ts';

let h: Harness;
let s3: LocalS3;
let tmp: string;
before(async () => {
  s3 = await startLocalS3();
  h = await startHarness();
  tmp = await mkdtemp(join(tmpdir(), 'tributary-s3-creds-'));
});
after(async () => {
  await h.close();
  await s3.close();
});

async function exec(sql: string): Promise<void> {
  const r = await h.call('POST', '/v1beta2/queries', { body: { sql } });
  assert.equal(r.statusCode, 204, `${sql}: ${r.body}`);
}

async function fails(sql: string): Promise<{ status: number; code: number; message: string; body: string }> {
  const r = await h.call('POST', '/v1beta2/queries', { body: { sql } });
  assert.ok(r.statusCode >= 400, `${sql} should fail: ${r.statusCode} ${r.body}`);
  const body = r.json() as { code: number; message: string };
  return { status: r.statusCode, code: body.code, message: body.message, body: r.body };
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

const at = () => `endpoint='${s3.endpoint}/${s3.bucket}'`;
const keys = () => `${at()}, access_key_id='${S3_KEY}', secret_access_key='${S3_SECRET}'`;

test('every compression method round-trips; the extension infers it; objects carry its magic bytes', async () => {
  const magic: Record<string, string> = {
    gzip: '1f8b',
    zstd: '28b52ffd',
    xz: 'fd377a585a00',
    lz4: '04224d18',
  };
  for (const method of ['gzip', 'deflate', 'br', 'xz', 'zstd', 'lz4', 'snappy', 'none']) {
    const name = `c_${method}`;
    await exec(
      `CREATE EXTERNAL TABLE ${name} (n int64) SETTINGS type='s3', ${keys()}, write_to='c/${method}/d.csv', compression_method='${method}'`,
    );
    await exec(`INSERT INTO ${name} SELECT number FROM numbers(1000)`);
    assert.deepEqual(await rows(`SELECT count(), sum(n) FROM ${name}`), [[1000, 499500]], method);
    const [key] = await s3.keys(`c/${method}/`);
    const bytes = await s3.get(key as string);
    if (magic[method])
      assert.equal(bytes.subarray(0, magic[method].length / 2).toString('hex'), magic[method], method);
    if (method === 'none') assert.equal(bytes.toString().split('\n')[1], '1');
  }
  // Inferred from the key: .csv.zst is CSV compressed with zstd.
  await exec(
    `CREATE EXTERNAL TABLE inferred (n int64) SETTINGS type='s3', ${keys()}, write_to='ci/d.csv.zst'`,
  );
  await exec('INSERT INTO inferred VALUES (7), (8)');
  const [key] = await s3.keys('ci/');
  assert.match(key as string, /^ci\/d\.\d{17}\.csv\.zst$/);
  assert.equal((await s3.get(key as string)).subarray(0, 4).toString('hex'), '28b52ffd');
  assert.deepEqual(await rows('SELECT sum(n) FROM inferred'), [[15]]);
  // bz2 (Tributary's own codec, the engine has none): external-tables-s3-bz2.test.ts.
});

test('formats: JSONEachRow, CSV, TSV, Avro and RawBLOB round-trip; TSV header lines are skipped', async () => {
  for (const [format, ext] of [
    ['JSONEachRow', 'json'],
    ['CSV', 'csv'],
    ['TabSeparated', 'tsv'],
    ['Avro', 'avro'],
  ]) {
    const name = `f_${ext}`;
    await exec(
      `CREATE EXTERNAL TABLE ${name} (id int32, name string, tags array(string)) SETTINGS type='s3', ${keys()}, write_to='f/${ext}/d.${ext}', data_format='${format}'`,
    );
    await exec(`INSERT INTO ${name} VALUES (1, 'a', ['x', 'y']), (2, 'b', [])`);
    assert.deepEqual(
      await rows(`SELECT id, name, tags FROM ${name} ORDER BY id`),
      [
        [1, 'a', ['x', 'y']],
        [2, 'b', []],
      ],
      format,
    );
  }
  const [jsonKey] = await s3.keys('f/json/');
  assert.equal(
    (await s3.get(jsonKey as string)).toString().split('\n')[0],
    '{"id":1,"name":"a","tags":["x","y"]}',
  );
  // Data format inferred from the extension when data_format is not set.
  await exec(
    `CREATE EXTERNAL TABLE f_inferred (id int32, name string) SETTINGS type='s3', ${keys()}, read_from='f/json/*.json'`,
  );
  assert.deepEqual(await rows('SELECT count() FROM f_inferred'), [[2]]);
  // RawBLOB (the default): one string column holding each object's bytes.
  await s3.put('raw/a.txt', 'hello\nworld\n');
  await exec(`CREATE EXTERNAL TABLE raw (body string) SETTINGS type='s3', ${keys()}, read_from='raw/*.txt'`);
  assert.deepEqual(await rows('SELECT body, _file FROM raw'), [['hello\nworld\n', 'a.txt']]);
  // A TSV with two header lines, written by someone else.
  await s3.put('tsv/h.tsv', 'generated by x\nid\tname\n1\tone\n2\ttwo\n');
  await exec(
    `CREATE EXTERNAL TABLE tsv2 (id int32, name string) SETTINGS type='s3', ${keys()}, read_from='tsv/*.tsv', data_format='TSV', input_format_tsv_skip_first_lines=2`,
  );
  assert.deepEqual(await rows('SELECT id, name FROM tsv2 ORDER BY id'), [
    [1, 'one'],
    [2, 'two'],
  ]);
});

test('Protobuf through a format schema: CREATE FORMAT SCHEMA, write, read back; SHOW and DROP', async () => {
  await exec(
    `CREATE FORMAT SCHEMA ev AS 'syntax = "proto3"; message Event { int64 id = 1; string name = 2; }' TYPE Protobuf`,
  );
  assert.deepEqual(await rows('SHOW FORMAT SCHEMAS'), [['ev', 'Protobuf']]);
  await exec(
    `CREATE EXTERNAL TABLE pb (id int64, name string) SETTINGS type='s3', ${keys()}, write_to='pb/e.bin', data_format='Protobuf', format_schema='ev:Event'`,
  );
  await exec(`INSERT INTO pb VALUES (1, 'one'), (2, 'two')`);
  const [key] = await s3.keys('pb/');
  const bytes = await s3.get(key as string);
  // Length-delimited messages: the first is 0x07 bytes long: field 1 (08 01), field 2 (12 03 'one').
  assert.equal(bytes.subarray(0, 8).toString('hex'), `070801120${3}${Buffer.from('one').toString('hex')}`);
  assert.deepEqual(await rows('SELECT id, name FROM pb ORDER BY id'), [
    [1, 'one'],
    [2, 'two'],
  ]);
  const missing = await fails(
    `CREATE EXTERNAL TABLE pb2 (id int64) SETTINGS type='s3', ${keys()}, write_to='pb/x.bin', data_format='Protobuf', format_schema='nope:Event'`,
  );
  assert.equal(missing.code, 2611);
  const [[shown]] = (await rows('SHOW CREATE FORMAT SCHEMA ev')) as [[string]];
  assert.equal(
    shown,
    'CREATE FORMAT SCHEMA ev AS\n$$\nsyntax = "proto3"; message Event { int64 id = 1; string name = 2; }\n$$\nTYPE Protobuf',
  );
  // Bad schemas get Proton's codes.
  const codes: [string, number][] = [
    [`CREATE FORMAT SCHEMA x AS 'a' TYPE BadType`, 73],
    [`CREATE FORMAT SCHEMA x AS 'a' TYPE JSON`, 2613],
    [`CREATE FORMAT SCHEMA x AS '' TYPE Protobuf`, 36],
    [`CREATE FORMAT SCHEMA x AS 'bad' TYPE Protobuf`, 434],
    [`CREATE FORMAT SCHEMA x AS 'bad' TYPE Avro`, 117],
    ['SHOW CREATE FORMAT SCHEMA x', 2611],
    ['DROP FORMAT SCHEMA x', 2611],
  ];
  for (const [sql, code] of codes) assert.equal((await fails(sql)).code, code, sql);
  await exec('DROP EXTERNAL TABLE pb');
  await exec('DROP FORMAT SCHEMA ev');
  assert.deepEqual(await rows('SHOW FORMAT SCHEMAS'), []);
});

test('INSERT SETTINGS take s3_* limits (checked) and refuse anything else', async () => {
  await exec(
    `CREATE EXTERNAL TABLE lim (n int64) SETTINGS type='s3', ${keys()}, write_to='lim/d.csv', s3_max_put_rps=100`,
  );
  await exec('INSERT INTO lim SETTINGS s3_max_put_rps=50, s3_check_objects_after_upload=true VALUES (1)');
  assert.equal((await s3.keys('lim/')).length, 1);
  const bad = await fails('INSERT INTO lim SETTINGS s3_max_put_rps=-3 VALUES (1)');
  assert.match(bad.message, /setting s3_max_put_rps must be a non-negative integer/);
  const unknown = await fails('INSERT INTO lim SETTINGS max_threads=2 VALUES (1)');
  assert.equal(unknown.code, 11203);
});

test('credentials from a config_file: its keys are used, and a wrong key fails without the secret', async () => {
  const good = join(tmp, 'good.conf');
  await writeFile(good, `# s3 keys\naccess_key_id = ${S3_KEY}\nsecret_access_key = file-secret-1\n`);
  await exec(
    `CREATE EXTERNAL TABLE cf (n int64) SETTINGS type='s3', ${at()}, config_file='${good}', write_to='cf/d.csv'`,
  );
  await exec('INSERT INTO cf VALUES (1)');
  assert.deepEqual(await rows('SELECT count() FROM cf'), [[1]]);
  const bad = join(tmp, 'bad.conf');
  await writeFile(bad, 'access_key_id=UNKNOWNKEY\nsecret_access_key=file-secret-2\n');
  await exec(
    `CREATE EXTERNAL TABLE cfbad (n int64) SETTINGS type='s3', ${at()}, config_file='${bad}', write_to='cf/d.csv'`,
  );
  // A SELECT fails in its event stream (the query had started), an INSERT with a 4xx.
  const select = await h.call('POST', '/v1beta2/queries', { body: { sql: 'SELECT count() FROM cfbad' } });
  assert.match(select.body, /"status":"failed".*InvalidAccessKeyId/);
  assert.ok(!select.body.includes('file-secret-2'));
  const insert = await fails('INSERT INTO cfbad VALUES (1)');
  assert.match(insert.message, /403/, insert.message);
  assert.ok(!insert.body.includes('file-secret-2'), insert.body);
  const none = await fails(
    `CREATE EXTERNAL TABLE cfnone (n int64) SETTINGS type='s3', ${at()}, config_file='${join(tmp, 'absent.conf')}', write_to='x/d.csv'`,
  );
  assert.equal(none.code, 11205);
  assert.match(none.message, /config_file .* cannot be read \(ENOENT\)/);
});

test('environment credentials through the AWS provider chain; role assumption is refused', async () => {
  const saved = { ...process.env };
  try {
    process.env.AWS_ACCESS_KEY_ID = S3_KEY;
    process.env.AWS_SECRET_ACCESS_KEY = 'env-secret-1';
    await exec(
      `CREATE EXTERNAL TABLE envt (n int64) SETTINGS type='s3', ${at()}, use_environment_credentials=true, write_to='env/d.csv'`,
    );
    await exec('INSERT INTO envt VALUES (1), (2)');
    assert.deepEqual(await rows('SELECT count() FROM envt'), [[2]]);
    // The chain's first step really is the environment: an unknown key id from it is refused.
    process.env.AWS_ACCESS_KEY_ID = 'UNKNOWNKEY';
    const e = await fails('INSERT INTO envt VALUES (3)');
    assert.match(e.message, /403/);
    assert.ok(!e.body.includes('env-secret-1'));
    // No keys anywhere but a role to assume: refused with the spec's words.
    delete process.env.AWS_ACCESS_KEY_ID;
    delete process.env.AWS_SECRET_ACCESS_KEY;
    process.env.AWS_SHARED_CREDENTIALS_FILE = join(tmp, 'no-credentials');
    process.env.AWS_CONFIG_FILE = join(tmp, 'no-config');
    process.env.AWS_ROLE_ARN = 'arn:aws:iam::123456789012:role/reader';
    process.env.AWS_WEB_IDENTITY_TOKEN_FILE = join(tmp, 'token');
    const role = await fails(
      `CREATE EXTERNAL TABLE envrole (n int64) SETTINGS type='s3', ${at()}, use_environment_credentials=true, write_to='env/d.csv'`,
    );
    assert.equal(role.code, 11205);
    assert.match(
      role.message,
      /role assumption as a credential method is unsupported; use environment or static credentials/,
    );
  } finally {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  }
});
