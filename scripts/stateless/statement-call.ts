// One statement through `POST /v1beta2/queries`, waited for to the end: its rows and header, or
// its error (code and message), whether the server refused it at once (JSON error) or it failed
// while streaming (final `query` event with status failed).

import type { TributaryApi } from '../conformance/api-client.ts';
import type { ResultColumn } from './result-format.ts';

export type StatementAnswer =
  | { kind: 'done' }
  | { kind: 'rows'; columns: ResultColumn[]; rows: unknown[][] }
  | { kind: 'error'; code: number | undefined; message: string; rows: unknown[][]; columns: ResultColumn[] };

export async function callStatement(
  api: TributaryApi,
  sql: string,
  extra: Record<string, unknown>,
  signal: AbortSignal,
): Promise<StatementAnswer> {
  const start = await api.startQuery(sql, extra, { signal });
  if (start.kind === 'statement') return { kind: 'done' };
  if (start.kind === 'error')
    return { kind: 'error', code: start.code, message: start.message, rows: [], columns: [] };
  const stream = start.stream;
  const onAbort = () => stream.close();
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    const end = await stream.ended.promise;
    if (signal.aborted)
      throw signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason));
    if (end.status === 'failed' || end.status === 'closed' || end.status === 'aborted') {
      return {
        kind: 'error',
        code: end.error?.code,
        message:
          end.error?.message ?? `the query's event stream ended without a final status (${end.status})`,
        rows: stream.rows,
        columns: stream.columns,
      };
    }
    if (end.status === 'canceled') {
      return {
        kind: 'error',
        code: 394,
        message: 'the query was canceled',
        rows: stream.rows,
        columns: stream.columns,
      };
    }
    return { kind: 'rows', columns: stream.columns, rows: stream.rows };
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
