/** One HTTP request a delivery makes. */
export interface DeliveryRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string;
  /** Give up on this attempt after this many milliseconds. */
  timeoutMs: number;
}

/** Why one attempt failed; `retryAfterMs` when the receiver said when to come back (429/503). */
export class DeliveryAttemptError extends Error {
  constructor(
    message: string,
    readonly status?: number,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'DeliveryAttemptError';
  }
}

/** `Retry-After` in milliseconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * Send one request (Node's fetch). A 2xx answer is success; anything else, a network error or the
 * timeout is a DeliveryAttemptError (the caller retries). The answer body is read and dropped so
 * the connection can be reused; only its first 200 characters go into the error message. A request
 * in flight is not cut short when its owner stops: its answer decides whether the batch was taken
 * (bounded by the timeout), so a stop does not turn a delivered batch into a resend.
 */
export async function sendRequest(r: DeliveryRequest): Promise<void> {
  const signal = AbortSignal.timeout(r.timeoutMs);
  let response: Response;
  try {
    response = await fetch(r.url, { method: r.method, headers: r.headers, body: r.body, signal });
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    const why =
      (e as Error).name === 'TimeoutError'
        ? `no answer within ${r.timeoutMs} ms`
        : (cause?.code ?? cause?.message ?? (e as Error).message);
    throw new DeliveryAttemptError(`${r.method} ${redactUrl(r.url)}: ${why}`);
  }
  const text = await response.text().catch(() => '');
  if (response.ok) return;
  throw new DeliveryAttemptError(
    `${r.method} ${redactUrl(r.url)} answered ${response.status}${text ? `: ${text.slice(0, 200)}` : ''}`,
    response.status,
    retryAfterMs(response.headers.get('retry-after')),
  );
}

/** A URL for messages and logs: no user info, no query string (webhook tokens live there). */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    if (u.search) u.search = '?…';
    // Slack-style webhooks carry their secret in the path: keep only its first segment.
    if (/hooks\.slack\.com$/i.test(u.hostname))
      u.pathname = `${u.pathname.split('/').slice(0, 2).join('/')}/…`;
    return u.toString();
  } catch {
    return '(invalid url)';
  }
}
