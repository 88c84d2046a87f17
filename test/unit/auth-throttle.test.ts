import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type AuthAttempt, AuthThrottle } from '../../src/api/auth-throttle.ts';
import { clientAddressKey } from '../../src/api/client-address.ts';
import { FailureLimiter, type FailureLimits } from '../../src/api/failure-limiter.ts';

const LIMITS: FailureLimits = {
  freeFailures: 3,
  baseBackoffMs: 1000,
  maxBackoffMs: 8000,
  forgetAfterMs: 60_000,
  maxKeys: 100,
};

function clock(start = 1_000_000) {
  const c = { t: start, now: () => c.t };
  return c;
}

function fail(l: FailureLimiter, key: string): void {
  l.begin(key);
  l.end(key, true, false);
}

test('limiter: free failures, then a wait that doubles up to the cap', () => {
  const c = clock();
  const l = new FailureLimiter(LIMITS, c.now);
  fail(l, 'k');
  fail(l, 'k');
  assert.equal(l.waitMs('k'), 0, 'two failures are free');
  fail(l, 'k');
  assert.equal(l.waitMs('k'), 1000, 'the third (last free) failure starts the backoff');
  c.t += 400;
  assert.equal(l.waitMs('k'), 600);
  c.t += 600;
  assert.equal(l.waitMs('k'), 0);
  const waits: number[] = [];
  for (let i = 0; i < 5; i++) {
    fail(l, 'k');
    waits.push(l.waitMs('k'));
    c.t += waits[waits.length - 1] ?? 0;
  }
  assert.deepEqual(waits, [2000, 4000, 8000, 8000, 8000]);
  assert.equal(l.waitMs('other'), 0, 'keys are independent');
});

test('limiter: attempts in flight count, so a burst cannot exceed the free failures', () => {
  const c = clock();
  const l = new FailureLimiter(LIMITS, c.now);
  let admitted = 0;
  for (let i = 0; i < 300; i++) {
    if (l.waitMs('k') === 0) {
      l.begin('k');
      admitted++;
    }
  }
  assert.equal(admitted, 3);
  assert.equal(l.waitMs('k'), 1000, 'the rest are told to retry shortly');
});

test('limiter: a success with reset forgets the key; without reset only ends the attempt', () => {
  const c = clock();
  const l = new FailureLimiter(LIMITS, c.now);
  fail(l, 'a');
  fail(l, 'a');
  l.begin('a');
  l.end('a', false, true);
  assert.equal(l.size(), 0);
  fail(l, 'b');
  fail(l, 'b');
  l.begin('b');
  l.end('b', false, false);
  fail(l, 'b');
  assert.ok(l.waitMs('b') > 0, 'failures before the success still count');
});

test('limiter: keys are forgotten after forgetAfterMs and bounded by maxKeys', () => {
  const c = clock();
  const l = new FailureLimiter({ ...LIMITS, maxKeys: 10 }, c.now);
  for (let i = 0; i < 50; i++) fail(l, `k${i}`);
  assert.equal(l.size(), 10, 'only the 10 most recent keys are kept');
  c.t += LIMITS.forgetAfterMs + 1;
  l.waitMs('anything');
  assert.equal(l.size(), 0);
  for (let i = 0; i < 3; i++) fail(l, 'x');
  c.t += LIMITS.forgetAfterMs + 1;
  assert.equal(l.waitMs('x'), 0, 'an old key starts over');
});

test('throttle: per username first; other users from the same address keep logging in', () => {
  const c = clock();
  const t = new AuthThrottle({
    user: { ...LIMITS, freeFailures: 5 },
    address: { ...LIMITS, freeFailures: 20 },
    now: c.now,
  });
  const results: string[] = [];
  for (let i = 0; i < 300; i++) {
    const a = t.admit('10.0.0.1', 'admin');
    if ('retryAfterSeconds' in a) results.push(`wait ${a.retryAfterSeconds}`);
    else {
      a.failed();
      results.push('checked');
    }
  }
  assert.equal(results.filter((r) => r === 'checked').length, 5);
  assert.ok(results.slice(5).every((r) => /^wait [1-9]/.test(r)));
  const other = t.admit('10.0.0.1', 'analyst');
  assert.ok(!('retryAfterSeconds' in other), 'another username from the same address is admitted');
  (other as AuthAttempt).succeeded();
  assert.ok('retryAfterSeconds' in t.admit('10.0.0.2', 'admin'), 'the username waits from any address');
});

test('throttle: an address that sprays usernames is throttled as a whole; a success does not clear it', () => {
  const c = clock();
  const t = new AuthThrottle({
    user: { ...LIMITS, freeFailures: 5 },
    address: { ...LIMITS, freeFailures: 20 },
    now: c.now,
  });
  for (let i = 0; i < 20; i++) {
    const a = t.admit('10.0.0.9', `user${i}`);
    assert.ok(!('retryAfterSeconds' in a));
    (a as AuthAttempt).failed();
  }
  const blocked = t.admit('10.0.0.9', 'fresh');
  assert.ok('retryAfterSeconds' in blocked);
  assert.equal(blocked.retryAfterSeconds, 1);
  c.t += 1000;
  const ok = t.admit('10.0.0.9', 'valid');
  (ok as AuthAttempt).succeeded();
  const again = t.admit('10.0.0.9', 'user21');
  (again as AuthAttempt).failed();
  const next = t.admit('10.0.0.9', 'user22');
  assert.ok('retryAfterSeconds' in next, 'the success cleared the username, not the address');
  assert.equal(next.retryAfterSeconds, 2);
  assert.ok(!('retryAfterSeconds' in t.admit('10.0.0.10', 'user22')), 'other addresses are not affected');
});

test('throttle: an abandoned attempt (pool busy) neither counts nor resets', () => {
  const c = clock();
  const t = new AuthThrottle({ user: { ...LIMITS, freeFailures: 2 }, now: c.now });
  (t.admit('a', 'u') as AuthAttempt).failed();
  (t.admit('a', 'u') as AuthAttempt).abandoned();
  (t.admit('a', 'u') as AuthAttempt).failed();
  assert.ok('retryAfterSeconds' in t.admit('a', 'u'));
});

test('client address keys: IPv4 as is (also IPv4-mapped), IPv6 by its /64', () => {
  assert.equal(clientAddressKey('10.1.2.3'), '10.1.2.3');
  assert.equal(clientAddressKey('::ffff:10.1.2.3'), '10.1.2.3');
  const net = '2001:db8:1:2::/64';
  for (const a of ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::9', '2001:0db8:0001:0002:aaaa::1']) {
    assert.equal(clientAddressKey(a), net, a);
  }
  assert.notEqual(clientAddressKey('2001:db8:1:3::1'), net);
  assert.equal(clientAddressKey('2001:db8::1'), '2001:db8:0:0::/64');
});
