import { closestName } from '../connectors/inputs/closest-name.ts';
import { err } from '../errors/tributary-error.ts';
import { checkKeyPattern, formatFromKey, readPatternOf } from './s3-object-keys.ts';

/** A setting value as CREATE EXTERNAL TABLE ... SETTINGS gives it. */
export type SettingValue = string | number | boolean;

/**
 * The `s3_*` limits of spec §8, settable on the table and overridden by an INSERT's SETTINGS.
 * `s3_min_upload_file_size` and `s3_max_upload_idle_seconds` are Tributary's own (they decide
 * when buffered rows of a continuous write become an object); the others are the engine's.
 */
export const S3_LIMITS: Readonly<Record<string, 'integer' | 'boolean'>> = {
  s3_min_upload_file_size: 'integer',
  s3_max_upload_idle_seconds: 'integer',
  s3_min_upload_part_size: 'integer',
  s3_upload_part_size_multiply_factor: 'integer',
  s3_upload_part_size_multiply_parts_count_threshold: 'integer',
  s3_max_single_part_upload_size: 'integer',
  s3_check_objects_after_upload: 'boolean',
  s3_max_connections: 'integer',
  s3_max_get_rps: 'integer',
  s3_max_get_burst: 'integer',
  s3_max_put_rps: 'integer',
  s3_max_put_burst: 'integer',
  s3_max_redirects: 'integer',
  s3_max_single_read_retries: 'integer',
  s3_max_unexpected_write_error_retries: 'integer',
};

/** Limits that are Tributary's own and never handed to the engine. */
export const TRIBUTARY_LIMITS: ReadonlySet<string> = new Set([
  's3_min_upload_file_size',
  's3_max_upload_idle_seconds',
]);

/** Settings whose values are secrets: masked in SHOW CREATE, REST answers, errors and logs. */
export const SECRET_SETTINGS: ReadonlySet<string> = new Set(['secret_access_key']);

const TABLE_SETTINGS = [
  'type',
  'region',
  'bucket',
  'endpoint',
  'use_environment_credentials',
  'access_key_id',
  'secret_access_key',
  'config_file',
  'read_from',
  'write_to',
  'data_format',
  'compression_method',
  'input_format_tsv_skip_first_lines',
  'format_schema',
  ...Object.keys(S3_LIMITS),
];

/** data_format values (spec §4.C) in the engine's spelling. */
const FORMATS: Readonly<Record<string, string>> = {
  jsoneachrow: 'JSONEachRow',
  csv: 'CSV',
  tsv: 'TSV',
  tabseparated: 'TSV',
  protobufsingle: 'ProtobufSingle',
  protobuf: 'Protobuf',
  avro: 'Avro',
  rawblob: 'RawBLOB',
};

/** compression_method values (spec §4.C). */
export const COMPRESSION_METHODS = [
  'auto',
  'none',
  'gzip',
  'deflate',
  'br',
  'xz',
  'zstd',
  'lz4',
  'bz2',
  'snappy',
] as const;
export type CompressionMethod = (typeof COMPRESSION_METHODS)[number];

/** An s3 table's settings, checked and with the inferred defaults filled in. */
export interface S3TableConfig {
  region?: string;
  bucket?: string;
  endpoint?: string;
  useEnvironmentCredentials: boolean;
  accessKeyId?: string;
  secretAccessKey?: string;
  configFile?: string;
  /** The pattern SELECT reads (given, or derived from write_to). */
  readFrom: string;
  writeTo?: string;
  /** Engine format name. */
  format: string;
  /** Given explicitly, or inferred per object from its key's extension (`auto`). */
  compression: CompressionMethod;
  tsvSkipFirstLines?: number;
  /** `schema_name:Message` for the Protobuf formats. */
  formatSchema?: string;
  /** The s3_* limits given on the table. */
  limits: Record<string, number | boolean>;
}

/** Check the SETTINGS of CREATE EXTERNAL TABLE; every failure names the setting. */
export function s3TableConfig(table: string, raw: Readonly<Record<string, SettingValue>>): S3TableConfig {
  for (const name of Object.keys(raw)) {
    if (!TABLE_SETTINGS.includes(name)) {
      const near = closestName(name, TABLE_SETTINGS);
      throw err('EXTERNAL_TABLE_UNKNOWN_SETTING', {
        table,
        setting: name,
        suggestion: near ? ` (did you mean ${near}?)` : '',
      });
    }
  }
  const type = raw.type;
  if (type === undefined)
    throw err('EXTERNAL_TABLE_MISSING_SETTING', { table, setting: 'type', detail: "(type='s3')" });
  if (String(type).toLowerCase() !== 's3')
    throw err('EXTERNAL_TABLE_BAD_SETTING', {
      table,
      setting: 'type',
      detail: `must be 's3' (external tables of type '${String(type)}' do not exist)`,
    });
  const str = (name: string): string | undefined => {
    const v = raw[name];
    if (v === undefined) return undefined;
    if (typeof v !== 'string' || v === '')
      throw err('EXTERNAL_TABLE_BAD_SETTING', {
        table,
        setting: name,
        detail: 'must be a non-empty quoted string',
      });
    return v;
  };
  const endpoint = str('endpoint');
  const region = str('region');
  const bucket = str('bucket');
  if (endpoint !== undefined) checkEndpoint(table, endpoint);
  else {
    if (region === undefined)
      throw err('EXTERNAL_TABLE_MISSING_SETTING', {
        table,
        setting: 'region',
        detail: 'when endpoint is not given',
      });
    if (bucket === undefined)
      throw err('EXTERNAL_TABLE_MISSING_SETTING', {
        table,
        setting: 'bucket',
        detail: 'when endpoint is not given',
      });
  }
  const useEnv = booleanOf(table, 'use_environment_credentials', raw.use_environment_credentials) ?? false;
  const accessKeyId = str('access_key_id');
  const secretAccessKey = str('secret_access_key');
  const configFile = str('config_file');
  if (accessKeyId !== undefined && secretAccessKey === undefined && configFile === undefined)
    throw err('EXTERNAL_TABLE_MISSING_SETTING', {
      table,
      setting: 'secret_access_key',
      detail: 'when access_key_id is given',
    });
  const writeTo = str('write_to');
  const givenReadFrom = str('read_from');
  if (writeTo === undefined && givenReadFrom === undefined)
    throw err('EXTERNAL_TABLE_MISSING_SETTING', { table, setting: 'read_from', detail: '(or write_to)' });
  if (writeTo !== undefined) checkWriteTemplate(table, writeTo);
  if (givenReadFrom !== undefined) checkKeyPattern(table, 'read_from', givenReadFrom);
  const readFrom = givenReadFrom ?? readPatternOf(writeTo as string);
  const keyForInference = writeTo ?? readFrom;
  const formatText = str('data_format');
  let format: string;
  if (formatText !== undefined) {
    const f = FORMATS[formatText.toLowerCase()];
    if (!f)
      throw err('EXTERNAL_TABLE_BAD_SETTING', {
        table,
        setting: 'data_format',
        detail: `must be one of ${Object.values(FORMATS)
          .filter((v, i, a) => a.indexOf(v) === i)
          .join(', ')} (TabSeparated is TSV); got '${formatText}'`,
      });
    format = f;
  } else format = formatFromKey(keyForInference) ?? 'RawBLOB';
  const compressionText = str('compression_method');
  let compression: CompressionMethod = 'auto';
  if (compressionText !== undefined) {
    const c = compressionText.toLowerCase() as CompressionMethod;
    if (!COMPRESSION_METHODS.includes(c))
      throw err('EXTERNAL_TABLE_BAD_SETTING', {
        table,
        setting: 'compression_method',
        detail: `must be one of ${COMPRESSION_METHODS.join(', ')}; got '${compressionText}'`,
      });
    compression = c;
  }
  const formatSchema = str('format_schema');
  if ((format === 'Protobuf' || format === 'ProtobufSingle') && formatSchema === undefined)
    throw err('EXTERNAL_TABLE_MISSING_SETTING', {
      table,
      setting: 'format_schema',
      detail: `for data_format='${format}' ('<schema name>:<message>', see CREATE FORMAT SCHEMA)`,
    });
  if (formatSchema !== undefined && !/^[A-Za-z_][A-Za-z0-9_]*:[A-Za-z_][A-Za-z0-9_.]*$/.test(formatSchema))
    throw err('EXTERNAL_TABLE_BAD_SETTING', {
      table,
      setting: 'format_schema',
      detail: "must be '<schema name>:<message name>'",
    });
  const skip = raw.input_format_tsv_skip_first_lines;
  if (skip !== undefined && !(typeof skip === 'number' && Number.isInteger(skip) && skip >= 0))
    throw err('EXTERNAL_TABLE_BAD_SETTING', {
      table,
      setting: 'input_format_tsv_skip_first_lines',
      detail: 'must be a non-negative integer',
    });
  return {
    ...(region !== undefined ? { region } : {}),
    ...(bucket !== undefined ? { bucket } : {}),
    ...(endpoint !== undefined ? { endpoint } : {}),
    useEnvironmentCredentials: useEnv,
    ...(accessKeyId !== undefined ? { accessKeyId } : {}),
    ...(secretAccessKey !== undefined ? { secretAccessKey } : {}),
    ...(configFile !== undefined ? { configFile } : {}),
    readFrom,
    ...(writeTo !== undefined ? { writeTo } : {}),
    format,
    compression,
    ...(typeof skip === 'number' ? { tsvSkipFirstLines: skip } : {}),
    ...(formatSchema !== undefined ? { formatSchema } : {}),
    limits: s3Limits(table, raw),
  };
}

/**
 * The s3_* limits among `raw` (table SETTINGS or an INSERT's), checked. With `only`, any other
 * setting is refused (an INSERT into an s3 table takes only limits).
 */
export function s3Limits(
  table: string,
  raw: Readonly<Record<string, SettingValue>>,
  only = false,
): Record<string, number | boolean> {
  const out: Record<string, number | boolean> = {};
  for (const [name, value] of Object.entries(raw)) {
    const kind = S3_LIMITS[name];
    if (!kind) {
      if (!only) continue;
      const near = closestName(name, Object.keys(S3_LIMITS));
      throw err('EXTERNAL_TABLE_UNKNOWN_SETTING', {
        table,
        setting: name,
        suggestion: ` (an INSERT into an s3 table takes only s3_* limits${near ? `; did you mean ${near}?` : ''})`,
      });
    }
    if (kind === 'boolean') out[name] = booleanOf(table, name, value) as boolean;
    else {
      if (!(typeof value === 'number' && Number.isInteger(value) && value >= 0))
        throw err('EXTERNAL_TABLE_BAD_SETTING', {
          table,
          setting: name,
          detail: 'must be a non-negative integer',
        });
      out[name] = value;
    }
  }
  return out;
}

function booleanOf(table: string, setting: string, v: SettingValue | undefined): boolean | undefined {
  if (v === undefined) return undefined;
  if (typeof v === 'boolean') return v;
  if (v === 1 || v === 0) return v === 1;
  if (typeof v === 'string' && /^(true|false)$/i.test(v)) return v.toLowerCase() === 'true';
  throw err('EXTERNAL_TABLE_BAD_SETTING', { table, setting, detail: 'must be true or false' });
}

function checkEndpoint(table: string, endpoint: string): void {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw err('EXTERNAL_TABLE_BAD_SETTING', {
      table,
      setting: 'endpoint',
      detail: 'must be an http:// or https:// address (e.g. http://127.0.0.1:9000/bucket)',
    });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw err('EXTERNAL_TABLE_BAD_SETTING', {
      table,
      setting: 'endpoint',
      detail: 'must use http:// or https://',
    });
  if (url.username || url.password || url.search || url.hash)
    throw err('EXTERNAL_TABLE_BAD_SETTING', {
      table,
      setting: 'endpoint',
      detail:
        'must not carry credentials, a query or a fragment (give keys as access_key_id / secret_access_key)',
    });
}

/** write_to: a key template; `{_partition_id}` is its only placeholder, and it names no glob. */
function checkWriteTemplate(table: string, template: string): void {
  const rest = template.replaceAll('{_partition_id}', '');
  if (/[{}*?]/.test(rest))
    throw err('EXTERNAL_TABLE_BAD_SETTING', {
      table,
      setting: 'write_to',
      detail:
        "is a key template: its only placeholder is {_partition_id}, and it may not hold '*', '?', '{' or '}'",
    });
  if (template.startsWith('/') || template.endsWith('/'))
    throw err('EXTERNAL_TABLE_BAD_SETTING', {
      table,
      setting: 'write_to',
      detail: "must be an object key (no leading or trailing '/')",
    });
}
