// A stand-in for Tributary's REST API, for the conformance runner's own tests: it speaks the
// contract the runner codes against (POST /queries with SSE, 204 or a JSON error; cancel; stream
// get; ingest) over a handful of SQL shapes, with in-memory streams:
//   create stream NAME (col type, ...)      drop stream if exists NAME
//   select * from NAME                      streaming: rows ingested after it started
//   select * from table(NAME)               historical: rows so far, then finished
//   select * from NAME fail after N         streaming, fails with error code 42 after N ms
//   select error                            400 {code: 47}
//   select flaky                            [[0]] the first time, [[1]] afterwards
//   select hang                             SSE that never ends (until canceled or closed)

import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

interface FakeStream {
  columns: Array<{ name: string; type: string }>;
  rows: unknown[][];
  listeners: Set<(rows: unknown[][]) => void>;
}

interface FakeQuery {
  id: string;
  sql: string;
  status: 'running' | 'finished' | 'canceled' | 'failed';
  end: (status: 'finished' | 'canceled' | 'failed', error?: { code: number; message: string }) => void;
}

export class FakeTributary {
  readonly streams = new Map<string, FakeStream>();
  readonly queries = new Map<string, FakeQuery>();
  readonly sqlLog: string[] = [];
  private server: http.Server | undefined;
  private readonly sockets = new Set<Socket>();
  private nextId = 1;
  private flakyCalls = 0;
  port = 0;

  constructor(
    private readonly user = 'admin',
    private readonly password = 'password1',
  ) {}

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}/default/api`;
  }

  /** Queries whose SSE connection is still open. */
  get runningQueries(): number {
    return [...this.queries.values()].filter((q) => q.status === 'running').length;
  }

  get openSockets(): number {
    return this.sockets.size;
  }

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      this.handle(req, res).catch((e) => {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ code: 1, message: String(e), system: 'fake' }));
      });
    });
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    for (const q of this.queries.values()) if (q.status === 'running') q.end('canceled');
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => this.server?.close(() => r()));
  }

  private async body(req: IncomingMessage): Promise<unknown> {
    let text = '';
    for await (const chunk of req) text += chunk;
    return text ? JSON.parse(text) : undefined;
  }

  private json(res: ServerResponse, status: number, body?: unknown): void {
    if (body === undefined) {
      res.writeHead(status);
      res.end();
      return;
    }
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    const path = url.pathname.replace(/^\/default\/api/, '');
    const expected = `Basic ${Buffer.from(`${this.user}:${this.password}`).toString('base64')}`;
    if (path === '/info') return this.json(res, 200, { product_name: 'fake' });
    if (req.headers.authorization !== expected)
      return this.json(res, 401, { code: 401, message: 'auth', system: 'fake' });
    let m: RegExpExecArray | null;
    if (req.method === 'POST' && path === '/v1beta2/queries') {
      const body = (await this.body(req)) as { sql: string };
      return this.query(body.sql.trim(), res);
    }
    m = /^\/v1beta2\/queries\/([^/]+)\/cancel$/.exec(path);
    if (req.method === 'POST' && m) {
      const q = this.queries.get(decodeURIComponent(m[1]!));
      if (q?.status === 'running') q.end('canceled');
      return this.json(res, 204);
    }
    m = /^\/v1beta2\/streams\/([^/]+)$/.exec(path);
    if (req.method === 'GET' && m) {
      const name = decodeURIComponent(m[1]!);
      return this.streams.has(name) ? this.json(res, 200, { name }) : this.json(res, 404);
    }
    m = /^\/v1beta2\/streams\/([^/]+)\/ingest$/.exec(path);
    if (req.method === 'POST' && m) {
      const s = this.streams.get(decodeURIComponent(m[1]!));
      if (!s) return this.json(res, 404, { code: 60, message: 'no such stream', system: 'fake' });
      const body = (await this.body(req)) as { columns: string[]; data: unknown[][] };
      const unknown = body.columns.find((c) => !s.columns.some((sc) => sc.name === c));
      if (unknown)
        return this.json(res, 400, { code: 16, message: `No such column ${unknown}`, system: 'fake' });
      const rows = body.data.map((r) => s.columns.map((c) => r[body.columns.indexOf(c.name)] ?? null));
      s.rows.push(...rows);
      for (const l of s.listeners) l(rows);
      return this.json(res, 200);
    }
    return this.json(res, 404);
  }

  private query(sql: string, res: ServerResponse) {
    this.sqlLog.push(sql);
    let m: RegExpExecArray | null;
    m = /^create stream (\w+) \((.*)\)$/i.exec(sql);
    if (m) {
      if (this.streams.has(m[1]!))
        return this.json(res, 400, { code: 57, message: 'exists', system: 'fake' });
      const columns = m[2]!.split(',').map((c) => {
        const [name = '', type = 'string'] = c.trim().split(/\s+/);
        return { name, type };
      });
      this.streams.set(m[1]!, { columns, rows: [], listeners: new Set() });
      return this.json(res, 204);
    }
    m = /^drop stream if exists (\w+)$/i.exec(sql);
    if (m) {
      this.streams.delete(m[1]!);
      return this.json(res, 204);
    }
    if (/^select error$/i.test(sql))
      return this.json(res, 400, { code: 47, message: 'Unknown identifier', system: 'fake' });
    if (/^select flaky$/i.test(sql)) {
      const n = this.flakyCalls++;
      return this.sse(res, sql, [{ name: 'x', type: 'uint8' }], (q, send) => {
        send([[n === 0 ? 0 : 1]]);
        q.end('finished');
        return undefined;
      });
    }
    if (/^select hang$/i.test(sql))
      return this.sse(res, sql, [{ name: 'x', type: 'uint8' }], () => undefined);
    m = /^select \* from table\((\w+)\)$/i.exec(sql);
    if (m) {
      const s = this.streams.get(m[1]!);
      if (!s) return this.json(res, 400, { code: 60, message: 'unknown stream', system: 'fake' });
      return this.sse(res, sql, s.columns, (q, send) => {
        send(s.rows);
        q.end('finished');
        return undefined;
      });
    }
    m = /^select \* from (\w+)(?: fail after (\d+))?$/i.exec(sql);
    if (m) {
      const s = this.streams.get(m[1]!);
      if (!s) return this.json(res, 400, { code: 60, message: 'unknown stream', system: 'fake' });
      const failAfter = m[2] === undefined ? undefined : Number(m[2]);
      return this.sse(res, sql, s.columns, (q, send) => {
        const listener = (rows: unknown[][]) => send(rows);
        s.listeners.add(listener);
        const timer =
          failAfter === undefined
            ? undefined
            : setTimeout(() => q.end('failed', { code: 42, message: 'boom' }), failAfter);
        return () => {
          s.listeners.delete(listener);
          if (timer) clearTimeout(timer);
        };
      });
    }
    return this.json(res, 400, { code: 62, message: `syntax error: ${sql}`, system: 'fake' });
  }

  private sse(
    res: ServerResponse,
    sql: string,
    header: Array<{ name: string; type: string }>,
    run: (q: FakeQuery, send: (rows: unknown[][]) => void) => (() => void) | undefined,
  ): void {
    const id = `q-${this.nextId++}`;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const event = (name: string | undefined, data: unknown) =>
      res.write(`${name ? `event: ${name}\n` : ''}data: ${JSON.stringify(data)}\n\n`);
    let cleanup: (() => void) | undefined;
    const q: FakeQuery = {
      id,
      sql,
      status: 'running',
      end: (status, error) => {
        if (q.status !== 'running') return;
        q.status = status;
        cleanup?.();
        event('query', {
          id,
          sql,
          status,
          result: { header },
          ...(error ? { error, message: error.message } : {}),
        });
        res.end();
      },
    };
    this.queries.set(id, q);
    res.on('close', () => {
      if (q.status === 'running') {
        q.status = 'canceled';
        cleanup?.();
      }
    });
    event('query', { id, sql, status: 'running', result: { header } });
    const r = run(q, (rows) => {
      if (rows.length > 0 && q.status === 'running') event(undefined, rows);
    });
    if (typeof r === 'function') cleanup = r;
  }
}
