// The few REST routes of Tributary the runner uses (base `http://host:port/default/api`, HTTP Basic):
// POST /v1beta2/queries (SSE, 204 or a JSON error), POST /v1beta2/queries/{id}/cancel,
// GET /v1beta2/streams|views|materialized_views/{name}, POST /v1beta2/streams/{name}/ingest,
// POST /v1beta2/udfs. Each request uses its own connection (no pooling), and every open request is
// tracked so that a timed-out case can close all of them.

import http, { type ClientRequest, type IncomingMessage } from 'node:http';
import https from 'node:https';
import { stringify } from 'lossless-json';
import { codeFromMessage, QueryStream } from './sse-client.ts';
import { AbortedError } from './timing.ts';

export interface Credentials {
  user: string;
  password: string;
}

export interface HttpAnswer {
  status: number;
  contentType: string;
  text: string;
}

/** What POST /v1beta2/queries answered. */
export type QueryStart =
  | { kind: 'statement' }
  | { kind: 'error'; status: number; code: number | undefined; message: string }
  | { kind: 'stream'; stream: QueryStream };

export interface RequestOptions {
  signal?: AbortSignal;
  credentials?: Credentials;
  /** Milliseconds until the request is abandoned (default 60 s; SSE bodies are not limited). */
  timeoutMs?: number;
}

/** The API base from `--url`: a bare server address gets `/default/api` appended. */
export function apiBase(url: string): string {
  const trimmed = url.replace(/\/+$/, '');
  return /\/api$/.test(trimmed) ? trimmed : `${trimmed}/default/api`;
}

export function errorOf(answer: HttpAnswer): { code: number | undefined; message: string } {
  try {
    const body = JSON.parse(answer.text) as { code?: unknown; message?: unknown; error_msg?: unknown };
    const message = String(body.message ?? body.error_msg ?? answer.text);
    const code = typeof body.code === 'number' ? body.code : codeFromMessage(message);
    return { code, message };
  } catch {
    return { code: codeFromMessage(answer.text), message: answer.text || `HTTP ${answer.status}` };
  }
}

export class TributaryApi {
  private readonly open = new Set<ClientRequest>();

  constructor(
    readonly base: string,
    private readonly credentials: Credentials,
  ) {}

  /** Number of requests not yet released (used by tests to check nothing leaks). */
  get openRequests(): number {
    return [...this.open].filter((r) => !r.destroyed).length;
  }

  /** Destroy every open request (end of run). */
  closeAll(): void {
    for (const req of this.open) req.destroy();
    this.open.clear();
  }

  private send(
    method: string,
    path: string,
    body: unknown,
    opts: RequestOptions,
    onResponse: (req: ClientRequest, res: IncomingMessage) => void,
    onError: (e: Error) => void,
  ): ClientRequest | undefined {
    const url = new URL(this.base + path);
    const creds = opts.credentials ?? this.credentials;
    const payload = body === undefined ? undefined : (stringify(body) ?? 'null');
    const headers: Record<string, string> = {
      authorization: `Basic ${Buffer.from(`${creds.user}:${creds.password}`).toString('base64')}`,
      accept: 'text/event-stream, application/json',
      connection: 'close',
    };
    if (payload !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(Buffer.byteLength(payload));
    }
    const signal = opts.signal;
    if (signal?.aborted) {
      onError(new AbortedError(signal.reason));
      return undefined;
    }
    const mod = url.protocol === 'https:' ? https : http;
    const req = mod.request(url, { method, headers, agent: false });
    this.open.add(req);
    req.on('close', () => this.open.delete(req));
    const onAbort = () => req.destroy(new AbortedError(signal?.reason));
    signal?.addEventListener('abort', onAbort, { once: true });
    req.on('close', () => signal?.removeEventListener('abort', onAbort));
    req.on('error', (e) => onError(signal?.aborted ? new AbortedError(signal.reason) : e));
    req.on('response', (res) => onResponse(req, res));
    req.end(payload);
    return req;
  }

  /** A plain request; the whole body is read as text. */
  request(method: string, path: string, body?: unknown, opts: RequestOptions = {}): Promise<HttpAnswer> {
    return new Promise((resolve, reject) => {
      const ms = opts.timeoutMs ?? 60_000;
      let req: ClientRequest | undefined;
      const timer = setTimeout(() => {
        reject(new Error(`${method} ${path}: no answer within ${ms / 1000}s`));
        req?.destroy();
      }, ms);
      req = this.send(
        method,
        path,
        body,
        opts,
        (r, res) => {
          res.setEncoding('utf8');
          let text = '';
          res.on('data', (c: string) => {
            text += c;
          });
          res.on('end', () => {
            clearTimeout(timer);
            resolve({
              status: res.statusCode ?? 0,
              contentType: String(res.headers['content-type'] ?? ''),
              text,
            });
            r.destroy();
          });
          res.on('error', (e) => {
            clearTimeout(timer);
            reject(e);
          });
        },
        (e) => {
          clearTimeout(timer);
          reject(e);
        },
      );
    });
  }

  /**
   * POST /v1beta2/queries. Resolves as soon as the server answered: 204 (a statement without
   * result), a JSON error, or an event stream to read from.
   */
  startQuery(sql: string, extra: Record<string, unknown>, opts: RequestOptions = {}): Promise<QueryStart> {
    return new Promise((resolve, reject) => {
      this.send(
        'POST',
        '/v1beta2/queries',
        { sql, ...extra },
        opts,
        (req, res) => {
          const type = String(res.headers['content-type'] ?? '');
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300 && type.includes('text/event-stream')) {
            resolve({ kind: 'stream', stream: new QueryStream(req, res) });
            return;
          }
          res.setEncoding('utf8');
          let text = '';
          res.on('data', (c: string) => {
            text += c;
          });
          res.on('end', () => {
            req.destroy();
            if (status >= 200 && status < 300) resolve({ kind: 'statement' });
            else resolve({ kind: 'error', status, ...errorOf({ status, contentType: type, text }) });
          });
          res.on('error', reject);
        },
        reject,
      );
    });
  }

  /** POST /v1beta2/queries/{id}/cancel. */
  async cancel(queryId: string, opts: RequestOptions = {}): Promise<void> {
    const answer = await this.request(
      'POST',
      `/v1beta2/queries/${encodeURIComponent(queryId)}/cancel`,
      undefined,
      {
        timeoutMs: 10_000,
        ...opts,
      },
    );
    if (answer.status >= 300 && answer.status !== 404)
      throw new Error(`cancel ${queryId}: HTTP ${answer.status} ${errorOf(answer).message}`);
  }

  /** Whether a stream, view or materialized view of that name exists. */
  async objectExists(name: string, opts: RequestOptions = {}): Promise<boolean> {
    for (const kind of ['streams', 'views', 'materialized_views', 'external_streams']) {
      const answer = await this.request('GET', `/v1beta2/${kind}/${encodeURIComponent(name)}`, undefined, {
        timeoutMs: 10_000,
        ...opts,
      });
      if (answer.status === 200) return true;
    }
    return false;
  }

  /** POST /v1beta2/streams/{name}/ingest with `{columns, data}`. */
  async ingest(
    stream: string,
    columns: string[],
    data: unknown[],
    opts: RequestOptions = {},
  ): Promise<HttpAnswer> {
    return this.request(
      'POST',
      `/v1beta2/streams/${encodeURIComponent(stream)}/ingest`,
      { columns, data },
      opts,
    );
  }
}
