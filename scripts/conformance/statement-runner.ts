// Runs one statement of a case with the keys of the original runner, in its order:
// depends_on_stream (poll until the streams exist), depends_on (wait until that query runs, then
// 1 s more), depends_on_done, wait (seconds), the statement itself, then for CREATE statements
// `exist`/`exist_wait`, and finally `kill`/`kill_wait`, `drop_view`, `drop_stream`.
// `query_type: table` statements run to completion before the next one; `query_type: stream`
// (and `run_mode: process`) statements run in the background until they end or are stopped.

import { type CaseContext, type QueryRun, RunnerError } from './case-context.ts';
import { listOf, type StepItem, textOf } from './case-file.ts';
import { mapRestStatement } from './rest-mapping.ts';
import { type ActualResult, describeActual } from './result-compare.ts';
import { createStreamSql, dropStreamSql, dropViewSql } from './schema-setup.ts';
import { QUERY_WAS_CANCELLED } from './sse-client.ts';
import { AbortedError, seconds, sleep } from './timing.ts';

/** How long `depends_on_stream`, `exist` and `depends_on` wait (the original: 100 polls, ~20 s). */
export const DEPENDS_TIMEOUT_MS = 20_000;
/** How long `depends_on_done` waits (the original: 100 polls of 0.1 s, then went on regardless). */
const DEPENDS_DONE_TIMEOUT_MS = 10_000;
const POLL_MS = 200;

const KILL_QUERY = /^\s*kill\s+query\s+where\s+query_id\s*=\s*'([^']*)'(\s+(sync|async|test))?\s*;?\s*$/i;

/** A case query id named by `kill query where query_id = '...'`, if the SQL is that statement. */
export function killQueryTarget(sql: string): string | undefined {
  const m = KILL_QUERY.exec(sql);
  return m ? m[1] : undefined;
}

const BY_QUERY_ID = /^(\s*(?:recover\s+from|unsubscribe\s+to)\s+')([^']*)('\s*;?\s*)$/i;

/**
 * `RECOVER FROM '<id>'` / `UNSUBSCRIBE TO '<id>'` name a case query id, which the server does not
 * know (it assigns its own ids): the SQL with the server's id of that query, when it ran.
 */
export function withServerQueryId(sql: string, serverIdOf: (caseId: string) => string | undefined): string {
  const m = BY_QUERY_ID.exec(sql);
  if (!m) return sql;
  const id = serverIdOf(m[2]!);
  return id === undefined ? sql : `${m[1]}${id}${m[3]}`;
}

/** Whether a statement runs in the background (streaming queries, `run_mode: process`). */
export function isBackground(item: StepItem): boolean {
  return textOf(item, 'query_type') === 'stream' || textOf(item, 'run_mode') === 'process';
}

/** Poll until every named stream (or view) exists. */
export async function waitForStreams(ctx: CaseContext, names: string[], what: string): Promise<void> {
  for (const name of [...new Set(names)]) {
    const deadline = Date.now() + DEPENDS_TIMEOUT_MS;
    for (;;) {
      if (await ctx.api.objectExists(name, { signal: ctx.signal })) break;
      if (Date.now() >= deadline)
        throw new RunnerError(`${what}: stream ${name} does not exist after ${DEPENDS_TIMEOUT_MS / 1000}s`);
      await sleep(POLL_MS, ctx.signal);
    }
  }
}

/** depends_on (running + 1 s), as for statements and inputs alike. */
export async function waitForQueries(ctx: CaseContext, item: StepItem): Promise<void> {
  for (const id of listOf(item, 'depends_on')) {
    ctx.log(`depends_on ${id}`);
    const running = await ctx.waitRunning(id, DEPENDS_TIMEOUT_MS);
    if (!running) throw new RunnerError(`depends_on ${id}: the query is not running`);
    await sleep(1_000, ctx.signal);
  }
  for (const id of listOf(item, 'depends_on_done')) await ctx.waitDone(id, DEPENDS_DONE_TIMEOUT_MS);
}

/** Run SQL through POST /v1beta2/queries and collect what it produced. */
export async function runSql(
  ctx: CaseContext,
  run: QueryRun | undefined,
  sql: string,
  item?: StepItem,
): Promise<ActualResult> {
  const user = item ? textOf(item, 'user') : undefined;
  const password = item ? textOf(item, 'password') : undefined;
  const credentials = user !== undefined ? { user, password: password ?? '' } : undefined;
  if (run) run.state = 'starting';
  const start = await ctx.api.startQuery(
    sql,
    { name: `${ctx.label}${run?.queryId !== undefined ? `/${run.queryId}` : ''}`, tags: ['conformance'] },
    { signal: ctx.signal, ...(credentials ? { credentials } : {}) },
  );
  if (start.kind === 'statement') {
    run?.started.resolve(true);
    run?.markEnded();
    return { kind: 'rows', columns: [], rows: [] };
  }
  if (start.kind === 'error') {
    run?.markEnded();
    // The original runner turned every QUERY_WAS_CANCELLED (394) into the rows collected so far,
    // also one raised before the first row (e.g. RECOVER of an unsubscribed query): none.
    if (start.code === QUERY_WAS_CANCELLED) return { kind: 'rows', columns: [], rows: [] };
    return { kind: 'error', code: start.code, message: start.message };
  }
  const stream = start.stream;
  if (run) run.stream = stream;
  const started = await stream.started.promise;
  if (run && started) {
    run.state = 'running';
    run.started.resolve(true);
  }
  const end = await stream.ended.promise;
  run?.markEnded();
  if (end.status === 'failed')
    return { kind: 'error', code: end.error?.code, message: end.error?.message ?? 'query failed' };
  if (ctx.signal.aborted) return { kind: 'runner-error', message: 'stopped: the case was interrupted' };
  if (!started)
    return {
      kind: 'runner-error',
      message: `the event stream ended before its first \`query\` event${end.error ? `: ${end.error.message}` : ''}`,
    };
  return { kind: 'rows', columns: stream.columns, rows: stream.rows };
}

/** Run DDL-like SQL whose result nobody checks; failures become notes. */
export async function runQuiet(ctx: CaseContext, sql: string): Promise<ActualResult> {
  const result = await runSql(ctx, undefined, sql);
  if (result.kind !== 'rows')
    ctx.notes.push(`\`${sql}\`: ${result.kind === 'error' ? `error ${result.code}: ` : ''}${result.message}`);
  return result;
}

/** The statement itself: SQL, `kill query` (mapped to cancel), or a mapped REST call. */
async function perform(ctx: CaseContext, item: StepItem, run: QueryRun): Promise<ActualResult> {
  if ((textOf(item, 'client') ?? 'python') === 'rest') {
    const mapped = mapRestStatement(item);
    if (!mapped) throw new RunnerError('rest statement without a Tributary counterpart');
    if (mapped.kind === 'create-stream') return runSql(ctx, run, createStreamSql(mapped.schema), item);
    run.state = 'starting';
    const answer = await ctx.api.request('POST', '/v1beta2/udfs', mapped.body, { signal: ctx.signal });
    run.markEnded();
    if (answer.status >= 200 && answer.status < 300) return { kind: 'rows', columns: [], rows: [] };
    return {
      kind: 'error',
      code: undefined,
      message: `POST /v1beta2/udfs: HTTP ${answer.status} ${answer.text}`,
    };
  }
  const target = killQueryTarget(run.sql);
  if (target !== undefined) {
    // the server does not know the case's query ids: stop the query through the cancel route
    ctx.log(`kill query ${target} (as cancel)`);
    await ctx.stopQueries(target);
    run.markEnded();
    return { kind: 'rows', columns: [], rows: [] };
  }
  return runSql(
    ctx,
    run,
    withServerQueryId(run.sql, (id) => ctx.serverIdOf(id)),
    item,
  );
}

/** `kill`, `drop_view`, `drop_stream` after a statement or input batch, each after its `_wait`. */
export async function afterActions(ctx: CaseContext, item: StepItem): Promise<void> {
  for (const act of ['kill', 'drop_view', 'drop_stream'] as const) {
    const targets = listOf(item, act);
    if (targets.length === 0) continue;
    await sleep(seconds(item[`${act}_wait`]) * 1000, ctx.signal);
    for (const target of targets) {
      ctx.log(`${act} ${target}`);
      if (act === 'kill') {
        await ctx.stopQueries(target);
      } else {
        await runQuiet(ctx, act === 'drop_view' ? dropViewSql(target) : dropStreamSql(target));
        await sleep(1_000, ctx.signal);
      }
    }
  }
}

function describe(item: StepItem): string {
  const id = textOf(item, 'query_id');
  const sql = (textOf(item, 'query') ?? textOf(item, 'query_url') ?? '').replace(/\s+/g, ' ').trim();
  return `${id !== undefined ? `[${id}] ` : ''}${isBackground(item) ? 'stream ' : ''}${sql.length > 100 ? `${sql.slice(0, 100)}...` : sql}`;
}

async function execute(ctx: CaseContext, item: StepItem, run: QueryRun): Promise<void> {
  let interrupted: AbortedError | undefined;
  try {
    const streams = listOf(item, 'depends_on_stream');
    if (streams.length > 0) await waitForStreams(ctx, streams, 'depends_on_stream');
    await waitForQueries(ctx, item);
    await sleep(seconds(item.wait) * 1000, ctx.signal);
    ctx.log(describe(item));
    run.result = await perform(ctx, item, run);
    if (run.result.kind === 'error' && run.queryId === undefined)
      ctx.notes.push(`statement ${describe(item)}: ${describeActual(run.result)}`);
    // (the original checked only after a CREATE that did not raise)
    const created = run.result.kind === 'rows' && run.sql.toUpperCase().includes('CREATE');
    if (!run.background && created && listOf(item, 'exist').length > 0) {
      await sleep(seconds(item.exist_wait) * 1000, ctx.signal);
      await waitForStreams(ctx, listOf(item, 'exist'), 'exist');
    }
  } catch (e) {
    if (e instanceof AbortedError) {
      interrupted = e;
      run.result ??= { kind: 'runner-error', message: 'stopped: the case was interrupted' };
    } else {
      const message = e instanceof Error ? e.message : String(e);
      run.result = { kind: 'runner-error', message };
      ctx.notes.push(`statement ${describe(item)}: ${message}`);
    }
  }
  run.markEnded();
  if (!interrupted && !ctx.signal.aborted) {
    try {
      await afterActions(ctx, item);
    } catch (e) {
      if (e instanceof AbortedError) interrupted = e;
      else ctx.notes.push(`after statement ${describe(item)}: ${(e as Error).message}`);
    }
  }
  ctx.record(run);
  run.done.resolve();
  if (interrupted && !run.background) throw interrupted;
}

/**
 * Run a statement: a table statement is awaited; a background one is started and its promise kept
 * in the case context (the end of the case stops and awaits it).
 */
export async function runStatement(ctx: CaseContext, item: StepItem): Promise<void> {
  const id = textOf(item, 'query_id');
  const run = ctx.newRun(id, textOf(item, 'query') ?? '', isBackground(item), item);
  if (run.background) {
    ctx.background.push(execute(ctx, item, run));
    return;
  }
  await execute(ctx, item, run);
}
