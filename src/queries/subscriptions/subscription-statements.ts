import { randomUUID } from 'node:crypto';
import { err } from '../../errors/tributary-error.ts';
import type { Query } from '../../sql/ast/query.ts';
import type { RecoverStatement, SubscribeStatement, UnsubscribeStatement } from '../../sql/ast/statement.ts';
import { parseStatement } from '../../sql/parser/parse.ts';
import { type DurablePlan, durablePlanRefusal, isDurablePlan } from '../../streaming/durable-plan.ts';
import type { Plan } from '../execution.ts';
import type { StatementHandler } from '../statement-handler.ts';
import { statementPlan } from '../static-rows.ts';
import { DurableQuery } from './durable-query.ts';
import type { Subscriptions } from './subscriptions.ts';

/** Checkpoint interval of a SUBSCRIBE without `checkpoint_interval` (seconds). */
export const DEFAULT_CHECKPOINT_INTERVAL_S = 15;

export interface SubscriptionDeps {
  /** Plans the SELECT of a subscription (the SELECT handler). */
  readonly select: StatementHandler<Query>;
  readonly subscriptions: Subscriptions;
}

/** `SETTINGS checkpoint_interval = <seconds>` of the subscribed query, in milliseconds. */
function checkpointIntervalMs(query: Query): number {
  const settings = query.kind === 'Select' ? (query.settings ?? []) : [];
  const s = settings.find((x) => x.name.toLowerCase() === 'checkpoint_interval');
  if (!s) return DEFAULT_CHECKPOINT_INTERVAL_S * 1000;
  const v = s.value;
  const seconds = v.kind === 'Number' ? Number(v.text) : v.kind === 'String' ? Number(v.value) : Number.NaN;
  if (!Number.isFinite(seconds) || seconds <= 0)
    throw err('BAD_ARGUMENTS', { detail: 'checkpoint_interval must be a positive number of seconds' });
  return seconds * 1000;
}

/** The streaming execution of a subscribed query; refuses (and releases) any other plan. */
async function durableExecution(plan: Plan): Promise<DurablePlan> {
  if (!isDurablePlan(plan)) {
    if (plan.kind === 'rows') await plan.dispose?.();
    throw err('NOT_IMPLEMENTED', {
      detail: 'SUBSCRIBE TO needs a streaming query (a historical query has nothing to checkpoint)',
    });
  }
  const refusal = durablePlanRefusal(plan);
  if (refusal) {
    await plan.dispose();
    throw err('NOT_IMPLEMENTED', { detail: refusal });
  }
  return plan;
}

/**
 * SUBSCRIBE TO <select> [SETTINGS checkpoint_interval = s]: a streaming query run durably under a
 * new query id, its checkpoints kept until UNSUBSCRIBE (Proton's checkpointed queries).
 */
export function subscribeHandler(deps: SubscriptionDeps): StatementHandler<SubscribeStatement> {
  return async (s, ctx) => {
    const interval = checkpointIntervalMs(s.query);
    const sql = ctx.sql.slice(s.query.span.start, s.query.span.end).trim();
    const execution = await durableExecution(await deps.select(s.query, { ...ctx, sql }));
    const id = randomUUID();
    try {
      await deps.subscriptions.create(id, {
        sql,
        checkpointIntervalMs: interval,
        createdAt: new Date().toISOString(),
        createdBy: ctx.options.user.username,
      });
    } catch (e) {
      await execution.dispose();
      throw e;
    }
    return new DurableQuery(id, execution, deps.subscriptions, interval);
  };
}

/**
 * RECOVER FROM '<query id>': the subscribed query again, under the same id, from its last
 * checkpoint (its journal replayed: what it emitted after the checkpoint is emitted again).
 */
export function recoverHandler(deps: SubscriptionDeps): StatementHandler<RecoverStatement> {
  return async (s, ctx) => {
    const record = await deps.subscriptions.get(s.queryId);
    if (deps.subscriptions.isRunning(s.queryId)) throw err('QUERY_ALREADY_RUNNING', { id: s.queryId });
    const query = parseStatement(record.sql);
    if (query.kind !== 'Select' && query.kind !== 'Union')
      throw err('RECOVER_CHECKPOINT_FAILED', { id: s.queryId, detail: 'the recorded query is not a SELECT' });
    const execution = await durableExecution(
      await deps.select(query, { options: ctx.options, sql: record.sql }),
    );
    return new DurableQuery(s.queryId, execution, deps.subscriptions, record.checkpointIntervalMs);
  };
}

/** UNSUBSCRIBE TO '<query id>': stop the subscribed query if it runs and remove its checkpoints. */
export function unsubscribeHandler(deps: SubscriptionDeps): StatementHandler<UnsubscribeStatement> {
  return async (s, ctx) => {
    if (!(await deps.subscriptions.isUnsubscribed(s.queryId))) await deps.subscriptions.get(s.queryId);
    return statementPlan(ctx.sql, 'unsubscribe', () => deps.subscriptions.remove(s.queryId));
  };
}
