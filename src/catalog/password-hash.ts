import { randomBytes, timingSafeEqual } from 'node:crypto';
import { PasswordPool } from './password-pool.ts';

/** scrypt parameters (N=2^15, r=8, p=1: ~50 ms and 32 MiB per hash). */
const N = 1 << 15;
const R = 8;
const P = 1;
const KEY_LEN = 32;
const MAXMEM = 64 * 1024 * 1024;

/** The threads every password hash and check of the process runs on (never libuv's pool). */
export const passwordPool = new PasswordPool();

/** Hash a password as `scrypt$N$r$p$salt$hash` (base64 salt and hash). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await passwordPool.scrypt({
    password,
    salt,
    keyLength: KEY_LEN,
    N,
    r: R,
    p: P,
    maxmem: MAXMEM,
  });
  return ['scrypt', N, R, P, salt.toString('base64'), hash.toString('base64')].join('$');
}

/** Whether the password matches the stored hash. Throws AUTH_BUSY when the pool's queue is full. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [alg, n, r, p, salt, hash] = stored.split('$');
  if (alg !== 'scrypt' || !n || !r || !p || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const actual = await passwordPool.scrypt({
    password,
    salt: Buffer.from(salt, 'base64'),
    keyLength: expected.length,
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: MAXMEM,
  });
  return timingSafeEqual(actual, expected);
}
