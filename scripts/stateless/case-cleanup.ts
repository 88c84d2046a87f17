// Keeps cases from seeing each other's objects: what exists before a case (databases, and the
// streams and views of each) is remembered, and whatever the case left behind is dropped after it
// (dictionaries and views first, then streams, then new databases), through the REST API.

import type { TributaryApi } from '../conformance/api-client.ts';
import { callStatement } from './statement-call.ts';

export interface CatalogSnapshot {
  databases: Set<string>;
  /** `db.name` of streams and views. */
  objects: Set<string>;
}

const quote = (name: string) => `\`${name.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``;

async function names(api: TributaryApi, path: string, signal: AbortSignal): Promise<string[]> {
  const answer = await api.request('GET', path, undefined, { signal, timeoutMs: 30_000 });
  if (answer.status !== 200) return [];
  const list = JSON.parse(answer.text) as Array<{ name?: unknown }>;
  return Array.isArray(list) ? list.map((x) => String(x.name ?? '')).filter((n) => n.length > 0) : [];
}

async function databases(api: TributaryApi, signal: AbortSignal): Promise<string[]> {
  const answer = await callStatement(api, 'SHOW DATABASES', {}, signal);
  if (answer.kind !== 'rows')
    throw new Error(`SHOW DATABASES failed: ${answer.kind === 'error' ? answer.message : ''}`);
  return answer.rows.map((r) => String(r[0]));
}

interface Listed {
  dictionaries: Array<[string, string]>;
  views: Array<[string, string]>;
  streams: Array<[string, string]>;
}

async function list(api: TributaryApi, dbs: string[], signal: AbortSignal): Promise<Listed> {
  const out: Listed = { dictionaries: [], views: [], streams: [] };
  for (const db of dbs) {
    const q = `?db=${encodeURIComponent(db)}`;
    for (const n of await names(api, `/v1beta2/dictionaries${q}`, signal)) out.dictionaries.push([db, n]);
    for (const n of await names(api, `/v1beta2/materialized_views${q}`, signal)) out.views.push([db, n]);
    for (const n of await names(api, `/v1beta2/views${q}`, signal)) out.views.push([db, n]);
    for (const n of await names(api, `/v1beta2/streams${q}`, signal)) out.streams.push([db, n]);
  }
  return out;
}

export async function snapshotCatalog(api: TributaryApi, signal: AbortSignal): Promise<CatalogSnapshot> {
  const dbs = await databases(api, signal);
  const listed = await list(api, dbs, signal);
  return {
    databases: new Set(dbs),
    objects: new Set(
      [...listed.dictionaries, ...listed.views, ...listed.streams].map(([db, n]) => `${db}.${n}`),
    ),
  };
}

/** Drop what is not in the snapshot; answers the problems met (empty when all went). */
export async function restoreCatalog(
  api: TributaryApi,
  before: CatalogSnapshot,
  signal: AbortSignal,
): Promise<string[]> {
  const problems: string[] = [];
  const dbs = await databases(api, signal);
  const kept = dbs.filter((d) => before.databases.has(d));
  const listed = await list(api, kept, signal);
  const drop = async (sql: string) => {
    const answer = await callStatement(api, sql, {}, signal);
    if (answer.kind === 'error') problems.push(`${sql}: ${answer.message}`);
  };
  for (const [db, n] of listed.dictionaries) {
    if (!before.objects.has(`${db}.${n}`)) await drop(`DROP DICTIONARY IF EXISTS ${quote(db)}.${quote(n)}`);
  }
  for (const [db, n] of listed.views) {
    if (!before.objects.has(`${db}.${n}`)) await drop(`DROP VIEW IF EXISTS ${quote(db)}.${quote(n)}`);
  }
  for (const [db, n] of listed.streams) {
    if (!before.objects.has(`${db}.${n}`)) await drop(`DROP STREAM IF EXISTS ${quote(db)}.${quote(n)}`);
  }
  for (const db of dbs) if (!before.databases.has(db)) await drop(`DROP DATABASE IF EXISTS ${quote(db)}`);
  return problems;
}
