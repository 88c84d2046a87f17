import type { Engine, EngineQueryOptions } from './engine.ts';

/** A statement that only reads: the engine's `readonly = 1` cannot break it. */
const READING_STATEMENT = /^\s*(?:\(\s*)*(?:select|with|describe|desc)\b/i;

/**
 * The same engine, with every reading statement (SELECT, WITH ..., DESCRIBE) marked `userSql`,
 * so it runs under the engine's `readonly = 1`. For executions whose statements are derived from
 * a user's query (the streaming executor's steps); Tributary's own bookkeeping statements (CREATE,
 * INSERT into state tables, DROP) pass unchanged.
 */
export function userSqlEngine(engine: Engine): Engine {
  const mark = (sql: string, options: EngineQueryOptions | undefined): EngineQueryOptions | undefined =>
    READING_STATEMENT.test(sql) ? { ...options, userSql: true } : options;
  return {
    get dataPath() {
      return engine.dataPath;
    },
    query: (sql, options) => engine.query(sql, mark(sql, options)),
    stream: (sql, options) => engine.stream(sql, mark(sql, options)),
    insert: (table, payload, options) => engine.insert(table, payload, options),
    ping: () => engine.ping(),
    load: () => engine.load(),
    close: () => engine.close(),
  };
}
