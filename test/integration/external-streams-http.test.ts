/**
 * `CREATE EXTERNAL STREAM ... SETTINGS type='http'` against a real local HTTP receiver: INSERT INTO
 * ... SELECT posts the rows (JSONEachRow and Template), a materialized view INTO it delivers
 * continuously, exactly once by key, also through a failing receiver; REST list/get/delete with
 * secrets masked; reads refused (write-only); bad settings named; an unreachable receiver fails the
 * INSERT with DELIVERY_FAILED; the topology links the view to it.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Harness, startHarness } from '../helpers/harness.ts';
import { HttpReceiver } from '../helpers/http-receiver.ts';

let h: Harness;
let rx: HttpReceiver;
before(async () => {
  h = await startHarness({ tuning: { mvRetry: { baseMs: 20, maxMs: 200 } } });
  rx = await HttpReceiver.start();
});
after(async () => {
  await rx.close();
  await h.close();
});

async function run(sql: string) {
  return h.call('POST', '/v1beta2/queries', { body: { sql } });
}

async function sql(q: string): Promise<void> {
  const r = await run(q);
  assert.equal(r.statusCode, 204, `${q}: ${r.body}`);
}

async function ingest(stream: string, from: number, n: number): Promise<void> {
  const data = Array.from({ length: n }, (_, i) => [from + i, `v${from + i}`]);
  const r = await h.call('POST', `/v1beta2/streams/${stream}/ingest`, {
    body: { columns: ['id', 'v'], data },
  });
  assert.ok(r.statusCode < 300, r.body);
}

const at = (path: string) => rx.accepted().filter((r) => r.path === path);
const rowsAt = (path: string) =>
  at(path).flatMap((r) =>
    r.body
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { id: number; v: string }),
  );

test('INSERT INTO an http external stream posts the rows; GET masks secrets; reads are refused', async () => {
  await sql('CREATE STREAM ext_src (id int, v string)');
  await ingest('ext_src', 0, 4);
  await sql(
    `CREATE EXTERNAL STREAM hook (id int, v string) SETTINGS type='http', url='${rx.url}/e', http_header_Authorization='Bearer t0ken', http_header_X_Team='data' COMMENT 'to the receiver'`,
  );
  await sql('INSERT INTO hook SELECT id, v FROM table(ext_src) ORDER BY id');
  const reqs = at('/e');
  assert.equal(reqs.length, 1);
  assert.equal(reqs[0]?.headers.authorization, 'Bearer t0ken');
  assert.equal(reqs[0]?.headers.x_team, 'data');
  assert.equal(reqs[0]?.headers['content-type'], 'application/x-ndjson');
  assert.ok(reqs[0]?.headers['idempotency-key']);
  assert.deepEqual(rowsAt('/e'), [
    { id: 0, v: 'v0' },
    { id: 1, v: 'v1' },
    { id: 2, v: 'v2' },
    { id: 3, v: 'v3' },
  ]);

  await sql("INSERT INTO hook (v, id) VALUES ('x', 10), ('y', 1 + 10)");
  assert.equal(at('/e').length, 2);
  assert.deepEqual(rowsAt('/e').slice(4), [
    { v: 'x', id: 10 },
    { v: 'y', id: 11 },
  ]);

  const got = await h.call('GET', '/v1beta2/external_streams/hook');
  assert.equal(got.statusCode, 200, got.body);
  const g = got.json() as {
    name: string;
    type: string;
    description: string;
    columns: { name: string; type: string }[];
    settings: { key: string; value: string }[];
    create_query: string;
  };
  assert.equal(g.type, 'http');
  assert.equal(g.description, 'to the receiver');
  assert.deepEqual(
    g.columns.map((c) => c.name),
    ['id', 'v'],
  );
  const settings = Object.fromEntries(g.settings.map((x) => [x.key, x.value]));
  assert.equal(settings.http_header_Authorization, '******');
  assert.equal(settings.http_header_X_Team, 'data');
  assert.equal(settings.url, `${rx.url}/e`);
  assert.ok(!got.body.includes('t0ken'), got.body);
  assert.match(g.create_query, /^CREATE EXTERNAL STREAM hook \(id int(32)?, v string\) SETTINGS/);
  const stats = await h.call('GET', '/v1beta2/external_streams/hook/stats');
  assert.equal(stats.statusCode, 200, stats.body);
  assert.equal(stats.json().written_eps, 6 / 1800);
  assert.ok(stats.json().written_bps > 0);
  const listed = (await h.call('GET', '/v1beta2/external_streams')).json() as { name: string }[];
  assert.deepEqual(
    listed.map((x) => x.name),
    ['hook'],
  );
  const show = await h.call('POST', '/v1beta2/exec', {
    body: { sql: 'SHOW CREATE STREAM hook', type: 'historical' },
  });
  assert.equal(show.statusCode, 200, show.body);
  assert.ok(!show.body.includes('t0ken') && show.body.includes('******'), show.body);

  const clash = await run('CREATE STREAM hook (a int)');
  assert.equal(clash.statusCode, 409, clash.body);
  await sql('CREATE STREAM IF NOT EXISTS hook (a int)');

  const read = await h.call('POST', '/v1beta2/exec', {
    body: { sql: 'SELECT * FROM hook', type: 'historical' },
  });
  assert.equal(read.statusCode, 400, read.body);
  assert.match(read.json().message, /hook.*http.*only be written/);
  const preview = await h.call('POST', '/v1beta2/external_streams/preview', {
    body: { settings: [{ key: 'type', value: 'http' }] },
  });
  assert.equal(preview.statusCode, 400, preview.body);
});

test('a Template data_format fills the row format; basic auth from username/password', async () => {
  await sql(
    `CREATE EXTERNAL STREAM hook_t (id int, v string) SETTINGS type='http', url='${rx.url}/t', data_format='Template', format_template_row_format='\${id}=\${v:JSON}', format_template_rows_between_delimiter=';', username='u', password='p'`,
  );
  await sql('INSERT INTO hook_t SELECT id, v FROM table(ext_src) WHERE id < 2 ORDER BY id');
  const r = at('/t')[0];
  assert.equal(r?.body, '0="v0";1="v1"');
  assert.equal(r?.headers.authorization, `Basic ${Buffer.from('u:p').toString('base64')}`);
  const g = (await h.call('GET', '/v1beta2/external_streams/hook_t')).json() as {
    settings: { key: string; value: string }[];
  };
  assert.equal(Object.fromEntries(g.settings.map((x) => [x.key, x.value])).password, '******');
  await sql('DROP STREAM hook_t');
});

test('a materialized view INTO an http external stream delivers every row once, also through a failing receiver', async () => {
  await sql(
    `CREATE EXTERNAL STREAM hook_mv (id int, v string) SETTINGS type='http', url='${rx.url}/mv', batch_size=3, retry_backoff_ms=10, retry_backoff_max_ms=50`,
  );
  await sql('CREATE MATERIALIZED VIEW to_hook INTO hook_mv AS SELECT id, v FROM ext_src');
  await ingest('ext_src', 100, 7);
  await rx.until(() => rowsAt('/mv').length >= 7, '7 rows at /mv');
  let failing = 3;
  rx.answer = (r) => (r.path === '/mv' && failing-- > 0 ? { status: 500 } : 'ok');
  await ingest('ext_src', 107, 5);
  await rx.until(() => rowsAt('/mv').length >= 12, '12 rows at /mv');
  rx.answer = () => 'ok';
  const keys = at('/mv').map((r) => String(r.headers['idempotency-key']));
  assert.equal(new Set(keys).size, keys.length, keys.join(' '));
  assert.deepEqual(
    rowsAt('/mv')
      .map((r) => r.id)
      .sort((a, b) => a - b),
    Array.from({ length: 12 }, (_, i) => 100 + i),
  );
  assert.equal(rx.requests.filter((r) => r.path === '/mv' && r.status === 500).length, 3);

  const topo = (await h.call('GET', '/v1beta2/topology')).json() as {
    nodes: { id: string; type: string }[];
    edges: { source: string; target: string }[];
  };
  assert.ok(
    topo.nodes.some((n) => n.id === 'external_stream:default.hook_mv' && n.type === 'external_stream'),
  );
  assert.ok(
    topo.edges.some(
      (e) =>
        e.source === 'materialized_view:default.to_hook' && e.target === 'external_stream:default.hook_mv',
    ),
    JSON.stringify(topo.edges),
  );
  const mv = await h.call('GET', '/v1beta2/materialized_views/to_hook');
  assert.equal(mv.statusCode, 200, mv.body);

  // A restart: the view resumes from its checkpoint; nothing is resent, nothing skipped.
  await h.stop();
  h = await h.restart();
  await ingest('ext_src', 112, 4);
  await rx.until(() => rowsAt('/mv').length >= 16, '16 rows at /mv');
  const after = at('/mv').map((r) => String(r.headers['idempotency-key']));
  assert.equal(new Set(after).size, after.length, after.join(' '));
  assert.deepEqual(
    rowsAt('/mv')
      .map((r) => r.id)
      .sort((a, b) => a - b),
    Array.from({ length: 16 }, (_, i) => 100 + i),
  );

  // Not dropped under the view that writes into it.
  const dropUnder = await run('DROP STREAM hook_mv');
  assert.ok(dropUnder.statusCode >= 400 && dropUnder.statusCode < 500, dropUnder.body);
  await sql('DROP VIEW to_hook');
  assert.equal((await h.call('DELETE', '/v1beta2/external_streams/hook_mv')).statusCode, 204);
  assert.equal((await h.call('GET', '/v1beta2/external_streams/hook_mv')).statusCode, 404);
});

test('bad settings are named; a view INTO it with a column it lacks is refused; an unreachable receiver fails the INSERT', async () => {
  const cases: Array<[string, RegExp]> = [
    ["type='kafka', url='http://x'", /type/],
    ["type='http'", /url/],
    ["type='http', url='ftp://x'", /url/],
    ["type='http', url='http://x', data_format='Parquet'", /data_format/],
    ["type='http', url='http://x', colour='red'", /colour/],
    ["type='http', url='http://x', write_method='DELETE'", /write_method/],
    [
      // biome-ignore lint/suspicious/noTemplateCurlyInString: ClickHouse's Template placeholder, not JS
      "type='http', url='http://x', data_format='Template', format_template_row_format='${nope}'",
      /format_template_row_format/,
    ],
  ];
  for (const [settings, why] of cases) {
    const r = await run(`CREATE EXTERNAL STREAM bad_hook (id int, v string) SETTINGS ${settings}`);
    assert.equal(r.statusCode, 400, `${settings}: ${r.body}`);
    assert.match(r.json().message, why, r.body);
  }
  assert.equal((await h.call('GET', '/v1beta2/external_streams/bad_hook')).statusCode, 404);

  await sql(`CREATE EXTERNAL STREAM narrow (id int) SETTINGS type='http', url='${rx.url}/n'`);
  const wide = await run('CREATE MATERIALIZED VIEW too_wide INTO narrow AS SELECT id, v FROM ext_src');
  assert.ok(wide.statusCode >= 400 && wide.statusCode < 500, wide.body);
  assert.match(wide.body, /v/);

  // DROP DATABASE takes its external streams with it.
  await sql('CREATE DATABASE ext_db');
  await sql(`CREATE EXTERNAL STREAM ext_db.h (id int) SETTINGS type='http', url='${rx.url}/db'`);
  assert.equal((await h.call('GET', '/v1beta2/external_streams/h?db=ext_db')).statusCode, 200);
  await sql('DROP DATABASE ext_db');
  assert.equal((await h.call('GET', '/v1beta2/external_streams/h?db=ext_db')).statusCode, 404);

  const gone = await HttpReceiver.start();
  const url = gone.url;
  await gone.close();
  await sql(
    `CREATE EXTERNAL STREAM dead (id int, v string) SETTINGS type='http', url='${url}/d', retry_backoff_ms=5, retry_backoff_max_ms=10`,
  );
  const r = await run('INSERT INTO dead SELECT id, v FROM table(ext_src)');
  assert.equal(r.statusCode, 502, r.body);
  assert.match(r.json().message, /dead.*ECONNREFUSED/);
  const info = await h.call('GET', '/v1beta2/external_streams');
  assert.equal(info.statusCode, 200);
});
