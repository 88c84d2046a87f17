// The elastic input's protocol layer: docs/s for 1,000-document bulk requests of ~300-byte log
// lines, sent over HTTP/1.1 keep-alive by a load generator in a worker thread.
//   npm run bench -- elastic [--seconds 5] [--concurrency 4]
// The sink is pluggable (`measureElasticInput({sink})`): the default one only counts rows, so the
// figure is the protocol layer alone. Printed next to it, measured in the same run:
//   - the HTTP floor: a bare node:http server that reads the same body and sends a canned
//     response of the same size (what any HTTP ingest costs before parsing anything);
//   - the body decoder + parser + response builder alone, in-process, no HTTP.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Worker } from 'node:worker_threads';
import { gzipSync } from 'node:zlib';
import { splitDecode } from '../src/connectors/inputs/elastic/bulk-body.ts';
import { parseBulk } from '../src/connectors/inputs/elastic/bulk-parser.ts';
import { buildBulkResponse, SequenceNumbers } from '../src/connectors/inputs/elastic/bulk-response.ts';
import type { BulkRow, BulkSink } from '../src/connectors/inputs/elastic/bulk-sink.ts';
import { DocumentIds } from '../src/connectors/inputs/elastic/document-ids.ts';
import { validateElasticInputSettings } from '../src/connectors/inputs/elastic/elastic-input-definition.ts';
import { ElasticListener } from '../src/connectors/inputs/elastic/elastic-listener.ts';

export const DOCS_PER_REQUEST = 1000;

/** `n` JSON log lines of ~300 bytes, like a Filebeat event. */
export function makeLogLines(n: number, offset = 0): string[] {
  const out: string[] = [];
  for (let k = 0; k < n; k++) {
    const i = offset + k;
    out.push(
      JSON.stringify({
        '@timestamp': new Date(1_700_000_000_000 + i * 17).toISOString(),
        host: { name: `web-${i % 7}` },
        log: { level: i % 50 === 0 ? 'warn' : 'info', logger: 'access' },
        service: { name: 'frontend' },
        message: `10.0.${i % 250}.${(i * 7) % 250} - - "GET /api/v1/items/${i} HTTP/1.1" 200 ${1000 + (i % 500)} "Mozilla/5.0 (X11; Linux x86_64)"`,
        trace: { id: ((i * 2654435761) >>> 0).toString(16).padStart(8, '0') + 'a3f1c2d4e5b6a7c8' },
      }),
    );
  }
  return out;
}

/** A bulk body: one `create` action line (Filebeat's) before each document. */
export function makeBulkBody(lines: readonly string[], index = 'logs-bench'): string {
  const action = JSON.stringify({ create: { _index: index } });
  return `${lines.map((l) => `${action}\n${l}`).join('\n')}\n`;
}

/** A sink that does the minimum: count the rows. */
export class CountingSink implements BulkSink {
  rows = 0;
  async write(rows: BulkRow[]): Promise<void> {
    this.rows += rows.length;
  }
}

export interface LoadResult {
  requests: number;
  docs: number;
  seconds: number;
  docsPerSec: number;
  failures: number;
}

/** Send `body` to `url` from a worker thread, `concurrency` keep-alive requests in flight, for `seconds`. */
export function runLoad(
  url: string,
  body: Buffer,
  options: { seconds: number; concurrency: number; gzip: boolean },
): Promise<LoadResult> {
  const code = `
    const { workerData, parentPort } = require('node:worker_threads');
    const http = require('node:http');
    const { url, body, seconds, concurrency, gzip } = workerData;
    const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
    const u = new URL(url);
    const headers = { 'content-type': 'application/x-ndjson', 'content-length': body.length };
    if (gzip) headers['content-encoding'] = 'gzip';
    let requests = 0, failures = 0, stop = false;
    const t0 = performance.now();
    function one() {
      return new Promise((resolve) => {
        const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', agent, headers }, (res) => {
          let n = 0;
          res.on('data', (c) => { n += c.length; });
          res.on('end', () => { if (res.statusCode === 200) requests++; else failures++; resolve(); });
        });
        req.on('error', () => { failures++; resolve(); });
        req.end(Buffer.from(body.buffer, body.byteOffset, body.length));
      });
    }
    async function loop() { while (!stop) await one(); }
    setTimeout(() => { stop = true; }, seconds * 1000);
    Promise.all(Array.from({ length: concurrency }, loop)).then(() => {
      parentPort.postMessage({ requests, failures, seconds: (performance.now() - t0) / 1000 });
      agent.destroy();
    });
  `;
  return new Promise((resolve, reject) => {
    const worker = new Worker(code, { eval: true, workerData: { url, body, ...options } });
    worker.once('message', (m: { requests: number; failures: number; seconds: number }) => {
      const docs = m.requests * DOCS_PER_REQUEST;
      resolve({ ...m, docs, docsPerSec: docs / m.seconds });
      void worker.terminate();
    });
    worker.once('error', reject);
  });
}

/** docs/s of an elastic input writing into `sink` (the protocol layer alone with CountingSink). */
export async function measureElasticInput(options: {
  sink: BulkSink;
  seconds: number;
  concurrency: number;
  gzip: boolean;
  lines?: readonly string[];
}): Promise<LoadResult> {
  const definition = validateElasticInputSettings('bench', {
    type: 'elastic',
    target_stream: 'logs',
    tcp_port: 0,
    listen_host: '127.0.0.1',
  });
  const listener = new ElasticListener({ definition, sink: options.sink });
  const { port } = await listener.start();
  try {
    const text = makeBulkBody(options.lines ?? makeLogLines(DOCS_PER_REQUEST));
    const body = options.gzip ? gzipSync(text, { level: 1 }) : Buffer.from(text);
    return await runLoad(`http://127.0.0.1:${port}/_bulk`, body, options);
  } finally {
    await listener.stop();
  }
}

/** The same load against a server that reads the body and sends a canned response of the real size. */
async function measureHttpFloor(seconds: number, concurrency: number, text: string): Promise<LoadResult> {
  const ids = new DocumentIds();
  const response = buildBulkResponse(parseBulk(text, { ids }).items, 1, new SequenceNumbers()).body;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      Buffer.concat(chunks);
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(response),
      });
      res.end(response);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  try {
    return await runLoad(`http://127.0.0.1:${port}/_bulk`, Buffer.from(text), {
      seconds,
      concurrency,
      gzip: false,
    });
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
}

/** Body decoder + parser + response builder alone, in-process. */
function measureParser(text: string, seconds: number): number {
  const ids = new DocumentIds();
  const seq = new SequenceNumbers();
  const body = Buffer.from(text);
  let n = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < seconds * 1000) {
    const parsed = parseBulk(splitDecode(body), { ids });
    buildBulkResponse(parsed.items, 1, seq);
    n++;
  }
  return (n * DOCS_PER_REQUEST * 1000) / (performance.now() - t0);
}

function arg(args: string[], name: string, fallback: number): number {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? Number(args[i + 1]) : fallback;
}

export default async function main(args: string[] = []): Promise<void> {
  const seconds = arg(args, 'seconds', 5);
  const concurrency = arg(args, 'concurrency', 4);
  const lines = makeLogLines(DOCS_PER_REQUEST);
  const text = makeBulkBody(lines);
  const docBytes = Math.round(lines.reduce((s, l) => s + l.length, 0) / lines.length);
  console.log(
    `elastic input bench: ${DOCS_PER_REQUEST} docs/request, ${docBytes}-byte documents, ` +
      `${(text.length / 1024).toFixed(0)} KiB body (${(gzipSync(text, { level: 1 }).length / 1024).toFixed(0)} KiB gzip -1), ` +
      `${concurrency} requests in flight, ${seconds} s per figure`,
  );
  const rows: Array<[string, number]> = [];
  const report = (label: string, docsPerSec: number) => {
    rows.push([label, docsPerSec]);
    console.log(
      `  ${label.padEnd(58)} ${Math.round(docsPerSec).toLocaleString('en-US').padStart(11)} docs/s`,
    );
  };
  report('decode + parse + respond, in-process (no HTTP)', measureParser(text, seconds));
  report(
    'baseline: bare node:http, read body + canned response',
    (await measureHttpFloor(seconds, concurrency, text)).docsPerSec,
  );
  const plain = await measureElasticInput({
    sink: new CountingSink(),
    seconds,
    concurrency,
    gzip: false,
    lines,
  });
  report('elastic input, counting sink, identity', plain.docsPerSec);
  const gz = await measureElasticInput({ sink: new CountingSink(), seconds, concurrency, gzip: true, lines });
  report('elastic input, counting sink, gzip', gz.docsPerSec);
  if (plain.failures + gz.failures > 0) console.log(`  (${plain.failures + gz.failures} failed requests)`);
}
