// The elastic input's protocol layer: docs/s for 1,000-document bulk requests of ~300-byte log
// lines, sent over HTTP/1.1 keep-alive by a load generator in a worker thread.
//   npm run bench -- elastic [--seconds 5] [--concurrency 4] [--only protocol|full] [--rounds 3]
// The sink is pluggable (`measureElasticInput({sink})`): the default one only counts rows, so the
// figure is the protocol layer alone. Printed next to it, measured in the same run:
//   - the HTTP floor: a bare node:http server that reads the same body and sends a canned
//     response of the same size (what any HTTP ingest costs before parsing anything);
//   - the body decoder + parser + response builder alone, in-process, no HTTP.
// The whole path (`--only full` runs just this part): a running Tributary, CREATE STREAM +
// CREATE INPUT through SQL, bulk requests into the input's port (elastic input -> stream ingest ->
// WAL -> engine), printed next to the REST ingest (POST /v1beta2/streams/{name}/ingest, compact
// JSON) of the same rows, same batch size, same concurrency, measured in the same run.
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { gzipSync } from 'node:zlib';
import { Tributary } from '../src/cli/tributary.ts';
import { DEFAULTS } from '../src/config/config.ts';
import { splitDecode } from '../src/connectors/inputs/elastic/bulk-body.ts';
import { parseBulk } from '../src/connectors/inputs/elastic/bulk-parser.ts';
import { buildBulkResponse, SequenceNumbers } from '../src/connectors/inputs/elastic/bulk-response.ts';
import type { BulkRow, BulkSink } from '../src/connectors/inputs/elastic/bulk-sink.ts';
import { DocumentIds } from '../src/connectors/inputs/elastic/document-ids.ts';
import { validateElasticInputSettings } from '../src/connectors/inputs/elastic/elastic-input-definition.ts';
import { ElasticListener } from '../src/connectors/inputs/elastic/elastic-listener.ts';
import { silentLogger } from '../src/log/logger.ts';

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
  firstError?: string;
}

/** Send `body` to `url` from a worker thread, `concurrency` keep-alive requests in flight, for `seconds`. */
export function runLoad(
  url: string,
  body: Buffer,
  options: { seconds: number; concurrency: number; gzip: boolean; headers?: Record<string, string> },
): Promise<LoadResult> {
  const code = `
    const { workerData, parentPort } = require('node:worker_threads');
    const http = require('node:http');
    const { url, body, seconds, concurrency, gzip, extraHeaders } = workerData;
    const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
    const u = new URL(url);
    const headers = { 'content-type': 'application/x-ndjson', 'content-length': body.length, ...extraHeaders };
    if (gzip) headers['content-encoding'] = 'gzip';
    let requests = 0, failures = 0, stop = false, firstError;
    const t0 = performance.now();
    function one() {
      return new Promise((resolve) => {
        const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', agent, headers }, (res) => {
          let text = '';
          res.on('data', (c) => { if (text.length < 200000) text += c; });
          res.on('end', () => {
            // A bulk answer with item errors is a failure too (the documents did not all land).
            const bad = res.statusCode !== 200 || text.startsWith('{"took":') && !text.includes('"errors":false');
            if (bad) { failures++; firstError ??= res.statusCode + ' ' + text.slice(0, 300); } else requests++;
            resolve();
          });
        });
        req.on('error', (e) => { failures++; firstError ??= String(e); resolve(); });
        req.end(Buffer.from(body.buffer, body.byteOffset, body.length));
      });
    }
    async function loop() { while (!stop) await one(); }
    setTimeout(() => { stop = true; }, seconds * 1000);
    Promise.all(Array.from({ length: concurrency }, loop)).then(() => {
      parentPort.postMessage({ requests, failures, firstError, seconds: (performance.now() - t0) / 1000 });
      agent.destroy();
    });
  `;
  return new Promise((resolve, reject) => {
    const { headers: extraHeaders = {}, ...rest } = options;
    const worker = new Worker(code, { eval: true, workerData: { url, body, ...rest, extraHeaders } });
    worker.once(
      'message',
      (m: { requests: number; failures: number; seconds: number; firstError?: string }) => {
        const docs = m.requests * DOCS_PER_REQUEST;
        resolve({ ...m, docs, docsPerSec: docs / m.seconds });
        void worker.terminate();
      },
    );
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

function textArg(args: string[], name: string, fallback: string): string {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? (args[i + 1] as string) : fallback;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

const BENCH_PASSWORD = 'bench-password';

/** The REST ingest body of the same rows: compact JSON, `_id`s like the input generates. */
function compactIngestBody(lines: readonly string[], index = 'logs-bench'): Buffer {
  const data = lines.map((l, i) => [l, index, `bench${String(i).padStart(15, '0')}`]);
  return Buffer.from(JSON.stringify({ columns: ['_raw', '_index', '_id'], data }));
}

interface PathFigure {
  label: string;
  rates: number[];
  cores: number[];
}

/**
 * The whole path through a running Tributary: per round, a fresh stream and input for each figure
 * (elastic identity, elastic gzip, REST compact), interleaved; medians printed. Every figure is
 * checked against the stream's row count.
 */
async function measureFullPath(options: {
  seconds: number;
  concurrency: number;
  rounds: number;
  storage: string;
  lines: readonly string[];
}): Promise<Array<[string, number]>> {
  const { seconds, concurrency, rounds, lines } = options;
  const dataDir = await mkdtemp(join(tmpdir(), 'tributary-bench-elastic-'));
  const trb = await Tributary.open(
    { ...DEFAULTS, dataDir, port: 0, host: '127.0.0.1', adminPassword: BENCH_PASSWORD, logLevel: 'silent' },
    silentLogger(),
  );
  const user = { username: 'admin', role: 'admin' as const };
  const sql = async (text: string): Promise<string[]> => {
    const plan = await trb.services.planner.plan(text, { user, type: 'historical' });
    if (plan.kind === 'statement') {
      await plan.run(new AbortController().signal);
      return [];
    }
    const out: string[] = [];
    await plan.run({ rows: (batch) => void out.push(...batch) }, new AbortController().signal);
    return out;
  };
  const settings = options.storage === 'hybrid' ? '' : ` SETTINGS storage_type='${options.storage}'`;
  const figures: PathFigure[] = [
    { label: 'whole path: elastic input -> stream, identity', rates: [], cores: [] },
    { label: 'whole path: elastic input -> stream, gzip', rates: [], cores: [] },
    { label: 'baseline: REST ingest, compact JSON, same rows', rates: [], cores: [] },
  ];
  const bulkText = makeBulkBody(lines);
  const bodies = [Buffer.from(bulkText), gzipSync(bulkText, { level: 1 }), compactIngestBody(lines)];
  try {
    const address = await trb.listen();
    const auth = `Basic ${Buffer.from(`admin:${BENCH_PASSWORD}`).toString('base64')}`;
    for (let round = 0; round < rounds; round++) {
      for (let k = 0; k < figures.length; k++) {
        const figure = figures[k] as PathFigure;
        const stream = `bench_${round}_${k}`;
        await sql(`CREATE STREAM ${stream} (_raw string, _index string, _id string)${settings}`);
        let url: string;
        let load: LoadResult;
        const cpu = process.cpuUsage();
        const t0 = performance.now();
        if (k < 2) {
          await sql(
            `CREATE INPUT ${stream}_in SETTINGS type='elastic', target_stream='${stream}', tcp_port=0, listen_host='127.0.0.1'`,
          );
          const port = trb.services.inputs?.running.status(`${stream}_in`)?.bound_port;
          url = `http://127.0.0.1:${port}/_bulk`;
          load = await runLoad(url, bodies[k] as Buffer, { seconds, concurrency, gzip: k === 1 });
        } else {
          url = `${address}/default/api/v1beta2/streams/${stream}/ingest`;
          load = await runLoad(url, bodies[k] as Buffer, {
            seconds,
            concurrency,
            gzip: false,
            headers: { authorization: auth, 'content-type': 'application/json' },
          });
        }
        const ms = performance.now() - t0;
        const usage = process.cpuUsage(cpu);
        figure.rates.push(load.docsPerSec);
        figure.cores.push((usage.user + usage.system) / 1000 / ms);
        if (load.failures > 0)
          console.log(`    ${figure.label}: ${load.failures} failed requests, first: ${load.firstError}`);
        const [count] = await sql(`SELECT count() FROM table(${stream})`);
        const stored = Number(JSON.parse(count ?? '[0]')[0]);
        if (stored !== load.docs)
          console.log(`    ${figure.label}: ${stored} rows in the stream, ${load.docs} acknowledged`);
        if (k < 2) await sql(`DROP INPUT ${stream}_in`);
        await sql(`DROP STREAM ${stream}`);
      }
    }
  } finally {
    await trb.close();
    await rm(dataDir, { recursive: true, force: true });
  }
  return figures.map((f) => {
    console.log(
      `  ${f.label.padEnd(58)} ${Math.round(median(f.rates)).toLocaleString('en-US').padStart(11)} docs/s` +
        `  ${median(f.cores).toFixed(2)} cores  (rounds: ${f.rates.map((r) => Math.round(r).toLocaleString('en-US')).join(' / ')})`,
    );
    return [f.label, median(f.rates)] as [string, number];
  });
}

export default async function main(args: string[] = []): Promise<void> {
  const seconds = arg(args, 'seconds', 5);
  const concurrency = arg(args, 'concurrency', 4);
  const rounds = arg(args, 'rounds', 3);
  const only = textArg(args, 'only', '');
  const storage = textArg(args, 'storage', 'hybrid');
  const lines = makeLogLines(DOCS_PER_REQUEST);
  const text = makeBulkBody(lines);
  const docBytes = Math.round(lines.reduce((s, l) => s + l.length, 0) / lines.length);
  console.log(
    `elastic input bench: ${DOCS_PER_REQUEST} docs/request, ${docBytes}-byte documents, ` +
      `${(text.length / 1024).toFixed(0)} KiB body (${(gzipSync(text, { level: 1 }).length / 1024).toFixed(0)} KiB gzip -1), ` +
      `${concurrency} requests in flight, ${seconds} s per figure`,
  );
  const report = (label: string, docsPerSec: number) => {
    console.log(
      `  ${label.padEnd(58)} ${Math.round(docsPerSec).toLocaleString('en-US').padStart(11)} docs/s`,
    );
  };
  if (only !== 'full') {
    console.log('protocol layer (a sink that only counts rows):');
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
    const gz = await measureElasticInput({
      sink: new CountingSink(),
      seconds,
      concurrency,
      gzip: true,
      lines,
    });
    report('elastic input, counting sink, gzip', gz.docsPerSec);
    if (plain.failures + gz.failures > 0) console.log(`  (${plain.failures + gz.failures} failed requests)`);
  }
  if (only !== 'protocol') {
    console.log(
      `whole path through a running Tributary (${storage} stream; ${rounds} rounds, medians; CPU of the process incl. the load generator):`,
    );
    await measureFullPath({ seconds, concurrency, rounds, storage, lines });
  }
}
