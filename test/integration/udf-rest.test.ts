/**
 * User-defined functions as resources: POST/GET/PUT/DELETE /v1beta2/udfs (the body suite 0022
 * sends), SHOW FUNCTIONS, DROP FUNCTION [IF EXISTS], names of built-ins refused, and functions that
 * survive a restart of the server on the same data directory.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startHarness } from '../helpers/harness.ts';
import { assertError } from '../helpers/streams.ts';

const ADD_FIVE = {
  type: 'javascript',
  name: 'rest_add_five',
  arguments: [{ name: 'value', type: 'float32' }],
  return_type: 'float32',
  source:
    'function rest_add_five(value) { for(let i=0; i<value.length; i++) { value[i] = value[i]+5; } return value;}',
};

test('create, list, get, replace, show, drop; refusals; functions persist across a restart', async (t) => {
  let h = await startHarness();
  t.after(() => h.close());
  const created = await h.call('POST', '/v1beta2/udfs', { body: ADD_FIVE });
  assert.equal(created.statusCode, 201, created.body);
  const body = created.json() as Record<string, unknown>;
  assert.equal(body.name, 'rest_add_five');
  assert.equal(body.type, 'javascript');
  assert.equal(body.is_aggregation, false);
  assert.equal(body.id, 'rest_add_five');
  assert.deepEqual(body.created_by, { id: 'admin', name: 'admin' });
  assert.deepEqual(body.arguments, ADD_FIVE.arguments);
  // GET answers the base document's UserDefinedFunction: epoch-millisecond times, names of actors.
  const got = (await h.call('GET', '/v1beta2/udfs/rest_add_five')).json() as Record<string, unknown>;
  assert.equal(got.created_by, 'admin');
  assert.equal(got.last_modified_by, 'admin');
  assert.equal(got.created_at, Date.parse(`${String(body.created_at).replace(' ', 'T')}Z`));
  assert.equal(got.source, ADD_FIVE.source);

  assertError(await h.call('POST', '/v1beta2/udfs', { body: ADD_FIVE }), 409, 609, /already exists/);
  const again = await h.call('POST', '/v1beta2/udfs', {
    body: { ...ADD_FIVE, description: 'again', replace_if_exists: true },
  });
  assert.equal(again.statusCode, 201, again.body);
  assert.equal((again.json() as { description: string }).description, 'again');
  assertError(
    await h.call('POST', '/v1beta2/udfs', {
      body: { ...ADD_FIVE, name: 'sum', source: 'function sum(x) { return x; }' },
    }),
    409,
    609,
    /sum is a built-in function/,
  );
  assertError(
    await h.call('POST', '/v1beta2/udfs', {
      body: { ...ADD_FIVE, name: 'bad_type', return_type: 'float99' },
    }),
    400,
    50,
  );
  assertError(
    await h.call('POST', '/v1beta2/udfs', { body: { ...ADD_FIVE, name: 'no_body', source: '' } }),
    400,
    36,
    /source/,
  );
  assertError(
    await h.call('POST', '/v1beta2/udfs', { body: { ...ADD_FIVE, type: 'python' } }),
    400,
    10102,
    /must be one of javascript, remote/,
  );
  assertError(
    await h.call('POST', '/v1beta2/udfs', {
      body: { name: 'r', type: 'remote', return_type: 'string', url: 'ftp://x', arguments: [] },
    }),
    400,
    36,
    /http or https/,
  );

  const list = (await h.call('GET', '/v1beta2/udfs')).json() as { name: string }[];
  assert.deepEqual(
    list.map((f) => f.name),
    ['rest_add_five'],
  );
  assert.equal((await h.call('GET', '/v1beta2/udfs/rest_add_five')).statusCode, 200);
  assertError(await h.call('GET', '/v1beta2/udfs/nope'), 404, 46);

  const replaced = await h.call('PUT', '/v1beta2/udfs/rest_add_five', {
    body: { ...ADD_FIVE, description: 'adds five' },
  });
  assert.equal(replaced.statusCode, 200, replaced.body);
  assert.equal((replaced.json() as { description: string }).description, 'adds five');

  const sql = async (query: string) => {
    const r = await h.call('POST', '/v1beta2/queries', { body: { sql: query } });
    return r;
  };
  assert.equal(
    (
      await sql(
        'CREATE AGGREGATE FUNCTION rest_total(v float64) RETURNS float64 LANGUAGE JAVASCRIPT AS $$ { initialize: function () { this.t = 0; }, process: function (v) { for (const x of v) this.t += x; }, finalize: function () { return this.t; } } $$',
      )
    ).statusCode,
    204,
  );
  const show = await sql('SHOW FUNCTIONS');
  assert.equal(show.statusCode, 200);
  assert.match(show.body, /\["rest_add_five","javascript",false,"value float32","float32"\]/);
  assert.match(show.body, /\["rest_total","javascript",true,"v float64","float64"\]/);

  h = await h.restart();
  const after = (await h.call('GET', '/v1beta2/udfs')).json() as { name: string; description: string }[];
  assert.deepEqual(
    after.map((f) => [f.name, f.description]),
    [
      ['rest_add_five', 'adds five'],
      ['rest_total', ''],
    ],
  );
  const r = await sql('SELECT rest_add_five(1), rest_total(number) FROM numbers(4)');
  assert.equal(r.statusCode, 200);
  assert.match(r.body, /data: \[\[6, 6\]\]/);

  assert.equal((await sql('DROP FUNCTION rest_total')).statusCode, 204);
  assert.equal((await sql('DROP FUNCTION IF EXISTS rest_total')).statusCode, 204);
  assertError(await sql('DROP FUNCTION rest_total'), 404, 46);
  assert.equal((await h.call('DELETE', '/v1beta2/udfs/rest_add_five')).statusCode, 204);
  assertError(await h.call('DELETE', '/v1beta2/udfs/rest_add_five'), 404, 46);
  assertError(await sql('SELECT rest_add_five(1)'), 400, 46, /Unknown function rest_add_five/);
});

test('the topology shows user-defined functions with extraResources=udf, and the views that call them', async (t) => {
  const h = await startHarness();
  t.after(() => h.close());
  assert.equal((await h.call('POST', '/v1beta2/udfs', { body: ADD_FIVE })).statusCode, 201);
  const exec = (sql: string) =>
    h.call('POST', '/v1beta2/queries', { body: { sql }, headers: { accept: 'text/event-stream' } });
  assert.equal((await exec('CREATE STREAM topo_src (v float32)')).statusCode, 204);
  assert.equal(
    (await exec('CREATE VIEW topo_plus AS SELECT rest_add_five(v) AS w FROM topo_src')).statusCode,
    204,
  );
  assert.equal((await exec('CREATE VIEW topo_plain AS SELECT v FROM topo_src')).statusCode, 204);
  type Topo = {
    nodes: { id: string; type: string; properties: Record<string, unknown> }[];
    dependencies: unknown[];
  };
  // Without the extra resource: no function nodes.
  const plain = (await h.call('GET', '/v1beta2/topology?db=default')).json() as Topo;
  assert.ok(!plain.nodes.some((n) => n.type === 'udf'), JSON.stringify(plain.nodes));
  const topo = (await h.call('GET', '/v1beta2/topology?db=default&extraResources=udf')).json() as Topo;
  const udf = topo.nodes.find((n) => n.id === 'udf:rest_add_five');
  assert.deepEqual(udf?.properties, {
    udf_type: 'javascript',
    is_aggregation: false,
    return_type: 'float32',
  });
  assert.equal(udf?.type, 'udf');
  const onUdf = topo.dependencies.filter((d) => (d as { target: string }).target === 'udf:rest_add_five');
  assert.deepEqual(onUdf, [{ source: 'view:default.topo_plus', target: 'udf:rest_add_five' }]);
});
