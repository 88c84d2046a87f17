import { DEFAULT_BACKOFF, IDEMPOTENCY_HEADER } from '../../connectors/sinks/delivery.ts';
import { redactUrl } from '../../connectors/sinks/http-request.ts';
import { fillRowFormat, jsonLines, rowFormatColumns, rowObject } from '../../connectors/sinks/row-payload.ts';
import {
  badSetting,
  type ExternalStreamKind,
  type ExternalStreamShape,
  registerExternalStreamKind,
  type SettingValue,
} from './external-stream-kind.ts';

/** Settings of `type='http'` (Proton's names; docs/sql-reference.md, "External streams"). */
const KNOWN = new Set([
  'type',
  'url',
  'data_format',
  'write_method',
  'compression_method',
  'use_chunked_encoding',
  'username',
  'password',
  'format_template_resultset_format',
  'format_template_row_format',
  'format_template_rows_between_delimiter',
  'http_keep_alive_timeout',
  'timeout_ms',
  'batch_size',
  'retry_backoff_ms',
  'retry_backoff_max_ms',
]);
const FORMATS = ['JSONEachRow', 'Template', 'RawBLOB', 'LineAsString'];

function str(s: ExternalStreamShape, name: string): string | undefined {
  const v = s.settings[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw badSetting(name, `expected a string; got ${JSON.stringify(v)}`);
  return v;
}

function int(s: ExternalStreamShape, name: string, dflt: number, min: number, max: number): number {
  const v: SettingValue | undefined = s.settings[name];
  if (v === undefined) return dflt;
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max)
    throw badSetting(name, `expected an integer from ${min} to ${max}; got ${JSON.stringify(v)}`);
  return n;
}

/** The request headers of `http_header_<Name>` settings. */
function headers(s: ExternalStreamShape): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(s.settings)) {
    if (!k.startsWith('http_header_')) continue;
    const name = k.slice('http_header_'.length);
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw badSetting(k, 'not a valid header name');
    out[name] = String(v);
  }
  return out;
}

/**
 * `type='http'`: a write-only external stream (as Proton's). Rows written into it (INSERT INTO ...
 * SELECT, a materialized view INTO it) are sent to `url` with `write_method` (POST), as
 * `data_format` JSONEachRow (one JSON object per line, the default), Template
 * (`format_template_row_format` with `${col}` / `${col:JSON}` placeholders, rows joined by
 * `format_template_rows_between_delimiter`, wrapped in `format_template_resultset_format`'s `${data}`),
 * or RawBLOB/LineAsString (the single column's text, one per line).
 */
export const HTTP_EXTERNAL_STREAM: ExternalStreamKind = {
  type: 'http',
  readable: false,
  isSecret: (name) => name === 'password' || /^http_header_.*(authorization|token|secret|key)/i.test(name),
  check(s) {
    for (const k of Object.keys(s.settings))
      if (!KNOWN.has(k) && !k.startsWith('http_header_'))
        throw badSetting(
          k,
          `unknown setting of an http external stream (known: ${[...KNOWN].join(', ')}, http_header_<Name>)`,
        );
    const url = str(s, 'url');
    if (!url) throw badSetting('url', 'required: the receiver’s http:// or https:// URL');
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      throw badSetting('url', 'not a valid URL');
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:')
      throw badSetting('url', `expected an http:// or https:// URL; got ${u.protocol}`);
    const format = str(s, 'data_format') ?? 'JSONEachRow';
    if (!FORMATS.includes(format))
      throw badSetting('data_format', `expected one of ${FORMATS.join(', ')}; got ${format}`);
    const method = (str(s, 'write_method') ?? 'POST').toUpperCase();
    if (!['POST', 'PUT', 'PATCH'].includes(method))
      throw badSetting('write_method', `expected POST, PUT or PATCH; got ${method}`);
    const compression = str(s, 'compression_method') ?? 'none';
    if (compression !== 'none')
      throw badSetting('compression_method', `only 'none' is supported; got ${compression}`);
    const h = headers(s);
    if (
      (s.settings.username !== undefined || s.settings.password !== undefined) &&
      Object.keys(h).some((k) => /^authorization$/i.test(k))
    )
      throw badSetting('username', 'conflicts with http_header_Authorization');
    if (format === 'Template') {
      const row = str(s, 'format_template_row_format');
      if (!row) throw badSetting('format_template_row_format', 'required with data_format Template');
      const names = new Set(s.columns.map((c) => c.name));
      for (const c of rowFormatColumns(row))
        if (!names.has(c))
          throw badSetting('format_template_row_format', `\${${c}} names no column of the stream`);
    }
    if ((format === 'RawBLOB' || format === 'LineAsString') && s.columns.length !== 1)
      throw badSetting('data_format', `${format} writes a single column; the stream has ${s.columns.length}`);
    int(s, 'timeout_ms', 10_000, 1, 600_000);
    int(s, 'batch_size', 10_000, 1, 1_000_000);
    int(s, 'retry_backoff_ms', DEFAULT_BACKOFF.baseMs, 1, 3_600_000);
    int(s, 'retry_backoff_max_ms', DEFAULT_BACKOFF.maxMs, 1, 3_600_000);
    int(s, 'http_keep_alive_timeout', 10, 0, 3600);
  },
  delivery(name, s) {
    const url = str(s, 'url') as string;
    const format = str(s, 'data_format') ?? 'JSONEachRow';
    const method = (str(s, 'write_method') ?? 'POST').toUpperCase();
    const extra = headers(s);
    const username = s.settings.username;
    if (username !== undefined)
      extra.Authorization = `Basic ${Buffer.from(`${username}:${s.settings.password ?? ''}`).toString('base64')}`;
    const rowFormat = str(s, 'format_template_row_format') ?? '';
    const between = str(s, 'format_template_rows_between_delimiter') ?? '\n';
    // biome-ignore lint/suspicious/noTemplateCurlyInString: ClickHouse's Template placeholder, not JS
    const resultset = str(s, 'format_template_resultset_format') ?? '${data}';
    const contentType =
      format === 'JSONEachRow'
        ? 'application/x-ndjson'
        : format === 'Template'
          ? 'text/plain'
          : 'application/octet-stream';
    const timeoutMs = int(s, 'timeout_ms', 10_000, 1, 600_000);
    return {
      backoff: {
        baseMs: int(s, 'retry_backoff_ms', DEFAULT_BACKOFF.baseMs, 1, 3_600_000),
        maxMs: int(s, 'retry_backoff_max_ms', DEFAULT_BACKOFF.maxMs, 1, 3_600_000),
      },
      delivery: {
        describe: `http external stream ${name} → ${redactUrl(url)}`,
        batchSize: int(s, 'batch_size', 10_000, 1, 1_000_000),
        minIntervalMs: 0,
        request: (columns, rows, key) => {
          let body: string;
          if (format === 'JSONEachRow') body = jsonLines(columns, rows);
          else if (format === 'Template') {
            const data = rows.map((r) => fillRowFormat(rowFormat, rowObject(columns, r))).join(between);
            body = resultset.replace(/\$\{\s*data\s*\}/, () => data);
          } else
            body = `${rows.map((r) => String(rowObject(columns, r)[columns[0] as string] ?? '')).join('\n')}\n`;
          return {
            url,
            method,
            headers: { 'content-type': contentType, ...extra, [IDEMPOTENCY_HEADER]: key },
            body,
            timeoutMs,
          };
        },
      },
    };
  },
};

registerExternalStreamKind(HTTP_EXTERNAL_STREAM);
