import type { Engine, EngineChunk, EngineQueryOptions } from './engine.ts';

const same = (sql: string): string => sql;

/** Runs a piece of engine work inside some lock and answers its result. */
export type Guard = <T>(work: () => Promise<T>) => Promise<T>;

/**
 * The same engine, with every statement run inside `guard` (a streamed result holds it until the
 * last chunk is consumed or the iteration stops). Queries reading streams use it to hold their
 * streams' flush locks (src/stream/flush-lock.ts) for exactly as long as the engine reads.
 * `rewrite` sees each statement inside the guard, where what the lock protects holds still (the
 * streaming executor points range reads at a stream's front there).
 */
export function guardedEngine(engine: Engine, guard: Guard, rewrite: (sql: string) => string = same): Engine {
  return {
    get dataPath() {
      return engine.dataPath;
    },
    query: (sql, options) => guard(() => engine.query(rewrite(sql), options)),
    stream: (sql, options) => guardedStream(engine, guard, sql, options, rewrite),
    insert: (table, payload, options) => guard(() => engine.insert(table, payload, options)),
    ping: () => engine.ping(),
    load: () => engine.load(),
    close: () => engine.close(),
  };
}

async function* guardedStream(
  engine: Engine,
  guard: Guard,
  sql: string,
  options: EngineQueryOptions | undefined,
  rewrite: (sql: string) => string,
): AsyncGenerator<EngineChunk> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let entered!: () => void;
  const inside = new Promise<void>((resolve) => {
    entered = resolve;
  });
  const held = guard(async () => {
    entered();
    await released;
  });
  await inside;
  try {
    yield* engine.stream(rewrite(sql), options);
  } finally {
    release();
    await held;
  }
}
