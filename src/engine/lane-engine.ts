import type { Engine, EngineLane, EngineQueryOptions } from './engine.ts';

/** The same engine, every call on `lane` unless the call names its own. */
export function laneEngine(engine: Engine, lane: EngineLane): Engine {
  const on = <T extends { lane?: EngineLane }>(options: T | undefined): T =>
    ({ ...options, lane: options?.lane ?? lane }) as T;
  return {
    get dataPath() {
      return engine.dataPath;
    },
    query: (sql, options?: EngineQueryOptions) => engine.query(sql, on(options)),
    stream: (sql, options?: EngineQueryOptions) => engine.stream(sql, on(options)),
    insert: (table, payload, options) => engine.insert(table, payload, on(options)),
    ping: () => engine.ping(),
    load: () => engine.load(),
    close: () => engine.close(),
  };
}
