import { quoteString } from '../engine/settings-clause.ts';
import type { S3Credentials } from './s3-credentials.ts';
import { type S3TableConfig, TRIBUTARY_LIMITS } from './s3-table-settings.ts';

/**
 * The address objects live under: `endpoint` (with `bucket` appended when it is given and the
 * endpoint does not already end with it), or the region's virtual-hosted address of `bucket`.
 */
export function bucketUrl(config: S3TableConfig): string {
  if (config.endpoint !== undefined) {
    const base = config.endpoint.replace(/\/+$/, '');
    if (config.bucket === undefined || base.endsWith(`/${config.bucket}`)) return base;
    return `${base}/${config.bucket}`;
  }
  return `https://${config.bucket}.s3.${config.region}.amazonaws.com`;
}

/** `s3(...)` / `S3(...)` arguments before the format: the object address and the keys (NOSIGN when anonymous). */
function addressAndKeys(url: string, creds: S3Credentials | undefined): string[] {
  if (!creds) return [quoteString(url), 'NOSIGN'];
  return [
    quoteString(url),
    quoteString(creds.accessKeyId),
    quoteString(creds.secretAccessKey),
    ...(creds.sessionToken ? [quoteString(creds.sessionToken)] : []),
  ];
}

/** Attempts of one S3 request before the statement fails (the engine's s3_retry_attempts). */
export const S3_RETRY_ATTEMPTS = 3;

/** Engine settings of an s3 table: format options and the engine's s3_* limits. */
export function engineSettings(
  config: S3TableConfig,
  limits: Readonly<Record<string, number | boolean>>,
  formatSchemaPath: string | undefined,
): Record<string, string | number | boolean> {
  // The engine's own default (100 attempts with backoff) keeps a statement against an unreachable
  // endpoint busy for minutes, CREATE included; a few attempts fail it in well under a second.
  const out: Record<string, string | number | boolean> = { s3_retry_attempts: S3_RETRY_ATTEMPTS };
  for (const [k, v] of Object.entries(limits)) if (!TRIBUTARY_LIMITS.has(k)) out[k] = v;
  if (config.tsvSkipFirstLines !== undefined)
    out.input_format_tsv_skip_first_lines = config.tsvSkipFirstLines;
  if (formatSchemaPath !== undefined) out.format_schema = formatSchemaPath;
  return out;
}

export function settingsText(settings: Readonly<Record<string, string | number | boolean>>): string {
  const parts = Object.entries(settings).map(
    ([k, v]) => `${k} = ${typeof v === 'string' ? quoteString(v) : typeof v === 'boolean' ? (v ? 1 : 0) : v}`,
  );
  return parts.length ? ` SETTINGS ${parts.join(', ')}` : '';
}

/**
 * The engine table SELECT reads: an S3-engine table over the read pattern (the engine expands
 * globs at each read, gives `_path` and `_file`, and keeps the keys hidden in its metadata views).
 */
export function readTableDdl(
  table: string,
  structure: string,
  config: S3TableConfig,
  creds: S3Credentials | undefined,
  formatSchemaPath: string | undefined,
): string {
  const args = [
    ...addressAndKeys(`${bucketUrl(config)}/${config.readFrom}`, creds),
    quoteString(config.format),
    quoteString(config.compression),
  ];
  return (
    `CREATE TABLE ${table} (${structure}) ENGINE = S3(${args.join(', ')})` +
    settingsText(engineSettings(config, config.limits, formatSchemaPath))
  );
}

/** What one write of rows into new objects of an s3 table needs (see insertHead). */
export interface ObjectWrite {
  key: string;
  structure: string;
  config: S3TableConfig;
  creds: S3Credentials | undefined;
  partitionBy?: string;
  columns: readonly string[];
  settings: Readonly<Record<string, string | number | boolean>>;
}

/**
 * `INSERT INTO FUNCTION s3(<new object>, ...) [PARTITION BY e] (cols) SETTINGS ... ` followed by
 * the rows' source (a SELECT or VALUES) that the caller appends.
 */
export function insertHead(options: ObjectWrite): string {
  const { config } = options;
  const args = [
    ...addressAndKeys(`${bucketUrl(config)}/${options.key}`, options.creds),
    quoteString(config.format),
    quoteString(options.structure),
    quoteString(config.compression),
  ];
  return (
    `INSERT INTO FUNCTION s3(${args.join(', ')})` +
    (options.partitionBy ? ` PARTITION BY (${options.partitionBy})` : '') +
    ` (${options.columns.join(', ')})` +
    settingsText(options.settings)
  );
}

/** `text` with every secret replaced by `******` (errors of statements that carried keys). */
export function scrubSecrets(text: string, creds: S3Credentials | undefined): string {
  if (!creds) return text;
  let out = text;
  for (const s of [creds.secretAccessKey, creds.sessionToken])
    if (s && s.length >= 1) out = out.split(s).join('******');
  return out;
}
