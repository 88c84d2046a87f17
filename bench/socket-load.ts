// A lean HTTP/1.1 load generator for many keep-alive clients: `clients` raw TCP connections, each
// with one request in flight, sending the same prebuilt request again as soon as its answer is
// complete, from a worker thread. Raw sockets rather than node:http so the generator's own cost
// (which shares the machine's cores with the server) stays small beside the server's.
// Answers: requests completed with status 200, failures, wall seconds, per-request latency
// percentiles (ms, from the first byte written to the last byte of the answer), and the CPU time of
// the process's threads while the load ran, the generator's own thread apart (thread-cpu.ts).
import { Worker } from 'node:worker_threads';
import { THREAD_ID_SOURCE, type ThreadCpu, threadCpu, threadCpuSince } from './thread-cpu.ts';

export interface SocketLoad {
  requests: number;
  failures: number;
  seconds: number;
  p50: number;
  p99: number;
  firstError?: string;
  /** CPU ms per thread kind while the load ran (Linux only). */
  cpu?: ThreadCpu;
}

const WORKER = `
  const { workerData, parentPort } = require('node:worker_threads');
  const net = require('node:net');
  const { host, port, request, seconds, clients } = workerData;
  let tid; try { tid = ${THREAD_ID_SOURCE}; } catch {}
  parentPort.postMessage({ started: true, tid });
  const payload = Buffer.from(request.buffer, request.byteOffset, request.length);
  const latencies = [];
  let requests = 0, failures = 0, firstError, stop = false, open = clients;
  const t0 = performance.now();
  function finish() {
    latencies.sort((a, b) => a - b);
    const pick = (p) => latencies.length ? latencies[Math.min(latencies.length - 1, Math.floor(p / 100 * latencies.length))] : NaN;
    parentPort.postMessage({ requests, failures, firstError, seconds: (performance.now() - t0) / 1000, p50: pick(50), p99: pick(99) });
    // Stay alive until the parent terminates the worker, so its thread's CPU time is still readable.
    setInterval(() => {}, 1000);
  }
  function client() {
    const socket = net.connect({ host, port, noDelay: true });
    let pending = null, sentAt = 0, need = -1;
    const send = () => { sentAt = performance.now(); socket.write(payload); };
    socket.on('connect', send);
    socket.on('data', (chunk) => {
      pending = pending ? Buffer.concat([pending, chunk]) : chunk;
      if (need < 0) {
        const end = pending.indexOf('\\r\\n\\r\\n');
        if (end < 0) return;
        const head = pending.subarray(0, end).toString('latin1');
        const m = /\\r\\ncontent-length: *(\\d+)/i.exec(head);
        need = end + 4 + (m ? Number(m[1]) : 0);
      }
      if (pending.length < need) return;
      const status = Number(pending.subarray(9, 12).toString('latin1'));
      if (status === 200) { requests++; latencies.push(performance.now() - sentAt); }
      else { failures++; firstError ??= pending.subarray(0, need).toString('utf8'); }
      pending = null; need = -1;
      if (stop) socket.end(); else send();
    });
    socket.on('error', (e) => { failures++; firstError ??= String(e); });
    socket.on('close', () => { if (--open === 0) finish(); });
  }
  setTimeout(() => { stop = true; }, seconds * 1000);
  for (let i = 0; i < clients; i++) client();
`;

/** Keep `clients` connections each sending `request` (complete HTTP/1.1 bytes) for `seconds`. */
export function runSocketLoad(
  host: string,
  port: number,
  request: Buffer,
  seconds: number,
  clients: number,
): Promise<SocketLoad> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER, { eval: true, workerData: { host, port, request, seconds, clients } });
    const generator = new Set<string>();
    let before: ThreadCpu | undefined;
    worker.on('message', (m: SocketLoad | { started: true; tid?: string }) => {
      if ('started' in m) {
        if (m.tid) generator.add(m.tid);
        before = threadCpu(generator);
        return;
      }
      // Sampled before the worker ends, so its thread is still counted.
      const cpu = threadCpuSince(before, threadCpu(generator));
      resolve(cpu ? { ...m, cpu } : m);
      void worker.terminate();
    });
    worker.once('error', reject);
  });
}

/** The bytes of one keep-alive `POST path` with `body`. */
export function postRequest(
  host: string,
  path: string,
  headers: Record<string, string>,
  body: Buffer,
): Buffer {
  const lines = [
    `POST ${path} HTTP/1.1`,
    `host: ${host}`,
    'connection: keep-alive',
    `content-length: ${body.length}`,
  ];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`), body]);
}
