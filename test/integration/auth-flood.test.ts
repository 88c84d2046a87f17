/**
 * Failed authentication cannot stall the server: 300 concurrent wrong passwords against a real
 * server while an ingest and `/info` run. Password checks run on their own thread
 * (src/catalog/password-pool.ts) and failed ones are limited per address and username
 * (src/api/auth-throttle.ts), so the attack runs a bounded number of scrypt checks and the other
 * requests finish while it is still being answered.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ADDRESS_LIMITS, USER_LIMITS } from '../../src/api/auth-throttle.ts';
import { passwordPool } from '../../src/catalog/password-hash.ts';
import { ADMIN, authHeader, type Harness, startHarness } from '../helpers/harness.ts';

let h: Harness;
let base: string;
const VICTIMS = ['victim1', 'victim2'];
before(async () => {
  h = await startHarness();
  base = `${await h.trb.listen()}/default/api`;
  for (const username of [...VICTIMS, 'target', 'bystander']) {
    const r = await h.call('POST', '/v1beta2/users', {
      body: { username, password: `${username}-password`, role: 'read_only' },
    });
    assert.equal(r.statusCode, 201);
  }
  assert.equal(
    (
      await h.call('POST', '/v1beta2/streams', {
        body: { name: 'flood_s', columns: [{ name: 'v', type: 'int32' }] },
      })
    ).statusCode,
    201,
  );
});
after(async () => {
  await h.close();
});

function basic(user: string, password: string): Record<string, string> {
  return authHeader({ user, password });
}

test('300 concurrent wrong passwords: 401 or 429, bounded checks, ingest and /info finish meanwhile', async () => {
  // The admin's credentials are checked (and cached) before the attack, as for a running client.
  const warm = await fetch(`${base}/v1beta2/streams/flood_s`, { headers: authHeader(ADMIN) });
  assert.equal(warm.status, 200);
  const before = passwordPool.stats().computed;

  let answered = 0;
  let lastAttackAt = 0;
  let clock = 0;
  const attack = Array.from({ length: 300 }, async (_, i) => {
    const user = VICTIMS[i % VICTIMS.length] as string;
    // Each guess a different password, as a guessing attack sends (the same credentials share one check).
    const r = await fetch(`${base}/v1beta2/streams`, { headers: basic(user, `wrong-password-${i}`) });
    await r.arrayBuffer();
    answered++;
    lastAttackAt = ++clock;
    return { status: r.status, retryAfter: r.headers.get('retry-after') };
  });
  // Wait until the attack is being checked on the hashing thread, then run the others.
  while (passwordPool.stats().queued === 0 && answered < 300) await new Promise((r) => setImmediate(r));
  assert.ok(answered < 300, 'the attack is still in flight');

  const ingest = (async () => {
    const r = await fetch(`${base}/v1beta2/streams/flood_s/ingest`, {
      method: 'POST',
      headers: { ...authHeader(ADMIN), 'content-type': 'application/json' },
      body: JSON.stringify({ columns: ['v'], data: [[1], [2], [3]] }),
    });
    await r.arrayBuffer();
    return { status: r.status, at: ++clock };
  })();
  const info = (async () => {
    const r = await fetch(`${base}/info`);
    await r.arrayBuffer();
    return { status: r.status, at: ++clock };
  })();
  const [ingested, infoed] = await Promise.all([ingest, info]);
  const results = await Promise.all(attack);

  assert.equal(ingested.status, 200);
  assert.equal(infoed.status, 200);
  assert.ok(ingested.at < lastAttackAt, 'the ingest finished while the attack was still being answered');
  assert.ok(infoed.at < lastAttackAt, '/info finished while the attack was still being answered');

  const statuses = new Map<number, number>();
  for (const r of results) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
  assert.deepEqual(
    [...statuses.keys()].filter((s) => s !== 401 && s !== 429),
    [],
    `statuses: ${JSON.stringify([...statuses])}`,
  );
  assert.ok((statuses.get(429) ?? 0) > 0, 'the attack is throttled');
  for (const r of results.filter((x) => x.status === 429)) assert.match(String(r.retryAfter), /^[1-9]\d*$/);

  const checks = passwordPool.stats().computed - before;
  assert.ok(checks >= 1, 'the attack ran some checks');
  assert.ok(
    checks <= Math.min(ADDRESS_LIMITS.freeFailures, VICTIMS.length * USER_LIMITS.freeFailures),
    `scrypt ran ${checks} times for 300 attempts`,
  );

  const rows = await h.call('POST', '/v1beta2/exec', {
    body: { sql: 'SELECT count() FROM table(flood_s)', type: 'historical' },
  });
  assert.deepEqual(rows.json().data, [[3]]);
});

test('one username under attack is throttled; another user from the same address still logs in', async () => {
  const address = '10.9.9.9';
  const call = (user: string, password: string) =>
    h.trb.api.inject({
      method: 'GET',
      url: '/default/api/v1beta2/streams',
      remoteAddress: address,
      headers: basic(user, password),
    });
  const attempts = await Promise.all(
    Array.from({ length: 50 }, (_, i) => call('target', `wrong-password-${i}`)),
  );
  const counts = { 401: 0, 429: 0 };
  for (const r of attempts) counts[r.statusCode as 401 | 429]++;
  assert.deepEqual(counts, { 401: USER_LIMITS.freeFailures, 429: 50 - USER_LIMITS.freeFailures });
  const throttled = attempts.find((r) => r.statusCode === 429);
  assert.equal(throttled?.json().code, 10007);

  // The right password of the throttled username waits too (no check runs while it waits)...
  const victim = await call('target', 'target-password');
  assert.equal(victim.statusCode, 429);
  assert.match(String(victim.headers['retry-after']), /^[1-9]\d*$/);
  // ...while a different user from the same address is not locked out.
  const bystander = await call('bystander', 'bystander-password');
  assert.equal(bystander.statusCode, 200);
});

test('an unknown username costs a password check too (its answer time does not tell it is unknown)', async () => {
  const call = (user: string) =>
    h.trb.api.inject({
      method: 'GET',
      url: '/default/api/v1beta2/streams',
      remoteAddress: '10.7.7.7',
      headers: basic(user, 'some-password'),
    });
  await call('nobody_at_all'); // makes the stand-in hash once
  const before = passwordPool.stats().computed;
  const r = await call('nobody_else');
  assert.equal(r.statusCode, 401);
  assert.equal(passwordPool.stats().computed - before, 1);
});

test('a burst of requests with right credentials after the cache is cleared: one check, none throttled', async () => {
  // Any user change clears the credential cache.
  const changed = await h.call('POST', '/v1beta2/users', {
    body: { username: 'burst_trigger', password: 'burst-trigger-password', role: 'read_only' },
  });
  assert.equal(changed.statusCode, 201);
  const before = passwordPool.stats().computed;
  const burst = await Promise.all(
    Array.from({ length: USER_LIMITS.freeFailures * 4 }, async () => {
      const r = await fetch(`${base}/v1beta2/streams/flood_s`, {
        headers: basic('bystander', 'bystander-password'),
      });
      await r.arrayBuffer();
      return r.status;
    }),
  );
  assert.deepEqual(
    burst.filter((s) => s !== 200),
    [],
  );
  assert.equal(passwordPool.stats().computed - before, 1);
});
