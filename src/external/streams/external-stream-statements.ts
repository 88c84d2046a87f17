import { actorOf } from '../../catalog/audit.ts';
import type { Engine } from '../../engine/engine.ts';
import { guardedEngine } from '../../engine/guarded-engine.ts';
import { err, isTributaryError } from '../../errors/tributary-error.ts';
import type { StatementHandler } from '../../queries/statement-handler.ts';
import { evaluateValues } from '../../queries/statements/insert-statement.ts';
import { settingsRecord } from '../../queries/statements/stream-spec-from-ast.ts';
import { nameRows, StaticRows, statementPlan } from '../../queries/static-rows.ts';
import { isStreamingQuery } from '../../sql/analyzer/streaming.ts';
import type { Query } from '../../sql/ast/query.ts';
import type {
  CreateStream,
  DropStatement,
  InsertStatement,
  ShowCreateStatement,
  ShowStatement,
} from '../../sql/ast/statement.ts';
import { recordingResolver, type TableResolver } from '../../sql/translator/resolver.ts';
import { translateQuery } from '../../sql/translator/translate.ts';
import { printDataType } from '../../sql/types/data-type.ts';
import { toClickHouseType } from '../../sql/types/proton-types.ts';
import type { StreamStore } from '../../stream/stream-store.ts';
import { tableReferences } from '../../streaming/view-references.ts';
import type { ExternalStreams } from './external-streams.ts';

export interface ExternalStatementDeps {
  externals: ExternalStreams;
  defaultDatabase: string;
}

/** CREATE EXTERNAL STREAM [IF NOT EXISTS] name (cols) SETTINGS type='...', ... [COMMENT '..']; other variants go on. */
export function createExternalStreamHandler(
  deps: ExternalStatementDeps,
  next: StatementHandler<CreateStream>,
): StatementHandler<CreateStream> {
  return async (s, ctx) => {
    if (s.variant !== 'EXTERNAL') {
      // Streams and external streams share one namespace.
      const db = s.target.database ?? deps.defaultDatabase;
      if (deps.externals.get(db, s.target.name)) {
        if (s.ifNotExists) return statementPlan(ctx.sql, 'create', async () => undefined);
        throw err('STREAM_ALREADY_EXISTS', { name: s.target.name });
      }
      return next(s, ctx);
    }
    if (s.orReplace)
      throw err('NOT_IMPLEMENTED', {
        detail: 'CREATE OR REPLACE EXTERNAL STREAM: drop it first, then create it',
      });
    if (s.asQuery) throw err('BAD_ARGUMENTS', { detail: 'an external stream has no AS SELECT' });
    const columns = s.columns.map((c) => {
      if (!c.type)
        throw err('BAD_ARGUMENTS', { detail: `column ${c.name} of an external stream needs a type` });
      const type = printDataType(c.type);
      return { name: c.name, type: c.nullable ? `nullable(${type})` : type };
    });
    const settings = settingsRecord(s.settings);
    const db = s.target.database ?? deps.defaultDatabase;
    return statementPlan(ctx.sql, 'create', async () => {
      await deps.externals.create(
        {
          db,
          name: s.target.name,
          columns,
          settings,
          ...(s.comment !== undefined ? { description: s.comment } : {}),
          ifNotExists: s.ifNotExists,
        },
        actorOf(ctx.options.user.username),
      );
    });
  };
}

/** DROP [EXTERNAL] STREAM of an external stream drops its record; other names go on. */
export function dropExternalStreamHandler(
  deps: ExternalStatementDeps,
  next?: StatementHandler<DropStatement>,
): StatementHandler<DropStatement> {
  return async (s, ctx) => {
    const db = s.target.database ?? deps.defaultDatabase;
    if (!deps.externals.get(db, s.target.name) && next) return next(s, ctx);
    return statementPlan(ctx.sql, 'drop', async () => {
      await deps.externals.drop(db, s.target.name, { ifExists: s.ifExists });
    });
  };
}

/** DROP DATABASE: once the database is dropped, its external streams are forgotten. */
export function dropDatabaseDropsExternalStreams(
  deps: ExternalStatementDeps,
  drop: StatementHandler<DropStatement>,
): StatementHandler<DropStatement> {
  return async (s, ctx) => {
    const plan = await drop(s, ctx);
    if (plan.kind !== 'statement') return plan;
    return {
      ...plan,
      run: async (signal: AbortSignal) => {
        await plan.run(signal);
        await deps.externals.forgetDatabase(s.target.name);
      },
    };
  };
}

/** SHOW CREATE [EXTERNAL] STREAM of an external stream: its statement, secrets masked. */
export function showCreateExternalStreamHandler(
  deps: ExternalStatementDeps,
  next?: StatementHandler<ShowCreateStatement>,
): StatementHandler<ShowCreateStatement> {
  return async (s, ctx) => {
    const db = s.target.database ?? deps.defaultDatabase;
    const r = deps.externals.get(db, s.target.name);
    if (!r && next) return next(s, ctx);
    const record = deps.externals.require(db, s.target.name).value;
    return new StaticRows(
      [{ name: 'statement', type: 'string' }],
      [[deps.externals.createQuery(record)]],
      ctx.sql,
      'show',
    );
  };
}

/** SHOW EXTERNAL STREAMS: their names in the current database. */
export function showExternalStreamsHandler(deps: ExternalStatementDeps): StatementHandler<ShowStatement> {
  return async (s, ctx) => {
    const db = s.from?.name ?? deps.defaultDatabase;
    return nameRows(
      deps.externals.list(db).map((r) => r.value.name),
      ctx.sql,
    );
  };
}

/** A read of a write-only external stream is refused by name (EXTERNAL_STREAM_WRITE_ONLY). */
export function refuseWriteOnlyReads(deps: ExternalStatementDeps, query: Query): void {
  let refs: { database?: string; name: string }[];
  try {
    refs = tableReferences(query);
  } catch {
    return;
  }
  for (const ref of refs) {
    const r = deps.externals.get(ref.database ?? deps.defaultDatabase, ref.name)?.value;
    if (r && r.type === 'http')
      throw err('EXTERNAL_STREAM_WRITE_ONLY', {
        name: r.name,
        type: r.type,
        detail: 'write into it with INSERT INTO ... SELECT or a materialized view INTO it',
      });
  }
}

export interface ExternalInsertDeps extends ExternalStatementDeps {
  engine: Engine;
  streams: StreamStore;
  resolver: TableResolver;
}

/** Attempts of one batch of an INSERT INTO an external stream before the statement fails. */
const INSERT_ATTEMPTS = 5;

/**
 * INSERT INTO <external stream> [(cols)] SELECT ...: the SELECT runs (historical), its rows are
 * matched to the stream's columns by position (as ClickHouse's INSERT SELECT), and the stream's
 * writer delivers them in batches, each retried with backoff; the statement fails with
 * DELIVERY_FAILED after five failed attempts of one batch. A streaming SELECT is refused: a
 * materialized view INTO the external stream is the continuous form.
 */
export function insertIntoExternalHandler(
  deps: ExternalInsertDeps,
  next: StatementHandler<InsertStatement>,
): StatementHandler<InsertStatement> {
  return async (s, ctx) => {
    const target = s.target;
    const db = target?.database ?? deps.defaultDatabase;
    const r = target ? deps.externals.get(db, target.name)?.value : undefined;
    if (!r) return next(s, ctx);
    if (s.values) {
      const names = r.columns.map((c) => c.name);
      const columns = insertColumns(s, names, r.name);
      const values = s.values;
      return statementPlan(ctx.sql, 'insert', async () => {
        const engineColumns = r.columns.map((c) => ({ name: c.name, engineType: toClickHouseType(c.type) }));
        const rows = await evaluateValues(deps, { name: r.name, columns: engineColumns }, columns, values);
        const writer = deps.externals.writer(r, { owner: `insert-${r.name}`, maxAttempts: INSERT_ATTEMPTS });
        writer.setHeader(columns.map((name) => ({ name, type: 'string' })));
        await deliver(
          writer,
          rows.map((row) => JSON.stringify(row)),
          r.name,
        );
      });
    }
    if (!s.query)
      throw err('NOT_IMPLEMENTED', {
        detail: `INSERT INTO external stream ${r.name} takes VALUES or a SELECT (FORMAT is not supported yet)`,
      });
    if (isStreamingQuery(s.query, deps.resolver))
      throw err('NOT_IMPLEMENTED', {
        detail: `INSERT ... SELECT from a stream runs forever; use CREATE MATERIALIZED VIEW ... INTO ${r.name}, or read table(<stream>)`,
      });
    const columns = insertColumns(
      s,
      r.columns.map((c) => c.name),
      r.name,
    );
    const query = s.query;
    return statementPlan(ctx.sql, 'insert', async (signal) => {
      const reads = new Set<string>();
      const sql = translateQuery(query, {
        resolver: recordingResolver(deps.resolver, reads),
        protonColumnNames: false,
      });
      const engine = guardedEngine(deps.engine, (work) => deps.streams.read(reads, work));
      const writer = deps.externals.writer(r, { owner: `insert-${r.name}`, maxAttempts: INSERT_ATTEMPTS });
      writer.setHeader(columns.map((name) => ({ name, type: 'string' })));
      const onAbort = () => writer.close();
      signal.addEventListener('abort', onAbort);
      try {
        let batch: string[] = [];
        for await (const chunk of engine.stream(sql, { lane: 'user', signal })) {
          for (const line of chunk.text().split('\n')) {
            if (!line) continue;
            batch.push(line);
            if (batch.length >= 10_000) {
              await deliver(writer, batch, r.name);
              batch = [];
            }
          }
        }
        if (batch.length) await deliver(writer, batch, r.name);
      } finally {
        signal.removeEventListener('abort', onAbort);
      }
    });
  };
}

/** The columns an INSERT into an external stream names (all of them by default). */
function insertColumns(s: InsertStatement, names: readonly string[], stream: string): string[] {
  if (!s.columns) return [...names];
  return s.columns.map((c) => {
    if (c.kind !== 'Identifier')
      throw err('BAD_ARGUMENTS', { detail: 'INSERT column lists may only name columns' });
    const n = c.parts[c.parts.length - 1] as string;
    if (!names.includes(n)) throw err('NO_SUCH_COLUMN_IN_TABLE', { name: n, stream });
    return n;
  });
}

async function deliver(
  writer: { rows(rows: readonly string[]): Promise<void> },
  rows: string[],
  name: string,
) {
  try {
    await writer.rows(rows);
  } catch (e) {
    if (isTributaryError(e)) throw e;
    throw err('DELIVERY_FAILED', {
      target: `external stream ${name}`,
      detail: e instanceof Error ? e.message : String(e),
    });
  }
}
