import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startHarness } from '../helpers/harness.ts';

test('/info, /cluster and the license routes', async (t) => {
  const h = await startHarness();
  t.after(() => h.close());

  await t.test('/info answers the Versions shape without credentials', async () => {
    const r = await h.call('GET', '/default/api/info', { as: null });
    assert.equal(r.statusCode, 200);
    const v = r.json();
    for (const c of ['axion', 'neutron', 'orbit', 'proton']) {
      assert.deepEqual(Object.keys(v[c]).sort(), ['build_time', 'commit', 'feature_flags', 'version'], c);
      assert.ok(!Number.isNaN(Date.parse(v[c].build_time)), `${c}.build_time is ISO 8601`);
    }
    assert.match(v.proton.version, /^\d+\.\d+/);
    assert.equal(v.product_name, 'Tributary');
    assert.equal(typeof v.product_version, 'string');
  });

  await t.test('/cluster lists this node', async () => {
    const r = await h.call('GET', '/v1beta2/cluster');
    assert.equal(r.statusCode, 200);
    const [node, ...rest] = r.json();
    assert.equal(rest.length, 0);
    assert.equal(node.id, 1);
    assert.equal(node.state, 'Online');
    assert.deepEqual(node.roles, ['Metadata', 'Data']);
    assert.equal(typeof node.cpu_usage, 'number');
    assert.ok(node.cpu_usage >= 0 && node.cpu_usage <= 100);
    assert.ok(Number.isInteger(node.boot_timestamp) && node.boot_timestamp <= node.timestamp);
    assert.equal(node.total_mvs, 0);
    const unauth = await h.call('GET', '/v1beta2/cluster', { as: null });
    assert.equal(unauth.statusCode, 401);
  });

  await t.test('cpu_usage reflects CPU the process burns', async () => {
    await h.call('GET', '/v1beta2/cluster');
    await new Promise((r) => setTimeout(r, 600));
    const idle = (await h.call('GET', '/v1beta2/cluster')).json()[0].cpu_usage;
    const until = performance.now() + 700;
    while (performance.now() < until) Math.sqrt(Math.random());
    const busy = (await h.call('GET', '/v1beta2/cluster')).json()[0].cpu_usage;
    assert.ok(busy > idle, `busy ${busy} > idle ${idle}`);
  });

  await t.test('license routes are open', async () => {
    let r = await h.call('GET', '/v1beta2/licenses', { as: null });
    assert.ok(r.statusCode < 300, `GET /licenses without credentials answered ${r.statusCode}`);
    assert.equal(r.json()[0].is_trial, false);
    r = await h.call('GET', '/v1beta2/licenses/validations', { as: null });
    assert.equal(r.statusCode, 200);
    // A wrong body reaches the handler (400 naming the field), not the auth hook (401).
    r = await h.call('POST', '/v1beta2/licenses/trial', { as: null, body: { userName: 1 } });
    assert.equal(r.statusCode, 400);
    assert.match(r.json().message, /userName/);
  });

  await t.test('/info answers 503 with version "unknown" once the engine is gone', async () => {
    await h.trb.services.engine.close();
    const r = await h.call('GET', '/default/api/info', { as: null });
    assert.equal(r.statusCode, 503);
    assert.equal(r.json().proton.version, 'unknown');
    assert.equal(r.json().product_name, 'Tributary');
    const c = await h.call('GET', '/v1beta2/cluster');
    assert.equal(c.json()[0].state, 'Offline');
  });
});
