import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { err } from '../../../errors/tributary-error.ts';
import type { Logger } from '../../../log/logger.ts';
import { InputCounters, type InputStats } from '../input-counters.ts';
import { BasicAuthCheck } from './basic-auth.ts';
import { tooLarge } from './bulk-body.ts';
import { BulkIngest } from './bulk-ingest.ts';
import type { BulkSink } from './bulk-sink.ts';
import { ClusterInfo } from './cluster-info.ts';
import type { ElasticInputDefinition } from './elastic-input-definition.ts';
import { EsRequestError } from './es-error.ts';
import { routeEsRequest } from './es-routes.ts';

export interface ElasticListenerOptions {
  definition: ElasticInputDefinition;
  sink: BulkSink;
  logger?: Logger;
  /** Bulk requests handled at once; more get a request-level 429 (default 64). */
  maxConcurrentBulks?: number;
}

export interface ListenAddress {
  host: string;
  port: number;
}

/** Every response, errors and HEADs included, says it is Elasticsearch (clients check it). */
const BASE_HEADERS = {
  'x-elastic-product': 'Elasticsearch',
  'content-type': 'application/json; charset=UTF-8',
} as const;

/** Bytes of an over-limit body read and discarded before the connection is cut. */
const MAX_DISCARD = 16 * 1024 * 1024;

/**
 * The HTTP/1.1 server of one elastic input (node:http: a bulk request is one raw Buffer body and
 * one string response, so a framework's routing, hooks and body parsers would only add cost).
 * Answers `POST|PUT /_bulk`, `/{index}/_bulk`, `/{index}/{type}/_bulk` and the start-up calls of
 * log shippers (see es-routes.ts), checks Basic auth and the body size, and keeps the input's
 * counters.
 */
export class ElasticListener {
  private readonly server: Server;
  private readonly counters = new InputCounters();
  private readonly auth: BasicAuthCheck;
  private readonly ingest: BulkIngest;
  private readonly info: ClusterInfo;
  private readonly maxBodyBytes: number;
  private readonly maxConcurrentBulks: number;
  private readonly logger: Logger | undefined;
  private inFlight = 0;
  private bound: ListenAddress | undefined;

  constructor(private readonly options: ElasticListenerOptions) {
    const def = options.definition;
    this.auth = new BasicAuthCheck(def.username, def.password);
    this.ingest = new BulkIngest(options.sink, this.counters, def.max_body_bytes);
    this.info = new ClusterInfo(def.name, def.es_version);
    this.maxBodyBytes = def.max_body_bytes;
    this.maxConcurrentBulks = options.maxConcurrentBulks ?? 64;
    this.logger = options.logger?.child({ input: def.name });
    this.server = createServer({ keepAliveTimeout: 60_000, headersTimeout: 66_000 }, (req, res) => {
      void this.handle(req, res, false);
    });
    this.server.on('checkContinue', (req, res) => void this.handle(req, res, true));
    this.server.on('clientError', (e, socket: Socket) => {
      if (!socket.writable || (e as { code?: string }).code === 'ECONNRESET') return socket.destroy();
      const body = new EsRequestError(
        400,
        'illegal_argument_exception',
        `bad HTTP request: ${e.message}`,
      ).body();
      socket.end(
        `HTTP/1.1 400 Bad Request\r\nX-Elastic-Product: Elasticsearch\r\nContent-Type: application/json; charset=UTF-8\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    });
  }

  /** Listen; a port in use is INPUT_PORT_IN_USE, any other failure INPUT_LISTEN_FAILED. */
  start(): Promise<ListenAddress> {
    const { listen_host: host, tcp_port: port } = this.options.definition;
    return new Promise((resolve, reject) => {
      const onError = (e: NodeJS.ErrnoException) => {
        this.server.off('listening', onListening);
        const detail =
          e.code === 'EADDRINUSE' ? 'the address is already in use' : `${e.code ?? ''} ${e.message}`.trim();
        reject(
          err(
            e.code === 'EADDRINUSE' ? 'INPUT_PORT_IN_USE' : 'INPUT_LISTEN_FAILED',
            { host, port, detail },
            e,
          ),
        );
      };
      const onListening = () => {
        this.server.off('error', onError);
        const a = this.server.address() as AddressInfo;
        this.bound = { host, port: a.port };
        resolve(this.bound);
      };
      this.server.once('error', onError);
      this.server.once('listening', onListening);
      this.server.listen({ host, port, exclusive: true });
    });
  }

  /** Stop listening; requests in flight finish (idle keep-alive connections are closed at once). */
  async stop(graceMs = 5_000): Promise<void> {
    if (!this.server.listening) return;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeIdleConnections();
    const timer = setTimeout(() => this.server.closeAllConnections(), graceMs);
    await closed;
    clearTimeout(timer);
    this.bound = undefined;
  }

  address(): ListenAddress | undefined {
    return this.bound;
  }

  stats(): InputStats {
    return this.counters.snapshot();
  }

  private async handle(req: IncomingMessage, res: ServerResponse, expectsContinue: boolean): Promise<void> {
    const startedAt = performance.now();
    this.counters.requests++;
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const rawPath = q < 0 ? url : url.slice(0, q);
    let bulk = false;
    try {
      this.auth.check(req.headers.authorization, rawPath);
      const route = routeEsRequest(req.method ?? 'GET', rawPath, segmentsOf(rawPath), this.info, () =>
        publishAddress(req.socket),
      );
      if (route.kind === 'answer') {
        if (expectsContinue) res.writeContinue();
        return this.send(res, route.status, JSON.stringify(route.body));
      }
      bulk = true;
      this.counters.bulkRequests++;
      if (this.inFlight >= this.maxConcurrentBulks)
        throw new EsRequestError(
          429,
          'es_rejected_execution_exception',
          `rejected execution of bulk request: ${this.inFlight} bulk requests are in progress on this input`,
        );
      this.inFlight++;
      try {
        if (expectsContinue && !declaredTooLarge(req, this.maxBodyBytes)) res.writeContinue();
        const body = await this.readBody(req);
        const header = req.headers['content-encoding'];
        const out = await this.ingest.handle(body, header, route.pathIndex, startedAt);
        this.send(res, 200, out);
      } finally {
        this.inFlight--;
      }
    } catch (e) {
      this.counters.failedRequests++;
      if (req.destroyed && !(e instanceof EsRequestError)) {
        // The client went away mid-request (aborted upload): nobody to answer.
        this.counters.recordError(`request aborted by the client: ${(e as Error).message ?? String(e)}`);
        return;
      }
      const failure =
        e instanceof EsRequestError
          ? e
          : new EsRequestError(500, 'exception', (e as Error).message ?? String(e));
      if (!(e instanceof EsRequestError)) this.logger?.error({ err: e }, 'elastic input: unexpected failure');
      this.counters.recordError(`${failure.status} ${failure.type}: ${failure.reason}`);
      if (bulk && failure.status >= 500)
        this.logger?.warn({ reason: failure.reason }, 'elastic input: bulk failed');
      this.send(res, failure.status, failure.body(), failure.headers);
    }
  }

  /** The whole body, or a 413 as soon as it is known to be over the limit. */
  private readBody(req: IncomingMessage): Promise<Buffer> {
    const limit = this.maxBodyBytes;
    if (declaredTooLarge(req, limit)) {
      discardRest(req);
      return Promise.reject(tooLarge(limit));
    }
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const onData = (chunk: Buffer) => {
        size += chunk.length;
        this.counters.bytesReceived += chunk.length;
        if (size > limit) {
          req.off('data', onData);
          req.off('end', onEnd);
          discardRest(req);
          reject(tooLarge(limit));
          return;
        }
        chunks.push(chunk);
      };
      const onEnd = () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
      req.on('data', onData);
      req.on('end', onEnd);
      req.on('error', reject);
    });
  }

  private send(
    res: ServerResponse,
    status: number,
    body: string | Buffer,
    headers: Readonly<Record<string, string>> = {},
  ): void {
    if (res.headersSent) return;
    res.writeHead(status, { ...BASE_HEADERS, 'content-length': Buffer.byteLength(body), ...headers });
    res.end(body);
  }
}

function declaredTooLarge(req: IncomingMessage, limit: number): boolean {
  const declared = req.headers['content-length'];
  return declared !== undefined && Number(declared) > limit;
}

/** Read and drop the rest of a rejected body so the client sees the answer; cut it if it goes on. */
function discardRest(req: IncomingMessage): void {
  let discarded = 0;
  req.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > MAX_DISCARD) req.socket.destroy();
  });
  req.resume();
}

function segmentsOf(rawPath: string): string[] {
  const out: string[] = [];
  for (const s of rawPath.split('/')) {
    if (s === '') continue;
    try {
      out.push(decodeURIComponent(s));
    } catch {
      throw new EsRequestError(
        400,
        'illegal_argument_exception',
        `invalid percent-encoding in path [${rawPath}]`,
      );
    }
  }
  return out;
}

function publishAddress(socket: Socket): string {
  const ip = (socket.localAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
  return `${ip.includes(':') ? `[${ip}]` : ip}:${socket.localPort ?? 0}`;
}
