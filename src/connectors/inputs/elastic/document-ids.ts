import { randomBytes } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** The 4096 two-character base64url strings: 12 bits of the counter each. */
const PAIRS: readonly string[] = Array.from(
  { length: 4096 },
  (_, v) => ALPHABET[v >>> 6]! + ALPHABET[v & 63]!,
);

/**
 * Ids for documents sent without `_id`, shaped like Elasticsearch's own: 20 URL-safe base64
 * characters encoding 15 bytes = a random 48-bit generator id (fixed per listener start)
 * + a 48-bit millisecond timestamp + a 24-bit counter. Unique across listeners and restarts
 * (the random part) and within one listener (time + counter; the time never goes backwards).
 * Cheap: the first 16 characters are computed once per millisecond, the last 4 from a table.
 */
export class DocumentIds {
  private readonly node: string;
  private prefix = '';
  private prefixMs = -1;
  private counter = 0;

  constructor() {
    this.node = randomBytes(6).toString('base64url');
  }

  /** Call once per request: refreshes the time part. */
  refresh(nowMs: number = Date.now()): void {
    if (nowMs <= this.prefixMs) return;
    const t = Buffer.alloc(6);
    t.writeUIntBE(nowMs, 0, 6);
    this.prefixMs = nowMs;
    // One flat string (not a concatenation), so ids built on it stay shallow ropes.
    this.prefix = Buffer.from(this.node + t.toString('base64url'), 'latin1').toString('latin1');
  }

  next(): string {
    if (this.prefixMs < 0) this.refresh();
    const c = this.counter;
    this.counter = (c + 1) & 0xffffff;
    // A wrap of the 24-bit counter within one millisecond would repeat ids: move time forward.
    if (this.counter === 0) this.refresh(this.prefixMs + 1);
    const tail = PAIRS[(c >>> 12) & 4095]! + PAIRS[c & 4095]!;
    return this.prefix + tail;
  }
}
