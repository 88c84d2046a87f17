/**
 * Dashboards, saved queries and pipelines over the API: create, list, get, update (append for
 * pipelines), delete; ids and audit fields; 404 and 400 naming the field; read_only may read but
 * not write; everything survives a restart.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Harness, startHarness } from '../helpers/harness.ts';

let h: Harness;
const reader = { user: 'res_reader', password: 'reader-password' };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const STAMP = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/;

before(async () => {
  h = await startHarness();
  const r = await h.call('POST', '/v1beta2/users', {
    body: { username: reader.user, password: reader.password, role: 'read_only' },
  });
  assert.equal(r.statusCode, 201);
});
after(async () => {
  await h.close();
});

function assertAudit(body: Record<string, unknown>, creator: string, updater = creator): void {
  assert.match(String(body.created_at), STAMP);
  assert.match(String(body.last_updated_at), STAMP);
  assert.deepEqual(body.created_by, { id: creator, name: creator });
  assert.deepEqual(body.last_updated_by, { id: updater, name: updater });
}

const panel = {
  title: 'events per minute',
  viz_type: 'chart',
  viz_content: 'SELECT count() FROM events',
  viz_config: { chart_type: 'line', colors: ['#f00'] },
  position: { x: 0, y: 0, w: 6, h: 2 },
};

test('dashboards: create, list, get, update, delete; panels get ids', async () => {
  let r = await h.call('POST', '/v1beta2/dashboards', { body: { name: 'ops', panels: [panel] } });
  assert.equal(r.statusCode, 201, r.body);
  const created = r.json();
  assert.match(created.id, UUID);
  assert.equal(created.name, 'ops');
  assert.equal(created.description, '');
  assert.equal(created.panels.length, 1);
  assert.match(created.panels[0].id, UUID);
  assert.deepEqual({ ...created.panels[0], id: undefined }, { ...panel, id: undefined });
  assertAudit(created, 'admin');

  // Names need not be unique: dashboards are addressed by id.
  r = await h.call('POST', '/v1beta2/dashboards', { body: { name: 'ops', description: 'second' } });
  assert.equal(r.statusCode, 201);
  const second = r.json();
  assert.notEqual(second.id, created.id);

  r = await h.call('GET', '/v1beta2/dashboards', { as: reader });
  assert.equal(r.statusCode, 200);
  assert.deepEqual(
    r
      .json()
      .map((d: { id: string }) => d.id)
      .sort(),
    [created.id, second.id].sort(),
  );

  r = await h.call('GET', `/v1beta2/dashboards/${created.id}`, { as: reader });
  assert.deepEqual(r.json(), created);

  // Update: the name is replaced; panels left out keep theirs; a panel's own id is kept.
  r = await h.call('PUT', `/v1beta2/dashboards/${created.id}`, {
    body: { name: 'ops renamed', description: 'd' },
  });
  assert.equal(r.statusCode, 200, r.body);
  assert.equal(r.json().name, 'ops renamed');
  assert.deepEqual(r.json().panels, created.panels);
  r = await h.call('PUT', `/v1beta2/dashboards/${created.id}`, {
    body: { name: 'ops renamed', panels: [{ id: 'p1', viz_type: 'markdown', viz_content: '# hi' }] },
  });
  assert.deepEqual(r.json().panels, [{ id: 'p1', viz_type: 'markdown', viz_content: '# hi' }]);
  assert.equal(r.json().description, 'd');
  assert.equal(r.json().created_at, created.created_at);

  r = await h.call('DELETE', `/v1beta2/dashboards/${second.id}`);
  assert.equal(r.statusCode, 204);
  r = await h.call('GET', `/v1beta2/dashboards/${second.id}`);
  assert.equal(r.statusCode, 404);
  assert.deepEqual(r.json(), {
    code: 10201,
    message: `Dashboard ${second.id} does not exist`,
    system: 'appserver',
  });
  for (const method of ['PUT', 'DELETE'] as const) {
    r = await h.call(
      method,
      `/v1beta2/dashboards/${second.id}`,
      method === 'PUT' ? { body: { name: 'x' } } : {},
    );
    assert.equal(r.statusCode, 404, method);
    assert.equal(r.json().code, 10201);
  }
});

test('saved queries: create, list, get, update, delete; tags kept in order, once', async () => {
  let r = await h.call('POST', '/v1beta2/savedqueries', {
    body: { name: 'latest', sql: 'SELECT * FROM iot', tags: ['iot', 'live', 'iot'] },
  });
  assert.equal(r.statusCode, 201, r.body);
  const q = r.json();
  assert.match(q.id, UUID);
  assert.deepEqual(
    { name: q.name, sql: q.sql, description: q.description, tags: q.tags },
    { name: 'latest', sql: 'SELECT * FROM iot', description: '', tags: ['iot', 'live'] },
  );
  assertAudit(q, 'admin');

  r = await h.call('GET', '/v1beta2/savedqueries', { as: reader });
  assert.deepEqual(r.json(), [q]);
  r = await h.call('GET', `/v1beta2/savedqueries/${q.id}`, { as: reader });
  assert.deepEqual(r.json(), q);

  r = await h.call('PUT', `/v1beta2/savedqueries/${q.id}`, {
    body: { name: 'latest', sql: 'SELECT * FROM iot LIMIT 5', description: 'five' },
  });
  assert.equal(r.statusCode, 200, r.body);
  assert.equal(r.json().sql, 'SELECT * FROM iot LIMIT 5');
  assert.deepEqual(r.json().tags, ['iot', 'live'], 'tags left out keep their value');
  r = await h.call('PUT', `/v1beta2/savedqueries/${q.id}`, {
    body: { name: 'latest', sql: 'SELECT 1', tags: [] },
  });
  assert.deepEqual(r.json().tags, []);

  r = await h.call('DELETE', `/v1beta2/savedqueries/${q.id}`);
  assert.equal(r.statusCode, 204);
  r = await h.call('GET', `/v1beta2/savedqueries/${q.id}`);
  assert.equal(r.statusCode, 404);
  assert.equal(r.json().message, `Saved query ${q.id} does not exist`);
});

test('pipelines: create, get by id or name, append nodes, delete; names are unique', async () => {
  const history = [{ nodes: [{ id: 'n1', type: 'source' }], update_time: '2026-01-01 00:00:00' }];
  let r = await h.call('POST', '/v1beta2/pipelines', {
    body: { name: 'etl', description: 'my pipeline', nodes_history: history },
  });
  assert.equal(r.statusCode, 201, r.body);
  const p = r.json();
  assert.match(p.id, UUID);
  assert.deepEqual(p.nodes_history, history);
  assertAudit(p, 'admin');

  r = await h.call('POST', '/v1beta2/pipelines', {
    body: { name: 'etl', description: '', nodes_history: [] },
  });
  assert.equal(r.statusCode, 409);
  assert.deepEqual(r.json(), { code: 10202, message: 'Pipeline etl already exists', system: 'appserver' });

  r = await h.call('GET', '/v1beta2/pipelines/etl', { as: reader });
  assert.deepEqual(r.json(), p);

  r = await h.call('POST', `/v1beta2/pipelines/${p.id}/append`, { body: { nodes: [{ id: 'n2' }] } });
  assert.equal(r.statusCode, 204, r.body);
  r = await h.call('GET', `/v1beta2/pipelines/${p.id}`);
  const after = r.json();
  assert.equal(after.nodes_history.length, 2);
  assert.deepEqual(after.nodes_history[0], history[0]);
  assert.deepEqual(after.nodes_history[1].nodes, [{ id: 'n2' }]);
  assert.match(after.nodes_history[1].update_time, STAMP, 'update_time defaults to now');

  // Appends in parallel all land (updates are serialised).
  const appends = await Promise.all(
    [3, 4, 5, 6].map((i) => h.call('POST', `/v1beta2/pipelines/${p.id}/append`, { body: { nodes: [i] } })),
  );
  assert.deepEqual(
    appends.map((a) => a.statusCode),
    [204, 204, 204, 204],
  );
  r = await h.call('GET', `/v1beta2/pipelines/${p.id}`);
  assert.equal(r.json().nodes_history.length, 6);

  r = await h.call('GET', '/v1beta2/pipelines', { as: reader });
  assert.deepEqual(
    r.json().map((x: { name: string }) => x.name),
    ['etl'],
  );
  r = await h.call('DELETE', `/v1beta2/pipelines/${p.id}`);
  assert.equal(r.statusCode, 204);
  for (const [method, path] of [
    ['GET', `/v1beta2/pipelines/${p.id}`],
    ['DELETE', `/v1beta2/pipelines/${p.id}`],
    ['POST', `/v1beta2/pipelines/${p.id}/append`],
  ] as const) {
    r = await h.call(method, path, method === 'POST' ? { body: { nodes: [] } } : {});
    assert.equal(r.statusCode, 404, `${method} ${path}`);
    assert.equal(r.json().code, 10201);
  }
});

test('bad bodies answer 400 naming the field, and store nothing', async () => {
  const before = {
    dashboards: (await h.call('GET', '/v1beta2/dashboards')).json().length,
    savedqueries: (await h.call('GET', '/v1beta2/savedqueries')).json().length,
    pipelines: (await h.call('GET', '/v1beta2/pipelines')).json().length,
  };
  const cases: Array<[string, unknown, string]> = [
    ['/v1beta2/dashboards', { description: 'no name' }, 'name'],
    ['/v1beta2/dashboards', { name: 7 }, 'name'],
    ['/v1beta2/dashboards', { name: '' }, 'name'],
    ['/v1beta2/dashboards', { name: 'd', colour: 'red' }, 'colour'],
    ['/v1beta2/dashboards', { name: 'd', panels: {} }, 'panels'],
    ['/v1beta2/dashboards', { name: 'd', panels: [{ viz_config: 'line' }] }, 'panels.0.viz_config'],
    ['/v1beta2/dashboards', { name: 'd', panels: [{ position: { x: 0 }, size: 3 }] }, 'panels.0.size'],
    ['/v1beta2/savedqueries', { name: 'q' }, 'sql'],
    ['/v1beta2/savedqueries', { name: 'q', sql: 'SELECT 1', tags: 'a' }, 'tags'],
    ['/v1beta2/savedqueries', { name: 'q', sql: 'SELECT 1', tags: [1] }, 'tags.0'],
    ['/v1beta2/pipelines', { name: 'p', description: '' }, 'nodes_history'],
    [
      '/v1beta2/pipelines',
      { name: 'p', description: '', nodes_history: [{ nodes: 'x' }] },
      'nodes_history.0.nodes',
    ],
  ];
  for (const [path, body, field] of cases) {
    const r = await h.call('POST', path, { body });
    assert.equal(r.statusCode, 400, `${path} ${JSON.stringify(body)}: ${r.body}`);
    assert.equal(r.json().code, 10102);
    assert.match(
      r.json().message,
      new RegExp(`^Invalid field ${field.replace(/\./g, '\\.')}:`),
      JSON.stringify(body),
    );
  }
  const oversized = await h.call('POST', '/v1beta2/savedqueries', {
    body: { name: 'big', sql: 'x'.repeat(3 * 1024 * 1024) },
  });
  assert.equal(oversized.statusCode, 413);
  assert.equal(oversized.json().code, 10104);
  assert.deepEqual(
    {
      dashboards: (await h.call('GET', '/v1beta2/dashboards')).json().length,
      savedqueries: (await h.call('GET', '/v1beta2/savedqueries')).json().length,
      pipelines: (await h.call('GET', '/v1beta2/pipelines')).json().length,
    },
    before,
  );
});

test('read_only users may read but not write (403 before anything is stored)', async () => {
  const d = (await h.call('POST', '/v1beta2/dashboards', { body: { name: 'ro' } })).json();
  const q = (await h.call('POST', '/v1beta2/savedqueries', { body: { name: 'ro', sql: 'SELECT 1' } })).json();
  const p = (
    await h.call('POST', '/v1beta2/pipelines', { body: { name: 'ro', description: '', nodes_history: [] } })
  ).json();
  const writes: Array<['POST' | 'PUT' | 'DELETE', string, unknown]> = [
    ['POST', '/v1beta2/dashboards', { name: 'x' }],
    ['PUT', `/v1beta2/dashboards/${d.id}`, { name: 'x' }],
    ['DELETE', `/v1beta2/dashboards/${d.id}`, undefined],
    ['POST', '/v1beta2/savedqueries', { name: 'x', sql: 'SELECT 1' }],
    ['PUT', `/v1beta2/savedqueries/${q.id}`, { name: 'x', sql: 'SELECT 1' }],
    ['DELETE', `/v1beta2/savedqueries/${q.id}`, undefined],
    ['POST', '/v1beta2/pipelines', { name: 'x', description: '', nodes_history: [] }],
    ['POST', `/v1beta2/pipelines/${p.id}/append`, { nodes: [] }],
    ['DELETE', `/v1beta2/pipelines/${p.id}`, undefined],
  ];
  for (const [method, path, body] of writes) {
    const r = await h.call(method, path, { as: reader, ...(body ? { body } : {}) });
    assert.equal(r.statusCode, 403, `${method} ${path}`);
    assert.equal(r.json().code, 10003);
  }
  assert.deepEqual((await h.call('GET', `/v1beta2/dashboards/${d.id}`)).json(), d);
  assert.deepEqual((await h.call('GET', `/v1beta2/savedqueries/${q.id}`)).json(), q);
  assert.deepEqual((await h.call('GET', `/v1beta2/pipelines/${p.id}`)).json(), p);
});

test('dashboards, saved queries and pipelines survive a restart', async () => {
  const d = (await h.call('POST', '/v1beta2/dashboards', { body: { name: 'kept', panels: [panel] } })).json();
  const q = (
    await h.call('POST', '/v1beta2/savedqueries', { body: { name: 'kept', sql: 'SELECT 2', tags: ['t'] } })
  ).json();
  const p = (
    await h.call('POST', '/v1beta2/pipelines', {
      body: { name: 'kept', description: 'k', nodes_history: [{ nodes: [1], update_time: 't0' }] },
    })
  ).json();
  await h.call('POST', `/v1beta2/pipelines/${p.id}/append`, { body: { nodes: [2], update_time: 't1' } });
  const pAfterAppend = (await h.call('GET', `/v1beta2/pipelines/${p.id}`)).json();
  h = await h.restart();
  assert.deepEqual((await h.call('GET', `/v1beta2/dashboards/${d.id}`)).json(), d);
  assert.deepEqual((await h.call('GET', `/v1beta2/savedqueries/${q.id}`)).json(), q);
  assert.deepEqual((await h.call('GET', `/v1beta2/pipelines/${p.id}`)).json(), pAfterAppend);
  assert.equal(pAfterAppend.nodes_history.length, 2);
});
