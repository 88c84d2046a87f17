import { realpathSync } from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { quoteIdent } from '../engine/settings-clause.ts';
import { err } from '../errors/tributary-error.ts';
import type { Expr } from '../sql/ast/expression.ts';
import type { CreateDictionary, DictionaryCall } from '../sql/ast/statement.ts';
import { translateDictionaryExpression } from '../sql/translator/dictionary-ddl.ts';
import { printDataType } from '../sql/types/data-type.ts';
import { toClickHouseType } from '../sql/types/proton-types.ts';
import { type StreamDefinition, TP_DELTA, TP_SN } from '../stream/stream-definition.ts';
import { historicalSource } from '../stream/stream-reads.ts';

/** What a dictionary reads, as its record keeps it (for dependents, the topology and reloads). */
export type DictionarySourceInfo =
  | { readonly kind: 'stream'; readonly db: string; readonly name: string }
  | { readonly kind: 'file'; readonly path: string; readonly format: string }
  | { readonly kind: 'http'; readonly url: string; readonly format: string };

/** A source fit for the engine, and what it reads. */
export interface VettedSource {
  readonly engine: DictionaryCall;
  readonly info: DictionarySourceInfo;
}

export interface SourceContext {
  /** The database of the dictionary (an unqualified stream is looked up in it). */
  readonly db: string;
  /** A stream (or a materialized view's target stream) by name. */
  readonly stream: (db: string, name: string) => StreamDefinition | undefined;
  /** The user files directory FILE sources are confined to (absolute). */
  readonly userFilesDir: string;
}

const LOCAL_KINDS = new Set(['TIMEPLUS', 'CLICKHOUSE']);
/** Options of a local stream source that are accepted and have nothing to do (one local engine). */
const LOCAL_IGNORED = new Set(['user', 'password']);

/**
 * The engine source of `SOURCE(...)`: a Tributary stream (TIMEPLUS / CLICKHOUSE with STREAM or
 * TABLE) becomes a query of the stream's committed rows, the latest row per dictionary key; a FILE
 * is confined to the user files directory and read by the engine's file reader; an HTTP URL must be
 * http(s). Every other kind, and every option that would open another door, is refused.
 */
export function vetSource(s: CreateDictionary, ctx: SourceContext): VettedSource {
  const source = s.source as DictionaryCall;
  const kind = source.name.toUpperCase();
  if (LOCAL_KINDS.has(kind)) return streamSource(s, source, ctx);
  if (kind === 'FILE') return fileSource(s, source, ctx);
  if (kind === 'HTTP') return httpSource(s, source);
  throw invalid(
    s,
    `unknown source kind ${source.name} (at position ${source.span.start + 1}); Tributary takes TIMEPLUS(STREAM '...'), CLICKHOUSE(TABLE '...'), FILE(path '...' format '...') and HTTP(url '...' format '...')`,
  );
}

function invalid(s: CreateDictionary, detail: string) {
  return err('INVALID_DICTIONARY', { name: s.target.name, detail });
}

/** Options as lower-case keys with literal (string, number or bare name) values. */
function options(s: CreateDictionary, call: DictionaryCall, allowed: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const a of call.args) {
    const key = a.key.toLowerCase();
    if (!allowed.includes(key))
      throw invalid(
        s,
        `${call.name} does not take ${a.key} (at position ${a.value.span.start + 1}); it takes ${allowed.join(', ')}`,
      );
    if (a.value.kind === 'DictionaryCall') continue;
    out.set(key, literal(s, a.key, a.value));
  }
  return out;
}

function literal(s: CreateDictionary, key: string, e: Expr): string {
  if (e.kind === 'String') return e.value;
  if (e.kind === 'Number') return e.text;
  if (e.kind === 'Identifier') return e.parts.join('.');
  throw invalid(s, `${key} (at position ${e.span.start + 1}) must be a literal`);
}

function required(s: CreateDictionary, call: DictionaryCall, opts: Map<string, string>, key: string): string {
  const v = opts.get(key);
  if (v === undefined || v === '') throw invalid(s, `${call.name} needs ${key}`);
  return v;
}

const str = (value: string, at: DictionaryCall): Expr => ({ kind: 'String', value, span: at.span });
const engineCall = (name: string, args: DictionaryCall['args'], at: DictionaryCall): DictionaryCall => ({
  kind: 'DictionaryCall',
  name,
  args,
  span: at.span,
});

/** The columns the source must deliver: all but those computed by an EXPRESSION. */
function sourcedColumns(s: CreateDictionary) {
  return s.columns.filter((c) => !c.dictionary?.expression);
}

/**
 * The columns a query source selects, in the dictionary's order: sourced columns by name, and an
 * `EXPRESSION` column computed from the others (the engine computes it only for table sources).
 */
function selectList(s: CreateDictionary): string[] {
  return s.columns.map((c) => {
    const e = c.dictionary?.expression;
    return e ? `(${translateDictionaryExpression(e)}) AS ${quoteIdent(c.name)}` : quoteIdent(c.name);
  });
}

function streamSource(s: CreateDictionary, call: DictionaryCall, ctx: SourceContext): VettedSource {
  const opts = options(s, call, ['stream', 'table', 'db', 'database', ...LOCAL_IGNORED]);
  const name = opts.get('stream') ?? opts.get('table');
  if (!name) throw invalid(s, `${call.name} needs STREAM '<name>'`);
  if (call.args.some((a) => a.key.toLowerCase() === 'query'))
    throw invalid(s, 'a QUERY source is not supported; name a stream');
  const dot = name.indexOf('.');
  const db = opts.get('db') ?? opts.get('database') ?? (dot > 0 ? name.slice(0, dot) : ctx.db);
  const streamName = dot > 0 && !opts.has('db') && !opts.has('database') ? name.slice(dot + 1) : name;
  const layout = s.layout?.name.toUpperCase() ?? '';
  if (/(^|_)(CACHE|DIRECT)$/.test(layout))
    throw invalid(
      s,
      `layout ${s.layout?.name} reads the source at every lookup; a stream source is loaded whole (use HASHED, FLAT, ...)`,
    );
  const def = ctx.stream(db, streamName);
  if (!def) throw err('UNKNOWN_STREAM', { name: `${db}.${streamName}` });
  if (def.storageType === 'streaming')
    throw invalid(s, `stream ${db}.${streamName} keeps no historical store (storage_type='streaming')`);
  const have = new Set(def.columns.map((c) => c.name));
  const missing = sourcedColumns(s)
    .map((c) => c.name)
    .filter((c) => !have.has(c));
  if (missing.length) throw invalid(s, `stream ${db}.${streamName} has no column ${missing.join(', ')}`);
  const columns = selectList(s);
  const keys = s.primaryKey.map((k) => quoteIdent(k.kind === 'Identifier' ? (k.parts.at(-1) as string) : ''));
  // The stream's committed rows as a historical read sees them (latest per stream key for the kv
  // modes), then the latest row per dictionary key; changelog rows whose latest is a delete drop out.
  const changelog = def.mode === 'changelog';
  const carried = changelog ? [...columns, quoteIdent(TP_DELTA)] : columns;
  let sql = `SELECT ${carried.join(', ')} FROM ${historicalSource(def)} AS __src ORDER BY ${quoteIdent(TP_SN)} DESC LIMIT 1 BY ${keys.join(', ')}`;
  if (changelog) sql = `SELECT ${columns.join(', ')} FROM (${sql}) WHERE ${quoteIdent(TP_DELTA)} > 0`;
  return {
    engine: engineCall('CLICKHOUSE', [{ key: 'QUERY', value: str(sql, call) }], call),
    info: { kind: 'stream', db: def.db, name: def.name },
  };
}

/**
 * `path` resolved in the user files directory (a relative path is relative to it), symbolic links
 * followed; outside it (`../`, an absolute path elsewhere, a link out) is DICTIONARY_PATH_DENIED.
 */
export function confinedPath(dictionary: string, path: string, userFilesDir: string): string {
  const dir = resolve(userFilesDir);
  const wanted = isAbsolute(path) ? resolve(path) : resolve(dir, path);
  const denied = () => err('DICTIONARY_PATH_DENIED', { name: dictionary, path, dir });
  if (!inside(dir, wanted)) throw denied();
  let real: string;
  let realDir: string;
  try {
    realDir = realpathSync(dir);
    real = realpathSync(wanted);
  } catch (e) {
    throw err('DICTIONARY_LOAD_FAILED', {
      name: dictionary,
      detail: `cannot open ${path} in the user files directory: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    });
  }
  if (!inside(realDir, real)) throw denied();
  return real;
}

function inside(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

function fileSource(s: CreateDictionary, call: DictionaryCall, ctx: SourceContext): VettedSource {
  const opts = options(s, call, ['path', 'format']);
  const path = required(s, call, opts, 'path');
  const format = required(s, call, opts, 'format');
  if (!/^[A-Za-z0-9]+$/.test(format)) throw invalid(s, `format ${format} is not a format name`);
  const real = confinedPath(s.target.name, path, ctx.userFilesDir);
  return {
    engine: fileQuery(s, real, format, call),
    info: { kind: 'file', path, format },
  };
}

/**
 * The engine reads the file through its own reader, as a query source: the engine's FILE source only
 * reads under its working directory, while Tributary confines the path itself (confinedPath).
 */
function fileQuery(s: CreateDictionary, real: string, format: string, call: DictionaryCall): DictionaryCall {
  const cols = sourcedColumns(s);
  const structure = cols
    .map((c) => `${quoteIdent(c.name)} ${c.type ? toClickHouseType(printDataType(c.type)) : 'String'}`)
    .join(', ');
  const q = (v: string) => `'${v.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
  const sql = `SELECT ${selectList(s).join(', ')} FROM file(${q(real)}, ${q(format)}, ${q(structure)})`;
  return engineCall('CLICKHOUSE', [{ key: 'QUERY', value: str(sql, call) }], call);
}

function httpSource(s: CreateDictionary, call: DictionaryCall): VettedSource {
  if (call.args.some((a) => a.key.toLowerCase() === 'headers'))
    throw invalid(
      s,
      "HTTP headers(...) are not supported: the engine would show their values to every reader of system.tables; use credentials(user '...' password '...'), whose password it hides",
    );
  const opts = options(s, call, ['url', 'format', 'credentials']);
  const url = required(s, call, opts, 'url');
  const format = required(s, call, opts, 'format');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalid(s, `url ${url} is not a URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw invalid(s, `url ${url}: only http and https URLs may be fetched`);
  return {
    engine: engineCall('HTTP', call.args, call),
    info: { kind: 'http', url, format },
  };
}
