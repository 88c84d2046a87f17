// Statements with `client: rest` call the original server's own REST routes. Two of those routes
// have a direct counterpart in Tributary and are mapped: creating a UDF (`POST /proton/v1/udfs`
// takes the same body as `POST /v1beta2/udfs`) and creating a stream (`POST /proton/v1/ddl/streams`,
// whose body is a table schema, run as CREATE STREAM). Everything else is out of scope and the case
// is skipped with the route as reason. `client: exec` runs shell commands (docker, proton-client)
// and is always out of scope.

import { type StepItem, textOf } from './case-file.ts';

export type RestMapping =
  | { kind: 'udf'; body: Record<string, unknown> }
  | { kind: 'create-stream'; schema: Record<string, unknown> };

function routeOf(item: StepItem): { method: string; path: string } {
  const method = (textOf(item, 'http_method') ?? 'GET').toUpperCase();
  const url = textOf(item, 'query_url') ?? '';
  const path = url.split('?')[0]!.replace(/\/+$/, '');
  return { method, path };
}

/** The Tributary counterpart of a `client: rest` statement, if it has one. */
export function mapRestStatement(item: StepItem): RestMapping | undefined {
  const { method, path } = routeOf(item);
  const data = item.data;
  const body =
    data && typeof data === 'object' && !Array.isArray(data) ? (data as Record<string, unknown>) : undefined;
  if (!body || method !== 'POST' || (textOf(item, 'rest_type') ?? 'raw') !== 'raw') return undefined;
  if (path === '/proton/v1/udfs') return { kind: 'udf', body };
  if (path === '/proton/v1/ddl/streams') return { kind: 'create-stream', schema: body };
  return undefined;
}

/** A short description of a rest/exec statement for skip reasons. */
export function describeOutOfScope(item: StepItem): string {
  const client = textOf(item, 'client');
  if (client === 'rest') {
    const { method, path } = routeOf(item);
    return `rest ${method} ${path || '/'} (a route of the original server)`;
  }
  const q = (textOf(item, 'query') ?? '').replace(/\s+/g, ' ').trim();
  return `exec: shell command \`${q.length > 50 ? `${q.slice(0, 50)}...` : q}\``;
}
