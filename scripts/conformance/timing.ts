// Waiting helpers for the conformance runner: every wait can be cut short by an AbortSignal, so a
// case that times out (or a Ctrl-C) stops at once instead of sleeping on.

import { setMaxListeners } from 'node:events';

/** Thrown when a wait is cut short because its signal fired. */
export class AbortedError extends Error {
  constructor(reason?: unknown) {
    super(reason instanceof Error ? reason.message : typeof reason === 'string' ? reason : 'aborted');
    this.name = 'AbortedError';
  }
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new AbortedError(signal.reason);
}

/** Sleep `ms` milliseconds; rejects with AbortedError when the signal fires first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(new AbortedError(signal.reason));
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(new AbortedError(signal?.reason));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Seconds as written in a case file (the original runner truncated them with int()). */
export function seconds(value: unknown): number {
  const n = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : Number.NaN;
  if (!Number.isFinite(n) || n <= 0) return 0;
  return Math.trunc(n);
}

/** A promise with its resolve function exposed. */
export interface Deferred<T> {
  promise: Promise<T>;
  resolve: (value: T) => void;
  settled: boolean;
}

export function deferred<T>(): Deferred<T> {
  let resolveFn!: (value: T) => void;
  const d: Deferred<T> = {
    promise: new Promise<T>((r) => {
      resolveFn = r;
    }),
    resolve: (value: T) => {
      if (d.settled) return;
      d.settled = true;
      resolveFn(value);
    },
    settled: false,
  };
  return d;
}

/**
 * Wait for `promise` at most `ms` milliseconds. Resolves to the promise's value, or to `undefined`
 * when the time ran out. Rejects with AbortedError when the signal fires.
 */
export function within<T>(promise: Promise<T>, ms: number, signal?: AbortSignal): Promise<T | undefined> {
  if (signal?.aborted) return Promise.reject(new AbortedError(signal.reason));
  return new Promise<T | undefined>((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    const onAbort = () => {
      done();
      reject(new AbortedError(signal?.reason));
    };
    const timer = setTimeout(() => {
      done();
      resolve(undefined);
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        done();
        resolve(v);
      },
      (e) => {
        done();
        reject(e);
      },
    );
  });
}

/** An AbortSignal that fires when `parent` fires or after `ms` milliseconds. */
export function timeoutSignal(
  parent: AbortSignal | undefined,
  ms: number,
  reason: string,
): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  // A case's signal is watched by every wait and request of its background queries at once;
  // more than Node's default 10 listeners is expected, not a leak.
  setMaxListeners(1000, controller.signal);
  const onParent = () => controller.abort(parent?.reason);
  if (parent?.aborted) controller.abort(parent.reason);
  else parent?.addEventListener('abort', onParent, { once: true });
  const timer = setTimeout(() => controller.abort(new Error(reason)), ms);
  return {
    signal: controller.signal,
    dispose: () => {
      clearTimeout(timer);
      parent?.removeEventListener('abort', onParent);
    },
  };
}
