// `inputs` steps: batches of rows sent to POST /v1beta2/streams/{name}/ingest as
// `{columns, data}`, the columns taken from the batch's `columns` or else from the suite's
// table_schemas. As in the original runner: 1 s before the first batch, then per batch
// depends_on_stream (plus the target stream itself), depends_on (+1 s), depends_on_done, wait, the
// ingest, and the after-actions (kill, drop_view, drop_stream). A batch that cannot be ingested
// stops the step and fails the case.

import { errorOf } from './api-client.ts';
import { type CaseContext, RunnerError } from './case-context.ts';
import { listOf, type StepItem, type TableSchema, textOf } from './case-file.ts';
import { afterActions, waitForQueries, waitForStreams } from './statement-runner.ts';
import { AbortedError, seconds, sleep } from './timing.ts';

/** The original runner slept this long before the batches of an inputs step. */
const WAIT_BEFORE_INPUTS_MS = 1_000;

/** Column names of a batch: its own `columns`, else the table schema's, else none. */
export function inputColumns(
  batch: StepItem,
  schemas: readonly TableSchema[] | undefined,
): string[] | undefined {
  if (Array.isArray(batch.columns)) return batch.columns.map(String);
  const table = textOf(batch, 'table_name');
  const schema = schemas?.find((s) => s.name === table);
  if (schema && Array.isArray(schema.columns)) return schema.columns.map((c) => String(c.name));
  return undefined;
}

async function ingestBatch(
  ctx: CaseContext,
  batch: StepItem,
  schemas: readonly TableSchema[] | undefined,
): Promise<void> {
  const table = textOf(batch, 'table_name');
  if (table === undefined) throw new RunnerError('input batch without table_name');
  const columns = inputColumns(batch, schemas);
  if (!columns) {
    // the original runner silently skipped such a batch
    ctx.notes.push(`input to ${table} skipped: no columns and no table_schemas entry`);
    return;
  }
  await waitForStreams(ctx, [...listOf(batch, 'depends_on_stream'), table], 'input');
  await waitForQueries(ctx, batch);
  await sleep(seconds(batch.wait) * 1000, ctx.signal);
  const data = Array.isArray(batch.data) ? batch.data : [];
  ctx.log(`ingest ${data.length} row${data.length === 1 ? '' : 's'} into ${table}`);
  const answer = await ctx.api.ingest(table, columns, data, { signal: ctx.signal });
  if (answer.status < 200 || answer.status >= 300) {
    const err = errorOf(answer);
    throw new RunnerError(
      `ingest into ${table}: HTTP ${answer.status}${err.code !== undefined ? ` code ${err.code}` : ''}: ${err.message}`,
    );
  }
}

/** Run an inputs step. */
export async function runInputs(
  ctx: CaseContext,
  inputs: readonly StepItem[],
  schemas: readonly TableSchema[] | undefined,
): Promise<void> {
  await sleep(WAIT_BEFORE_INPUTS_MS, ctx.signal);
  for (const batch of inputs) {
    try {
      await ingestBatch(ctx, batch, schemas);
      await afterActions(ctx, batch);
    } catch (e) {
      if (e instanceof AbortedError) throw e;
      ctx.fatal.push(e instanceof Error ? e.message : String(e));
      return;
    }
  }
}
