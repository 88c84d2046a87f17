import type { DeliveryRequest } from './http-request.ts';

/**
 * How rows become requests to one receiver: the http sink, the slack sink and the http external
 * stream each make one of these from their properties or settings.
 */
export interface Delivery {
  /** For messages: the kind and a redacted address, e.g. `http sink → http://127.0.0.1:9000/in`. */
  readonly describe: string;
  /** Rows per request (a hand-over larger than this goes out in several requests). */
  readonly batchSize: number;
  /** Least time between two requests (Slack asks for about one message per second). */
  readonly minIntervalMs: number;
  /** The request carrying `rows` (JSON arrays in `columns` order), with `key` as its idempotency key. */
  request(columns: readonly string[], rows: readonly string[], key: string): DeliveryRequest;
}

/** The header carrying a batch's idempotency key. */
export const IDEMPOTENCY_HEADER = 'Idempotency-Key';

export interface RetryBackoff {
  /** Wait after the first failed attempt (ms); doubles with each failure in a row. */
  baseMs: number;
  /** Longest wait between attempts (ms). */
  maxMs: number;
}

export const DEFAULT_BACKOFF: RetryBackoff = { baseMs: 500, maxMs: 30_000 };

/** The wait before attempt `failures + 1`: the receiver's Retry-After when it gave one, else backoff. */
export function retryWait(failures: number, backoff: RetryBackoff, retryAfterMs?: number): number {
  if (retryAfterMs !== undefined) return Math.min(retryAfterMs, 10 * 60_000);
  return Math.min(backoff.baseMs * 2 ** Math.max(0, failures - 1), backoff.maxMs);
}
