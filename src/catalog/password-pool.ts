import { Worker } from 'node:worker_threads';
import { err } from '../errors/tributary-error.ts';

/** One scrypt computation. */
export interface ScryptJob {
  password: string;
  salt: Buffer;
  keyLength: number;
  N: number;
  r: number;
  p: number;
  maxmem: number;
}

export interface PasswordPoolStats {
  /** scrypt computations finished (hashes and verifications), since the pool was made. */
  computed: number;
  /** Computations waiting or running now. */
  queued: number;
  /** Jobs refused because the queue was full. */
  refused: number;
}

/**
 * How many threads hash passwords, and how many jobs may wait for them. One thread computes ~20
 * scrypt hashes a second (~50 ms, 32 MiB each); successful checks are cached by the API, so only
 * logins with new credentials, user changes and failed attempts come here, and failed attempts
 * are limited before they do (src/api/auth-throttle.ts).
 */
export const PASSWORD_POOL_THREADS = 1;
export const PASSWORD_POOL_QUEUE = 64;

// Plain JavaScript evaluated in the worker, so the worker needs no TypeScript loader.
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { scryptSync } = require('node:crypto');
parentPort.on('message', (job) => {
  try {
    const key = scryptSync(job.password, Buffer.from(job.salt), job.keyLength, {
      N: job.N, r: job.r, p: job.p, maxmem: job.maxmem,
    });
    parentPort.postMessage({ id: job.id, key });
  } catch (e) {
    parentPort.postMessage({ id: job.id, error: String(e && e.message ? e.message : e) });
  }
});
`;

interface Pending {
  worker: Worker;
  resolve: (key: Buffer) => void;
  reject: (e: Error) => void;
}

/**
 * Password hashing on its own worker threads, away from libuv's thread pool, which the engine's
 * queries and file I/O share: a burst of logins can never delay a query, an ingest or `/info`.
 * The queue is bounded: a job beyond it is refused at once with AUTH_BUSY (503, Retry-After).
 * Workers start on first use and do not keep the process alive while idle.
 */
export class PasswordPool {
  private readonly workers: Worker[] = [];
  private readonly pending = new Map<number, Pending>();
  private readonly load = new Map<Worker, number>();
  private nextId = 1;
  private computed = 0;
  private refused = 0;

  constructor(
    private readonly threads = PASSWORD_POOL_THREADS,
    private readonly queueLimit = PASSWORD_POOL_QUEUE,
  ) {}

  /** scrypt of the job on a pool thread. */
  scrypt(job: ScryptJob): Promise<Buffer> {
    if (this.pending.size >= this.queueLimit) {
      this.refused++;
      return Promise.reject(err('AUTH_BUSY', { retry_after: 1 }));
    }
    const worker = this.leastLoaded();
    const id = this.nextId++;
    this.load.set(worker, (this.load.get(worker) ?? 0) + 1);
    worker.ref();
    return new Promise<Buffer>((resolve, reject) => {
      this.pending.set(id, { worker, resolve, reject });
      worker.postMessage({ ...job, id, salt: new Uint8Array(job.salt) });
    }).finally(() => {
      const left = (this.load.get(worker) ?? 1) - 1;
      this.load.set(worker, left);
      if (left === 0) worker.unref();
    });
  }

  stats(): PasswordPoolStats {
    return { computed: this.computed, queued: this.pending.size, refused: this.refused };
  }

  /** Stop the threads (jobs still waiting fail). */
  async close(): Promise<void> {
    const workers = this.workers.splice(0);
    for (const [id, p] of this.pending) {
      this.pending.delete(id);
      p.reject(new Error('password hashing stopped'));
    }
    await Promise.all(workers.map((w) => w.terminate()));
  }

  private leastLoaded(): Worker {
    if (this.workers.length < this.threads) return this.spawn();
    let best = this.workers[0] as Worker;
    for (const w of this.workers) if ((this.load.get(w) ?? 0) < (this.load.get(best) ?? 0)) best = w;
    return best;
  }

  private spawn(): Worker {
    const worker = new Worker(WORKER_SOURCE, { eval: true });
    worker.unref();
    worker.on('message', (m: { id: number; key?: Uint8Array; error?: string }) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      this.computed++;
      if (m.key) p.resolve(Buffer.from(m.key));
      else p.reject(new Error(`password hashing failed: ${m.error}`));
    });
    const fail = (e: Error) => {
      // A dead worker fails the jobs it held; the next job starts a new one.
      const i = this.workers.indexOf(worker);
      if (i >= 0) this.workers.splice(i, 1);
      this.load.delete(worker);
      for (const [id, p] of this.pending) {
        if (p.worker !== worker) continue;
        this.pending.delete(id);
        p.reject(e);
      }
    };
    worker.on('error', fail);
    worker.on('exit', (code) => {
      if (code !== 0) fail(new Error(`password hashing thread exited with code ${code}`));
    });
    this.workers.push(worker);
    this.load.set(worker, 0);
    return worker;
  }
}
