import type { ClusterInfo } from './cluster-info.ts';
import { EsRequestError } from './es-error.ts';

/** Where a request goes: the bulk handler, or a canned answer. */
export type EsRoute =
  | { kind: 'bulk'; pathIndex: string | undefined }
  | { kind: 'answer'; status: number; body: object };

/** Paths whose resources shippers check and create at start-up: they all "exist" and every write is acknowledged. */
const MANAGED = new Set([
  '_index_template',
  '_template',
  '_component_template',
  '_ilm',
  '_ingest',
  '_data_stream',
  '_alias',
  '_aliases',
]);

/** Per-index sub-resources shippers touch (aliases for Logstash's ILM rollover alias, mappings). */
const INDEX_MANAGED = new Set(['_alias', '_aliases', '_mapping', '_settings']);

const ACK = { acknowledged: true };

/**
 * Route a request. `segments` are the decoded path segments without the query string.
 * Throws EsRequestError 405 for a known path with a wrong method and 404 for anything unknown.
 */
export function routeEsRequest(
  method: string,
  rawPath: string,
  segments: readonly string[],
  info: ClusterInfo,
  publishAddress: () => string,
): EsRoute {
  const n = segments.length;
  const first = segments[0];
  const read = method === 'GET' || method === 'HEAD';
  const write = method === 'PUT' || method === 'POST' || method === 'DELETE';

  if (segments[n - 1] === '_bulk' && n <= 3) {
    if (method !== 'POST' && method !== 'PUT') throw notAllowed(rawPath, method, 'POST, PUT');
    // `/{index}/_bulk`, and the legacy `/{index}/{type}/_bulk` whose type is ignored.
    return { kind: 'bulk', pathIndex: n >= 2 ? segments[0] : undefined };
  }
  if (n === 0) {
    if (!read) throw notAllowed(rawPath, method, 'GET, HEAD');
    return answer(info.root());
  }
  if (first === '_license' && n === 1 && read) return answer(info.license());
  if (first === '_xpack' && n === 1 && read) return answer(info.xpack());
  if (first === '_cluster' && segments[1] === 'health' && read) return answer(info.health());
  if (first === '_nodes' && read) return answer(info.nodes(publishAddress()));
  if (first !== undefined && MANAGED.has(first)) {
    if (read) return answer({});
    if (write) return answer(ACK);
  }
  if (first !== undefined && !first.startsWith('_')) {
    if (n === 1) {
      // `HEAD /{index}` (Logstash's rollover alias check), `PUT /{index}` (its creation).
      if (read) return answer({ [first]: { aliases: {}, mappings: {}, settings: {} } });
      if (method === 'PUT') return answer({ acknowledged: true, shards_acknowledged: true, index: first });
      if (method === 'DELETE') return answer(ACK);
    }
    if (n >= 2 && INDEX_MANAGED.has(segments[1]!)) {
      if (read) return answer({});
      if (write) return answer(ACK);
    }
  }
  throw new EsRequestError(
    404,
    'resource_not_found_exception',
    `no handler found for uri [${rawPath}] and method [${method}]: this Tributary input answers the _bulk API and the start-up calls of log shippers`,
  );
}

function answer(body: object): EsRoute {
  return { kind: 'answer', status: 200, body };
}

function notAllowed(rawPath: string, method: string, allowed: string): EsRequestError {
  return new EsRequestError(
    405,
    'method_not_allowed_exception',
    `Incorrect HTTP method for uri [${rawPath}] and method [${method}], allowed: [${allowed}]`,
    { allow: allowed },
  );
}
