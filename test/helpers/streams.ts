import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import type { Harness } from './harness.ts';

/** POST /v1beta2/streams with a StreamDef body; asserts 201. */
export async function createStream(
  h: Harness,
  def: Record<string, unknown>,
  db?: string,
): Promise<Record<string, unknown>> {
  const r = await h.call('POST', `/v1beta2/streams${db ? `?db=${db}` : ''}`, { body: def });
  assert.equal(r.statusCode, 201, r.body);
  return r.json() as Record<string, unknown>;
}

/** POST an ingest body as it is (string or Buffer) with a Content-Type. */
export function ingestRaw(
  h: Harness,
  stream: string,
  body: string | Buffer,
  contentType?: string,
  options: { query?: string; headers?: Record<string, string> } = {},
): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (contentType !== undefined) headers['content-type'] = contentType;
  return h.call('POST', `/v1beta2/streams/${stream}/ingest${options.query ? `?${options.query}` : ''}`, {
    body,
    headers,
  });
}

/** Compact ingest; asserts 200 with an empty body. */
export async function ingestCompact(
  h: Harness,
  stream: string,
  columns: string[],
  data: unknown[][],
  db?: string,
): Promise<void> {
  const r = await ingestRaw(
    h,
    stream,
    JSON.stringify({ columns, data }),
    'application/json',
    db ? { query: `db=${db}` } : {},
  );
  assert.equal(r.statusCode, 200, r.body);
  assert.equal(r.body, '');
}

/** Rows of an engine query (JSONCompactEachRow). */
export async function rows(h: Harness, sql: string): Promise<unknown[][]> {
  const text = (await h.trb.services.engine.query(sql, { format: 'JSONCompactEachRow' })).text();
  return text
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as unknown[]);
}

/**
 * Every row stored in a stream (its whole history, kv modes too), read from the engine under the
 * stream's flush lock as every query's read is: a read racing a buffer flush can miss the rows
 * moving from the buffer into the MergeTree (src/stream/flush-lock.ts).
 */
export async function count(h: Harness, stream: string, db = 'default'): Promise<number> {
  const sql = `SELECT count() FROM \`${db}\`.\`${stream}\``;
  const [[n]] = (await h.trb.services.streams.read([`${db}.${stream}`], () => rows(h, sql))) as [
    [string | number],
  ];
  return Number(n);
}

/** Assert a response is a catalogued error. */
export function assertError(r: LightMyRequestResponse, status: number, code: number, message?: RegExp): void {
  assert.equal(r.statusCode, status, r.body);
  const body = r.json() as { code: number; message: string; system: string };
  assert.equal(body.code, code, r.body);
  if (message) assert.match(body.message, message);
}
