import { DEFAULT_BACKOFF } from '../../connectors/sinks/delivery.ts';
import { redactUrl } from '../../connectors/sinks/http-request.ts';
import { jsonLines } from '../../connectors/sinks/row-payload.ts';
import {
  badSetting,
  type ExternalStreamKind,
  type ExternalStreamShape,
  type PreviewEvent,
  registerExternalStreamKind,
} from './external-stream-kind.ts';
import { TimeplusFollower } from './timeplus-follower.ts';
import { quoteRemote, remoteName, remoteQuery, type TimeplusRemote } from './timeplus-remote.ts';

/** Settings of `type='timeplus'` (Proton's names, and `url` / `api_key` for a REST base). */
const KNOWN = new Set(['type', 'hosts', 'url', 'secure', 'db', 'stream', 'user', 'password', 'api_key']);

function text(s: ExternalStreamShape, name: string): string | undefined {
  const v = s.settings[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw badSetting(name, `expected a string; got ${JSON.stringify(v)}`);
  return v;
}

/** The remote server and stream the settings name (checked). */
export function timeplusRemote(s: ExternalStreamShape): TimeplusRemote {
  for (const k of Object.keys(s.settings))
    if (!KNOWN.has(k))
      throw badSetting(k, `unknown setting of a timeplus external stream (known: ${[...KNOWN].join(', ')})`);
  const secure = s.settings.secure;
  if (secure !== undefined && ![true, false, 'true', 'false', 1, 0, '1', '0'].includes(secure))
    throw badSetting('secure', `expected true or false; got ${JSON.stringify(secure)}`);
  const url = text(s, 'url');
  const hosts = text(s, 'hosts');
  if (url && hosts) throw badSetting('url', 'give either url or hosts, not both');
  let base: string;
  if (url) {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      throw badSetting('url', 'not a valid URL');
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:')
      throw badSetting('url', `expected an http:// or https:// URL; got ${u.protocol}`);
    if (u.username || u.password)
      throw badSetting('url', 'give the credentials in user and password, not in the URL');
    base = url.replace(/\/+$/, '').replace(/\/v1beta2$/, '');
  } else if (hosts) {
    const host = hosts.split(',')[0]?.trim() ?? '';
    if (!/^[A-Za-z0-9.[\]:-]+:\d+$/.test(host)) throw badSetting('hosts', `expected host:port; got ${hosts}`);
    const tls = secure === true || secure === 'true' || secure === 1 || secure === '1';
    base = `${tls ? 'https' : 'http'}://${host}/default/api`;
  } else throw badSetting('hosts', "required: the other server's host:port (or url, its REST base)");
  const stream = text(s, 'stream');
  if (!stream) throw badSetting('stream', 'required: the name of the stream on the other server');
  if (s.columns.length === 0) throw badSetting('columns', 'a timeplus external stream needs its columns');
  const headers: Record<string, string> = {};
  const user = text(s, 'user');
  const apiKey = text(s, 'api_key');
  if (user !== undefined && apiKey !== undefined) throw badSetting('api_key', 'conflicts with user/password');
  if (user !== undefined)
    headers.authorization = `Basic ${Buffer.from(`${user}:${text(s, 'password') ?? ''}`).toString('base64')}`;
  if (apiKey !== undefined) headers['x-api-key'] = apiKey;
  return { base, headers, db: text(s, 'db') ?? 'default', stream };
}

/**
 * `type='timeplus'`: a stream of another Tributary (or Timeplus) server through its REST API. A
 * TimeplusFollower reads it from the earliest row over the SSE query channel into the local stream
 * of the same name (table(), streaming reads, seek_to); rows written into it (INSERT, a
 * materialized view INTO it) are ingested on the other server (JSON lines, with an idempotency id).
 */
export const TIMEPLUS_EXTERNAL_STREAM: ExternalStreamKind = {
  type: 'timeplus',
  readable: true,
  isSecret: (name) => name === 'password' || name === 'api_key',
  check(s) {
    timeplusRemote(s);
  },
  follow(c) {
    const remote = timeplusRemote(c.shape);
    return new TimeplusFollower({
      describe: `${c.db}.${c.name}`,
      remote,
      columns: c.shape.columns.map((col) => col.name),
      ...(c.stateFile ? { stateFile: c.stateFile } : {}),
      ...(c.logger ? { logger: c.logger } : {}),
      commit: (rows, id) => c.commit(rows, id),
    });
  },
  delivery(name, s) {
    const remote = timeplusRemote(s);
    const url = `${remote.base}/v1beta2/streams/${encodeURIComponent(remote.stream)}/ingest?db=${encodeURIComponent(remote.db)}`;
    return {
      backoff: DEFAULT_BACKOFF,
      delivery: {
        describe: `timeplus external stream ${name} → ${redactUrl(url)}`,
        batchSize: 10_000,
        minIntervalMs: 0,
        request: (columns, rows, key) => ({
          url,
          method: 'POST',
          headers: {
            ...remote.headers,
            'content-type': 'application/x-ndjson',
            'x-timeplus-idempotent-id': key,
          },
          body: jsonLines(columns, rows),
          timeoutMs: 30_000,
        }),
      },
    };
  },
  async preview(shape, request) {
    const remote = timeplusRemote(shape);
    const cols = [...shape.columns.map((c) => quoteRemote(c.name)), '_tp_time'].join(', ');
    const seek = request.offset === 'earliest' ? " SETTINGS seek_to='earliest'" : '';
    const sql = `SELECT ${cols} FROM ${remoteName(remote)} LIMIT ${request.count}${seek}`;
    const out: PreviewEvent[] = [];
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), request.timeoutMs);
    const onAbort = () => controller.abort();
    request.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      await remoteQuery(remote, sql, controller.signal, ({ columns, rows }) => {
        for (const row of rows) {
          out.push(Object.fromEntries(columns.map((c, i) => [c, row[i]])));
          if (out.length >= request.count) return false;
        }
        return true;
      });
    } finally {
      clearTimeout(timer);
      request.signal?.removeEventListener('abort', onAbort);
    }
    return out;
  },
};

registerExternalStreamKind(TIMEPLUS_EXTERNAL_STREAM);
