import { actorOf } from '../catalog/audit.ts';
import type { StatementHandler } from '../queries/statement-handler.ts';
import { streamSpecFromAst } from '../queries/statements/stream-spec-from-ast.ts';
import { statementPlan } from '../queries/static-rows.ts';
import type { Expr, Setting } from '../sql/ast/expression.ts';
import type { CreateStream, DropStatement, InsertStatement } from '../sql/ast/statement.ts';
import type { RandomStreams } from './random-streams.ts';

/** CREATE RANDOM STREAM [IF NOT EXISTS] name (col type [DEFAULT expr], ...) [ENGINE Random()] [SETTINGS eps, interval_time, shards]. */
export function createStreamOrRandomHandler(
  randoms: RandomStreams,
  defaultDatabase: string,
  createStream: StatementHandler<CreateStream>,
): StatementHandler<CreateStream> {
  return async (s, ctx) => {
    if (s.variant !== 'RANDOM') return createStream(s, ctx);
    // The columns and name rules are a stream's; ORDER BY, TTL and the like mean nothing here.
    const { asQuery: _ignored, ...plain } = s;
    // A random stream is a stream of its own kind whatever ENGINE says: never a plain table.
    const { tableEngine: _table, ...spec } = streamSpecFromAst(
      { ...plain, variant: 'STREAM' },
      defaultDatabase,
    );
    return statementPlan(ctx.sql, 'create', async () => {
      await randoms.create({ ...spec, db: spec.db ?? defaultDatabase }, actorOf(ctx.options.user.username), {
        ifNotExists: s.ifNotExists,
      });
    });
  };
}

/** DROP STREAM of a random stream drops its generator, storage and record; other names go on. */
export function dropRandomStreamHandler(
  randoms: RandomStreams,
  defaultDatabase: string,
  drop: StatementHandler<DropStatement>,
): StatementHandler<DropStatement> {
  return async (s, ctx) => {
    const db = s.target.database ?? defaultDatabase;
    if (!randoms.get(db, s.target.name)) return drop(s, ctx);
    return statementPlan(ctx.sql, 'drop', async () => {
      await randoms.drop(db, s.target.name);
    });
  };
}

/** The `max_events` setting of a query's SETTINGS clause, if given as a number. */
export function maxEventsOf(settings: readonly Setting[] | undefined): number | undefined {
  const s = settings?.find((x) => x.name.toLowerCase() === 'max_events');
  if (s?.value.kind !== 'Number') return undefined;
  const n = Number(s.value.text);
  return Number.isFinite(n) && n > 0 ? n : undefined;
}

/**
 * How many rows an `INSERT ... SELECT` reads from the random streams it reads: its `max_events`, or
 * else the plain LIMIT (plus OFFSET) of its SELECT. Proton's INSERT streams from the generator until
 * the LIMIT ends it; here the random streams are a bounded batch of that many rows, so the INSERT
 * ends with the same rows when no filter drops any (a filter leaves fewer). Undefined: neither.
 */
export function randomInsertRows(s: InsertStatement): number | undefined {
  const q = s.query;
  if (q?.kind !== 'Select') return undefined;
  const max = maxEventsOf(q.settings);
  if (max !== undefined) return max;
  const number = (e: Expr | undefined) => (e?.kind === 'Number' ? Number(e.text) : undefined);
  const limit = number(q.limit?.limit);
  if (limit === undefined || !Number.isInteger(limit) || limit <= 0) return undefined;
  const offset = q.limit?.offset ? number(q.limit.offset) : 0;
  return offset === undefined || !Number.isInteger(offset) ? undefined : limit + offset;
}

/** DROP DATABASE: once its streams are gone, the random streams among them are forgotten. */
export function dropDatabaseForgetsRandomStreams(
  randoms: RandomStreams,
  drop: StatementHandler<DropStatement>,
): StatementHandler<DropStatement> {
  return async (s, ctx) => {
    const plan = await drop(s, ctx);
    if (plan.kind !== 'statement') return plan;
    return {
      ...plan,
      run: async (signal: AbortSignal) => {
        await plan.run(signal);
        await randoms.forgetDatabase(s.target.name);
      },
    };
  };
}
