// The client side of `npm run bench -- latency`, run in a worker thread (its own event loop, not the
// server's): it opens a streaming query over SSE, then ingests into the stream over REST and times
// what comes back. Plain JavaScript so that the worker needs no TypeScript loader (bench/run.ts only
// lists `.ts` files, so this is not a benchmark of its own).
//
// workerData: {mode: 'latency' | 'throughput', base, auth, stream, sql, batching, warmupMs, measureMs,
//   tailMs, drainMs, ...mode options}. Times are epoch milliseconds with a fraction
//   (performance.timeOrigin + performance.now()), taken in this thread only.
//   latency:    rate (rows/s), intervalMs, maxInFlight, kind ('tail' | 'tumble' | 'ingest': no query).
//   throughput: rowsPerRequest, concurrency.
import { readlinkSync } from 'node:fs';
import http from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';

const cfg = workerData;
const now = () => performance.timeOrigin + performance.now();
const agent = new http.Agent({ keepAlive: true, maxSockets: cfg.maxInFlight ?? cfg.concurrency ?? 8 });
const ingestUrl = new URL(`${cfg.base}/v1beta2/streams/${cfg.stream}/ingest`);
const errors = [];

/** POST `body` to the ingest route; resolves with the ack time (or undefined on failure). */
function ingest(body) {
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: ingestUrl.hostname,
        port: ingestUrl.port,
        path: ingestUrl.pathname,
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': body.length,
          authorization: cfg.auth,
        },
      },
      (res) => {
        let text = '';
        res.on('data', (c) => {
          text += c;
        });
        res.on('end', () => {
          if (res.statusCode === 200) resolve(now());
          else {
            if (errors.length < 5) errors.push(`ingest ${res.statusCode} ${text.slice(0, 300)}`);
            resolve(undefined);
          }
        });
      },
    );
    req.on('error', (e) => {
      if (errors.length < 5) errors.push(`ingest ${e}`);
      resolve(undefined);
    });
    req.end(body);
  });
}

/**
 * Open the query's event channel. `onRows(rows, arrival)` gets each data event (arrival = when its
 * bytes reached this thread, before parsing); `onQuery(info)` each `query` event.
 */
function openQuery(onQuery, onRows) {
  const url = new URL(`${cfg.base}/v1beta2/queries`);
  const payload = Buffer.from(JSON.stringify({ sql: cfg.sql, batching_policy: cfg.batching }));
  const req = http.request({
    host: url.hostname,
    port: url.port,
    path: url.pathname,
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'content-length': payload.length,
      authorization: cfg.auth,
      accept: 'text/event-stream',
    },
  });
  let buffer = '';
  req.on('response', (res) => {
    res.setEncoding('utf8');
    if (res.statusCode !== 200) {
      let text = '';
      res.on('data', (c) => {
        text += c;
      });
      res.on('end', () => fail(`query answered ${res.statusCode}: ${text}`));
      return;
    }
    res.on('data', (chunk) => {
      const arrival = now();
      buffer += chunk;
      let sep = buffer.indexOf('\n\n');
      while (sep >= 0) {
        const block = buffer.slice(0, sep);
        buffer = buffer.slice(sep + 2);
        let event = 'message';
        let data = '';
        for (const line of block.split('\n')) {
          if (line.startsWith('event: ')) event = line.slice(7);
          else if (line.startsWith('data: ')) data += line.slice(6);
        }
        if (event === 'query') onQuery(JSON.parse(data));
        else if (event === 'message') onRows(JSON.parse(data), arrival);
        sep = buffer.indexOf('\n\n');
      }
    });
  });
  req.on('error', (e) => {
    if (!closing) fail(`query channel: ${e}`);
  });
  req.end(payload);
  let closing = false;
  return () => {
    closing = true;
    req.destroy();
  };
}

function fail(message) {
  parentPort.postMessage({ error: message, errors });
  process.exit(1);
}

/** Tell the main thread when the measured period starts and ends (it samples CPU and calls then). */
function markPeriod(t0, warmupMs, measureMs, queryId) {
  // This thread's id (Linux), so the main thread can leave the client's CPU out of the server's.
  let tid;
  try {
    tid = readlinkSync('/proc/thread-self').split('/').pop();
  } catch {}
  setTimeout(() => parentPort.postMessage({ phase: 'start', queryId, tid }), t0 + warmupMs - now());
  setTimeout(() => parentPort.postMessage({ phase: 'end', queryId }), t0 + warmupMs + measureMs - now());
}

const sleep = (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

// --- latency: paced batches, each row carrying its send time in v (and t) ---

async function latency() {
  const { rate, intervalMs, warmupMs, measureMs, tailMs, drainMs, kind } = cfg;
  /** Per batch: send time, rows, ack time. */
  const sends = [];
  const acks = [];
  const counts = [];
  let queryId;
  let started;
  const startedPromise = new Promise((r) => {
    started = r;
  });
  // Tail: latency of every row sent in the measured period; tumble: every window row.
  const tailLatencies = [];
  let tailReceived = 0;
  const windows = [];
  let mStart = Number.POSITIVE_INFINITY;
  let mEnd = Number.POSITIVE_INFINITY;
  // 'ingest': the same load with no query (the baseline a query's cost is measured against).
  if (kind === 'ingest') started();
  const close =
    kind === 'ingest'
      ? () => undefined
      : openQuery(
          (info) => {
            queryId ??= info.id;
            if (info.status === 'failed') fail(`query failed: ${info.message}`);
            started();
          },
          (rows, arrival) => {
            if (kind === 'tail') {
              for (const r of rows) {
                const v = r[1];
                if (v >= mStart && v < mEnd) {
                  tailLatencies.push(arrival - v);
                  tailReceived++;
                }
              }
            } else {
              for (const r of rows) windows.push({ text: r[0], count: Number(r[1]), maxV: r[2], arrival });
            }
          },
        );
  await startedPromise;
  await sleep(200);
  let inFlight = 0;
  let sent = 0;
  let seq = 0;
  const t0 = now();
  mStart = t0 + warmupMs;
  mEnd = mStart + measureMs;
  const stopAt = mEnd + tailMs;
  markPeriod(t0, warmupMs, measureMs, queryId);
  const pending = [];
  for (let tick = 1; ; tick++) {
    const at = now();
    if (at >= stopAt) break;
    const due = Math.floor((rate * (at - t0)) / 1000) - sent;
    // Behind (too many requests in flight): the rows due go into the next batch.
    if (due > 0 && inFlight < cfg.maxInFlight) {
      const sendTime = now();
      const t = new Date(Math.floor(sendTime)).toISOString();
      const data = new Array(due);
      for (let i = 0; i < due; i++) data[i] = [`k${seq++ % 10}`, sendTime, t];
      const body = Buffer.from(JSON.stringify({ columns: ['k', 'v', 't'], data }));
      const index = sends.length;
      sends.push(sendTime);
      counts.push(due);
      acks.push(Number.NaN);
      sent += due;
      inFlight++;
      pending.push(
        ingest(body).then((ack) => {
          inFlight--;
          acks[index] = ack ?? Number.NaN;
        }),
      );
    }
    await sleep(t0 + tick * intervalMs - now());
  }
  await Promise.all(pending);
  const loadEnd = now();
  // Wait for the measured rows (tail) or the windows of the measured period (tumble) to arrive.
  const expectedTail = sends.reduce((n, s, i) => (s >= mStart && s < mEnd ? n + counts[i] : n), 0);
  const lastWindowEnd = Math.floor(mEnd / 1000) * 1000;
  const done = () =>
    kind === 'ingest' || kind === 'tail'
      ? tailReceived >= expectedTail
      : windows.some((w) => Math.floor(w.maxV / 1000) * 1000 + 1000 >= lastWindowEnd);
  while (!done() && now() - loadEnd < drainMs) await sleep(50);
  close();
  agent.destroy();
  parentPort.postMessage({
    queryId,
    t0,
    mStart,
    mEnd,
    sends,
    counts,
    acks,
    expectedTail,
    tailReceived,
    tailLatencies: Float64Array.from(tailLatencies),
    windows,
    errors,
  });
}

// --- throughput: as fast as the server accepts, counts read from the periodic emits ---

async function throughput() {
  const { rowsPerRequest, concurrency, warmupMs, measureMs, drainMs } = cfg;
  const t = new Date().toISOString();
  const data = Array.from({ length: rowsPerRequest }, (_, i) => [`k${i % 10}`, 1, t]);
  const body = Buffer.from(JSON.stringify({ columns: ['k', 'v', 't'], data }));
  let queryId;
  let started;
  const startedPromise = new Promise((r) => {
    started = r;
  });
  const latest = new Map();
  /** [arrival, total count over the 10 groups] after each data event. */
  const samples = [];
  const close = openQuery(
    (info) => {
      queryId ??= info.id;
      if (info.status === 'failed') fail(`query failed: ${info.message}`);
      started();
    },
    (rows, arrival) => {
      for (const r of rows) latest.set(r[0], Number(r[1]));
      let total = 0;
      for (const c of latest.values()) total += c;
      samples.push([arrival, total]);
    },
  );
  await startedPromise;
  await sleep(200);
  const t0 = now();
  const stopAt = t0 + warmupMs + measureMs;
  markPeriod(t0, warmupMs, measureMs, queryId);
  const acks = [];
  let acked = 0;
  async function loop() {
    while (now() < stopAt) {
      const ack = await ingest(body);
      if (ack !== undefined) {
        acks.push(ack);
        acked += rowsPerRequest;
      }
    }
  }
  await Promise.all(Array.from({ length: concurrency }, loop));
  const loadEnd = now();
  const caughtUp = () => samples.length > 0 && samples[samples.length - 1][1] >= acked;
  while (!caughtUp() && now() - loadEnd < drainMs) await sleep(50);
  const last = samples[samples.length - 1];
  close();
  agent.destroy();
  parentPort.postMessage({
    queryId,
    t0,
    mStart: t0 + warmupMs,
    mEnd: stopAt,
    loadEnd,
    acks,
    acked,
    samples,
    catchUpMs: caughtUp() ? last[0] - loadEnd : undefined,
    errors,
  });
}

// --- backlog: the same aggregation from the earliest row of a stream that already holds `expected` ---

async function backlog() {
  let started;
  const requestedAt = now();
  const startedPromise = new Promise((r) => {
    started = r;
  });
  let queryId;
  const latest = new Map();
  let doneAt;
  let total = 0;
  let finished;
  const finishedPromise = new Promise((r) => {
    finished = r;
  });
  const close = openQuery(
    (info) => {
      queryId ??= info.id;
      if (info.status === 'failed') fail(`query failed: ${info.message}`);
      started();
    },
    (rows, arrival) => {
      for (const r of rows) latest.set(r[0], Number(r[1]));
      total = 0;
      for (const c of latest.values()) total += c;
      if (total >= cfg.expected && doneAt === undefined) {
        doneAt = arrival;
        finished();
      }
    },
  );
  await startedPromise;
  await Promise.race([finishedPromise, sleep(cfg.drainMs)]);
  close();
  parentPort.postMessage({
    queryId,
    total,
    ms: doneAt === undefined ? undefined : doneAt - requestedAt,
    errors,
  });
}

const modes = { latency, throughput, backlog };
modes[cfg.mode]().catch((e) => fail(String(e?.stack ?? e)));
