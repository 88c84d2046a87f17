import assert from 'node:assert/strict';
import { scryptSync } from 'node:crypto';
import { test } from 'node:test';
import { hashPassword, passwordPool, verifyPassword } from '../../src/catalog/password-hash.ts';
import { PasswordPool } from '../../src/catalog/password-pool.ts';
import { isTributaryError } from '../../src/errors/tributary-error.ts';

const job = (password: string) => ({
  password,
  salt: Buffer.from('0123456789abcdef'),
  keyLength: 32,
  N: 1 << 10,
  r: 8,
  p: 1,
  maxmem: 64 * 1024 * 1024,
});

test('the pool computes what scrypt computes, on its own thread', async () => {
  const pool = new PasswordPool(1, 4);
  try {
    const key = await pool.scrypt(job('secret'));
    const expected = scryptSync('secret', Buffer.from('0123456789abcdef'), 32, { N: 1 << 10, r: 8, p: 1 });
    assert.deepEqual(key, expected);
    assert.deepEqual(pool.stats(), { computed: 1, queued: 0, refused: 0 });
  } finally {
    await pool.close();
  }
});

test('a full queue refuses at once with AUTH_BUSY (503, retry after 1 s); the queued jobs finish', async () => {
  const pool = new PasswordPool(1, 2);
  try {
    const first = pool.scrypt(job('a'));
    const second = pool.scrypt(job('b'));
    await assert.rejects(pool.scrypt(job('c')), (e: unknown) => {
      assert.ok(isTributaryError(e));
      assert.equal(e.errorName, 'AUTH_BUSY');
      assert.equal(e.status, 503);
      assert.equal(e.params.retry_after, 1);
      return true;
    });
    await Promise.all([first, second]);
    assert.deepEqual(pool.stats(), { computed: 2, queued: 0, refused: 1 });
    await pool.scrypt(job('d'));
    assert.equal(pool.stats().computed, 3, 'room again once the queue drained');
  } finally {
    await pool.close();
  }
});

test('hashPassword and verifyPassword go through the shared pool', async () => {
  const before = passwordPool.stats().computed;
  const stored = await hashPassword('correct horse');
  assert.match(stored, /^scrypt\$32768\$8\$1\$/);
  assert.equal(await verifyPassword('correct horse', stored), true);
  assert.equal(await verifyPassword('wrong horse', stored), false);
  assert.equal(passwordPool.stats().computed - before, 3);
});
