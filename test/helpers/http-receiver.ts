import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the receiver got. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The status it answered. */
  status: number;
}

/** What the receiver answers next: a status (and headers), or `ok` (200). */
export type Answer = { status: number; headers?: Record<string, string> } | 'ok';

/**
 * A real HTTP receiver on 127.0.0.1 (random port) for sink tests. It records every request; `answer`
 * decides each answer (default 200), so a test can fail it for a while (5xx, 429) and then heal it.
 * `accepted()` is the requests answered 2xx with their idempotency keys: a redelivery of a key the
 * receiver already took shows up as a duplicate key.
 */
export class HttpReceiver {
  readonly requests: ReceivedRequest[] = [];
  answer: (r: Omit<ReceivedRequest, 'status'>) => Answer = () => 'ok';
  private waiters: Array<() => void> = [];

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<HttpReceiver> {
    let self: HttpReceiver | undefined;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const r = {
          method: req.method ?? '',
          path: req.url ?? '',
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        };
        const a = self?.answer(r) ?? 'ok';
        const status = a === 'ok' ? 200 : a.status;
        self?.requests.push({ ...r, status });
        res.writeHead(status, a === 'ok' ? {} : (a.headers ?? {}));
        res.end(status < 300 ? 'ok' : 'failing on purpose');
        const w = self?.waiters ?? [];
        if (self) self.waiters = [];
        for (const f of w) f();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    self = new HttpReceiver(server, `http://127.0.0.1:${port}`);
    return self;
  }

  accepted(): ReceivedRequest[] {
    return this.requests.filter((r) => r.status < 300);
  }

  /** JSON-lines rows of every accepted request (each line parsed). */
  acceptedRows(): Record<string, unknown>[] {
    return this.accepted().flatMap((r) =>
      r.body
        .split('\n')
        .filter((l) => l.length > 0)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    );
  }

  /** Resolves once `check()` holds, re-checked after each request (or every 100 ms). */
  async until(check: () => boolean, what: string, tries = 600): Promise<void> {
    for (let i = 0; i < tries; i++) {
      if (check()) return;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 100);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    throw new Error(`receiver: ${what} did not happen`);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
