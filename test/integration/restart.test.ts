import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { startHarness } from '../helpers/harness.ts';

test('users and workspace settings survive a restart on the same data directory', async (t) => {
  let h = await startHarness();
  t.after(() => h.close());
  assert.equal(
    (
      await h.call('POST', '/v1beta2/users', {
        body: { username: 'alice', password: 'alice-password', role: 'admin' },
      })
    ).statusCode,
    201,
  );
  assert.equal(
    (await h.call('PATCH', '/v1beta2/workspace', { body: { settings: { enabled_user_tracking: true } } }))
      .statusCode,
    204,
  );
  const created = (await h.call('GET', '/v1beta2/workspace')).json();

  h = await h.restart();
  const users = (await h.call('GET', '/v1beta2/users')).json();
  assert.deepEqual(users, [
    { username: 'admin', role: 'admin' },
    { username: 'alice', role: 'admin' },
  ]);
  const r = await h.call('GET', '/v1beta2/users/alice', {
    as: { user: 'alice', password: 'alice-password' },
  });
  assert.equal(r.statusCode, 200, 'the stored password hash still verifies');
  const ws = (await h.call('GET', '/v1beta2/workspace')).json();
  assert.equal(ws.settings.enabled_user_tracking, true);
  assert.equal(ws.settings.last_updated_at, created.settings.last_updated_at);
  assert.equal(h.trb.initialAdmin, undefined, 'no second admin is created');
});

test('a configured first password (TRIBUTARY_ADMIN_PASSWORD) is written to no file', async (t) => {
  const h = await startHarness();
  t.after(() => h.close());
  assert.equal(h.trb.initialAdmin?.generated, false);
  assert.equal(h.trb.initialAdmin?.file, undefined);
  assert.equal(existsSync(join(h.dataDir, 'initial-admin-password')), false);
});

test('first start writes the initial admin password with mode 0600; a generated one when none is configured', async (t) => {
  const h = await startHarness({ config: { adminPassword: undefined } });
  t.after(() => h.close());
  const admin = h.trb.initialAdmin;
  assert.ok(admin?.generated);
  const file = join(h.dataDir, 'initial-admin-password');
  assert.equal(statSync(file).mode & 0o777, 0o600);
  const password = readFileSync(file, 'utf8').trim();
  assert.equal(password, admin.password);
  assert.ok(password.length >= 16);
  const r = await h.call('GET', '/v1beta2/users', { as: { user: 'admin', password } });
  assert.equal(r.statusCode, 200);
});
