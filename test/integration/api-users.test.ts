import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ADMIN_PASSWORD, type Harness, startHarness } from '../helpers/harness.ts';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h.close();
});

const reader = { user: 'reader', password: 'reader-password' };

test('routes need credentials: 401 with WWW-Authenticate and the error body', async () => {
  const r = await h.call('GET', '/v1beta2/users', { as: null });
  assert.equal(r.statusCode, 401);
  assert.match(String(r.headers['www-authenticate']), /^Basic realm=/);
  assert.deepEqual(r.json(), { code: 10001, message: 'Authentication required', system: 'appserver' });
});

test('wrong password, unknown user and malformed Basic all answer 401', async () => {
  for (const as of [
    { user: 'admin', password: 'wrong' },
    { user: 'nobody', password: ADMIN_PASSWORD },
  ]) {
    const r = await h.call('GET', '/v1beta2/users', { as });
    assert.equal(r.statusCode, 401);
    assert.equal(r.json().code, 10002);
  }
  const r = await h.call('GET', '/v1beta2/users', { as: null, headers: { authorization: 'Basic !!!' } });
  assert.equal(r.statusCode, 401);
});

test('the first admin exists; list, create, get, update and delete users', async () => {
  let r = await h.call('GET', '/v1beta2/users');
  assert.equal(r.statusCode, 200);
  assert.deepEqual(r.json(), [{ username: 'admin', role: 'admin' }]);

  r = await h.call('POST', '/v1beta2/users', {
    body: { username: 'reader', password: 'reader-password', role: 'read_only' },
  });
  assert.equal(r.statusCode, 201);
  r = await h.call('POST', '/v1beta2/users', { body: { username: 'ops', password: 'ops-password' } });
  assert.equal(r.statusCode, 201);

  r = await h.call('GET', '/v1beta2/users/ops');
  assert.deepEqual(r.json(), { username: 'ops', role: 'read_only' });

  r = await h.call('PATCH', '/v1beta2/users/ops', { body: { role: 'admin', password: 'new-ops-password' } });
  assert.equal(r.statusCode, 200);
  r = await h.call('GET', '/v1beta2/users/ops', { as: { user: 'ops', password: 'new-ops-password' } });
  assert.deepEqual(r.json(), { username: 'ops', role: 'admin' });
  r = await h.call('GET', '/v1beta2/users', { as: { user: 'ops', password: 'ops-password' } });
  assert.equal(r.statusCode, 401, 'the old password no longer works');

  r = await h.call('DELETE', '/v1beta2/users/ops');
  assert.equal(r.statusCode, 204);
  r = await h.call('GET', '/v1beta2/users/ops');
  assert.equal(r.statusCode, 404);
  assert.equal(r.json().code, 10004);
});

test('passwords are never returned', async () => {
  const r = await h.call('GET', '/v1beta2/users');
  assert.doesNotMatch(r.body, /password|scrypt/);
});

test('bad bodies get 400 naming the field', async () => {
  const cases: Array<[unknown, string]> = [
    [{ username: 'x1', password: 'long-enough', role: 'superuser' }, 'role'],
    [{ username: 'x2' }, 'password'],
    [{ username: 'x3', password: 'short' }, 'password'],
    [{ username: 'x4', password: 'long-enough', colour: 'red' }, 'colour'],
    [{ username: '9bad name', password: 'long-enough' }, 'username'],
    [{ username: 'x5', password: 12345678 }, 'password'],
  ];
  for (const [body, field] of cases) {
    const r = await h.call('POST', '/v1beta2/users', { body });
    assert.equal(r.statusCode, 400, JSON.stringify(body));
    assert.equal(r.json().code, 10102);
    assert.match(r.json().message, new RegExp(`^Invalid field ${field}`), r.body);
  }
  const r = await h.call('POST', '/v1beta2/users', {
    body: '{"username": ',
    headers: { 'content-type': 'application/json' },
  });
  assert.equal(r.statusCode, 400);
  assert.equal(r.json().code, 10101);
  const p = await h.call('PATCH', '/v1beta2/users/admin', { body: {} });
  assert.equal(p.statusCode, 400);
});

test('creating an existing user is a conflict; unknown users are 404', async () => {
  let r = await h.call('POST', '/v1beta2/users', { body: { username: 'admin', password: 'whatever-pw' } });
  assert.equal(r.statusCode, 409);
  assert.equal(r.json().code, 10005);
  r = await h.call('PATCH', '/v1beta2/users/ghost', { body: { role: 'admin' } });
  assert.equal(r.statusCode, 404);
  r = await h.call('DELETE', '/v1beta2/users/ghost');
  assert.equal(r.statusCode, 404);
});

test('the last admin can be neither deleted nor demoted', async () => {
  let r = await h.call('DELETE', '/v1beta2/users/admin');
  assert.equal(r.statusCode, 409);
  assert.equal(r.json().code, 10006);
  r = await h.call('PATCH', '/v1beta2/users/admin', { body: { role: 'read_only' } });
  assert.equal(r.statusCode, 409);
});

test('read_only may read but every mutation answers 403', async () => {
  let r = await h.call('GET', '/v1beta2/users', { as: reader });
  assert.equal(r.statusCode, 200);
  r = await h.call('GET', '/v1beta2/workspace', { as: reader });
  assert.equal(r.statusCode, 200);
  const mutations: Array<['POST' | 'PATCH' | 'DELETE', string, unknown]> = [
    ['POST', '/v1beta2/users', { username: 'x9', password: 'long-enough' }],
    ['PATCH', '/v1beta2/users/reader', { role: 'admin' }],
    ['DELETE', '/v1beta2/users/admin', undefined],
    ['PATCH', '/v1beta2/workspace', { settings: { enabled_user_tracking: true } }],
    ['POST', '/v1beta2/auth/api_keys', { name: 'k' }],
  ];
  for (const [method, path, body] of mutations) {
    r = await h.call(method, path, { as: reader, body });
    assert.equal(r.statusCode, 403, `${method} ${path}`);
    assert.equal(r.json().code, 10003);
    assert.equal(r.json().system, 'appserver');
  }
});

test('roles', async () => {
  const r = await h.call('GET', '/v1beta2/roles');
  assert.deepEqual(r.json(), ['admin', 'read_only']);
});

test('API keys authenticate through X-Api-Key and Authorization: ApiKey, and can be revoked', async () => {
  let r = await h.call('POST', '/v1beta2/auth/api_keys', { body: { name: 'ci', username: 'reader' } });
  assert.equal(r.statusCode, 201);
  const { key, id } = r.json() as { key: string; id: string };
  assert.equal(key.length, 60);
  r = await h.call('GET', '/v1beta2/users/reader', { as: { apiKey: key } });
  assert.equal(r.statusCode, 200);
  r = await h.call('GET', '/v1beta2/users/reader', { as: { apiKey: key, header: 'authorization' } });
  assert.equal(r.statusCode, 200);
  r = await h.call('POST', '/v1beta2/users', {
    as: { apiKey: key },
    body: { username: 'x10', password: 'long-enough' },
  });
  assert.equal(r.statusCode, 403, "the key has its user's role");
  r = await h.call('GET', '/v1beta2/auth/api_keys');
  assert.doesNotMatch(r.body, new RegExp(key));
  r = await h.call('DELETE', `/v1beta2/auth/api_keys/${id}`);
  assert.equal(r.statusCode, 204);
  r = await h.call('GET', '/v1beta2/users/reader', { as: { apiKey: key } });
  assert.equal(r.statusCode, 401);
  r = await h.call('GET', '/v1beta2/users/reader', { as: { apiKey: 'not-a-key' } });
  assert.equal(r.statusCode, 401);
});

test('workspace: get and update settings with audit fields', async () => {
  let r = await h.call('GET', '/v1beta2/workspace');
  assert.equal(r.statusCode, 200);
  const before = r.json();
  assert.equal(before.id, 'default');
  assert.equal(before.settings.enabled_user_tracking, false);
  assert.match(before.created_at, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
  r = await h.call('PATCH', '/v1beta2/workspace', { body: { settings: { enabled_user_tracking: true } } });
  assert.equal(r.statusCode, 204);
  r = await h.call('GET', '/v1beta2/workspace');
  assert.equal(r.json().settings.enabled_user_tracking, true);
  assert.deepEqual(r.json().settings.last_updated_by, { id: 'admin', name: 'admin' });
  r = await h.call('PATCH', '/v1beta2/workspace', { body: { settings: { enabled_user_tracking: 'yes' } } });
  assert.equal(r.statusCode, 400);
  assert.match(r.json().message, /settings\.enabled_user_tracking/);
});

test('unknown routes and workspaces answer 404 with the error body', async () => {
  let r = await h.call('GET', '/v1beta2/nothing');
  assert.equal(r.statusCode, 404);
  assert.equal(r.json().code, 10103);
  r = await h.call('GET', '/other/api/info', { as: null });
  assert.equal(r.statusCode, 404);
});
