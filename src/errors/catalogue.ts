/**
 * The one catalogue of the errors Tributary itself raises. Every entry has a stable name, a numeric
 * code, an HTTP status, the subsystem that raises it and a message template. `docs/errors.md` lists
 * the same entries; `test/unit/error-catalogue.test.ts` fails when the two drift apart.
 *
 * Codes below 3000 are ClickHouse/Proton engine codes (Proton's streaming codes are 2002-2533),
 * used where Tributary raises the error the engine would raise for the same SQL, so clients that
 * match on `code` see what Proton sends. Codes from 10000 are Tributary's own.
 */
export type ErrorSystem = 'timeplusd' | 'appserver' | 'connector';

export interface ErrorEntry {
  readonly code: number;
  readonly status: number;
  readonly system: ErrorSystem;
  /** Message template; `{name}` placeholders are filled from the error's params. */
  readonly message: string;
}

export const ERRORS = {
  // --- SQL front end (engine-compatible codes) ---
  SQL_SYNTAX_ERROR: {
    code: 62,
    status: 400,
    system: 'timeplusd',
    message: 'Syntax error at line {line}, column {column}: {detail}',
  },
  FIELD_SYNTAX_ERROR: {
    code: 62,
    status: 400,
    system: 'timeplusd',
    message: 'Syntax error in {field} at line {line}, column {column}: {detail}',
  },
  UNKNOWN_FUNCTION: { code: 46, status: 400, system: 'timeplusd', message: 'Unknown function {name}{hint}' },
  ENGINE_ACCESS_DENIED: {
    code: 497,
    status: 403,
    system: 'timeplusd',
    message: 'Access denied: the {what} {name}{position} is not allowed in SQL: {reason}',
  },
  SETTING_NOT_ALLOWED: {
    code: 164,
    status: 403,
    system: 'timeplusd',
    message: 'Setting {name}{position} {reason}',
  },
  SQL_TOO_DEEP: {
    code: 306,
    status: 400,
    system: 'timeplusd',
    message: 'Maximum SQL depth exceeded: {detail}',
  },
  UNKNOWN_IDENTIFIER: {
    code: 47,
    status: 400,
    system: 'timeplusd',
    message: 'Unknown identifier {name}{hint}',
  },
  DUPLICATE_COLUMN: {
    code: 15,
    status: 400,
    system: 'timeplusd',
    message: 'Column {name} specified more than once',
  },
  NO_SUCH_COLUMN_IN_TABLE: {
    code: 16,
    status: 400,
    system: 'timeplusd',
    message: 'There is no column {name} in stream {stream}',
  },
  UNKNOWN_SETTING: { code: 115, status: 400, system: 'timeplusd', message: 'Unknown setting {name}{hint}' },
  UNKNOWN_TYPE: { code: 50, status: 400, system: 'timeplusd', message: 'Unknown data type {name}{hint}' },
  UNKNOWN_STREAM: { code: 60, status: 404, system: 'timeplusd', message: "Stream {name} doesn't exist" },
  UNKNOWN_DATABASE: { code: 81, status: 404, system: 'timeplusd', message: "Database {name} doesn't exist" },
  STREAM_ALREADY_EXISTS: {
    code: 57,
    status: 409,
    system: 'timeplusd',
    message: 'Stream {name} already exists',
  },
  DATABASE_ALREADY_EXISTS: {
    code: 82,
    status: 409,
    system: 'timeplusd',
    message: 'Database {name} already exists',
  },
  BAD_ARGUMENTS: { code: 36, status: 400, system: 'timeplusd', message: '{detail}' },
  INVALID_SETTING_VALUE: {
    code: 471,
    status: 400,
    system: 'timeplusd',
    message: 'Invalid value of setting {name}: {detail}',
  },
  NOT_IMPLEMENTED: { code: 48, status: 400, system: 'timeplusd', message: '{detail}' },
  INVALID_RANGE_JOIN: { code: 62, status: 400, system: 'timeplusd', message: '{detail}' },
  INVALID_JOIN_ON_EXPRESSION: { code: 403, status: 400, system: 'timeplusd', message: '{detail}' },
  BAD_TYPE_OF_FIELD: { code: 169, status: 400, system: 'timeplusd', message: '{detail}' },
  INCORRECT_QUERY: { code: 80, status: 400, system: 'timeplusd', message: '{detail}' },
  ILLEGAL_COLUMN: { code: 44, status: 400, system: 'timeplusd', message: '{detail}' },
  TYPE_MISMATCH: { code: 53, status: 400, system: 'timeplusd', message: '{detail}' },
  UNEXPECTED_EXPRESSION: { code: 183, status: 400, system: 'timeplusd', message: '{detail}' },
  ILLEGAL_TYPE_OF_ARGUMENT: { code: 43, status: 400, system: 'timeplusd', message: '{detail}' },
  NOT_AN_AGGREGATE: { code: 215, status: 400, system: 'timeplusd', message: '{detail}' },
  WINDOW_COLUMN_NOT_REFERENCED: { code: 2002, status: 400, system: 'timeplusd', message: '{detail}' },
  MISSING_GROUP_BY: { code: 2522, status: 400, system: 'timeplusd', message: '{detail}' },
  INVALID_EMIT_MODE: { code: 2523, status: 400, system: 'timeplusd', message: '{detail}' },
  MISSING_SESSION_KEY: { code: 2524, status: 400, system: 'timeplusd', message: '{detail}' },
  QUERY_CANCELED: { code: 394, status: 499, system: 'timeplusd', message: 'Query was canceled' },
  QUERY_TIMEOUT: {
    code: 159,
    status: 408,
    system: 'timeplusd',
    message: 'Query exceeded its timeout of {timeout_ms} ms',
  },
  CHECKPOINT_NOT_FOUND: {
    code: 2003,
    status: 404,
    system: 'timeplusd',
    message: "Can't find query={id}: no subscribed query with this id has a checkpoint",
  },
  QUERY_ALREADY_RUNNING: {
    code: 216,
    status: 409,
    system: 'timeplusd',
    message: 'Query {id} is already running',
  },
  RECOVER_UNSUBSCRIBED: {
    code: 394,
    status: 410,
    system: 'timeplusd',
    message:
      'Failed to recover query={id} because it was unsubscribed and its checkpoints are scheduled to be deleted',
  },
  RECOVER_CHECKPOINT_FAILED: {
    code: 2528,
    status: 500,
    system: 'timeplusd',
    message: 'Cannot recover query={id} from its checkpoint: {detail}',
  },
  HAVE_DEPENDENT_OBJECTS: {
    code: 630,
    status: 409,
    system: 'timeplusd',
    message: 'Cannot drop or rename {name}, because some views depend on it: {dependents}',
  },
  // --- dictionaries (engine-compatible codes; see src/dictionaries) ---
  UNKNOWN_DICTIONARY: {
    code: 36,
    status: 404,
    system: 'timeplusd',
    message: "Dictionary {name} doesn't exist{position}",
  },
  DICTIONARY_ALREADY_EXISTS: {
    code: 446,
    status: 409,
    system: 'timeplusd',
    message: 'Dictionary {name} already exists',
  },
  INVALID_DICTIONARY: {
    code: 36,
    status: 400,
    system: 'timeplusd',
    message: 'Invalid dictionary {name}: {detail}',
  },
  UNKNOWN_DICTIONARY_LAYOUT: {
    code: 137,
    status: 400,
    system: 'timeplusd',
    message: 'Dictionary {name}: unknown layout {layout}{position}; use one of {layouts}',
  },
  DICTIONARY_PATH_DENIED: {
    code: 291,
    status: 403,
    system: 'timeplusd',
    message: 'Dictionary {name}: the file {path} is not inside the user files directory ({dir})',
  },
  DICTIONARY_LOAD_FAILED: {
    code: 11601,
    status: 400,
    system: 'timeplusd',
    message: 'Dictionary {name} could not load from its source: {detail}',
  },
  DICTIONARY_SOURCE_IN_USE: {
    code: 630,
    status: 409,
    system: 'timeplusd',
    message: 'Cannot drop or rename {name}, because dictionaries read it: {dependents}',
  },

  // --- authentication and access (100xx) ---
  AUTH_REQUIRED: { code: 10001, status: 401, system: 'appserver', message: 'Authentication required' },
  AUTH_FAILED: {
    code: 10002,
    status: 401,
    system: 'appserver',
    message: 'Invalid username, password or API key',
  },
  FORBIDDEN_READ_ONLY: {
    code: 10003,
    status: 403,
    system: 'appserver',
    message: 'User {user} has role read_only and may not {action}',
  },
  USER_NOT_FOUND: { code: 10004, status: 404, system: 'appserver', message: 'User {name} does not exist' },
  USER_ALREADY_EXISTS: {
    code: 10005,
    status: 409,
    system: 'appserver',
    message: 'User {name} already exists',
  },
  LAST_ADMIN: {
    code: 10006,
    status: 409,
    system: 'appserver',
    message: 'User {name} is the last admin and cannot be {action}',
  },
  TOO_MANY_AUTH_FAILURES: {
    code: 10007,
    status: 429,
    system: 'appserver',
    message: 'Too many failed authentication attempts; retry in {retry_after} s',
  },
  AUTH_BUSY: {
    code: 10008,
    status: 503,
    system: 'appserver',
    message: 'Too many password checks are waiting; retry in {retry_after} s',
  },

  // --- requests (101xx) ---
  INVALID_REQUEST: { code: 10101, status: 400, system: 'appserver', message: 'Invalid request: {detail}' },
  INVALID_FIELD: {
    code: 10102,
    status: 400,
    system: 'appserver',
    message: 'Invalid field {field}: {detail}',
  },
  ROUTE_NOT_FOUND: { code: 10103, status: 404, system: 'appserver', message: 'No route {method} {url}' },
  BODY_TOO_LARGE: {
    code: 10104,
    status: 413,
    system: 'appserver',
    message: 'Request body is larger than the limit of {limit} bytes; send the data in smaller requests',
  },
  UNSUPPORTED_MEDIA_TYPE: {
    code: 10105,
    status: 415,
    system: 'appserver',
    message: 'Unsupported Content-Type {type}',
  },
  DECODED_BODY_TOO_LARGE: {
    code: 10106,
    status: 413,
    system: 'appserver',
    message:
      'Request body decoded from {encoding} is larger than the limit of {limit} bytes; send the data in smaller requests',
  },
  HEADERS_TOO_LARGE: {
    code: 10107,
    status: 431,
    system: 'appserver',
    message: 'Request line and headers are larger than the limit of {limit} bytes',
  },
  URL_TOO_LONG: {
    code: 10108,
    status: 414,
    system: 'appserver',
    message: 'Request URL is too long: {detail}',
  },
  REQUEST_TIMEOUT: {
    code: 10109,
    status: 408,
    system: 'appserver',
    message: 'The request was not received completely in time',
  },
  METHOD_NOT_ALLOWED: {
    code: 10110,
    status: 405,
    system: 'appserver',
    message: 'Method {method} is not allowed on {url}; allowed: {allow}',
  },

  // --- resources (102xx) ---
  RESOURCE_NOT_FOUND: {
    code: 10201,
    status: 404,
    system: 'appserver',
    message: '{kind} {name} does not exist',
  },
  RESOURCE_ALREADY_EXISTS: {
    code: 10202,
    status: 409,
    system: 'appserver',
    message: '{kind} {name} already exists',
  },
  RESOURCE_IN_USE: {
    code: 10203,
    status: 409,
    system: 'appserver',
    message: '{kind} {name} is used by {users}',
  },

  // --- ingest (103xx) ---
  INGEST_MALFORMED: {
    code: 10301,
    status: 400,
    system: 'appserver',
    message: 'Malformed ingest body: {detail}',
  },
  INGEST_UNKNOWN_COLUMN: {
    code: 10302,
    status: 400,
    system: 'appserver',
    message: 'Unknown column {column} for stream {stream}{at}',
  },
  INGEST_BAD_VALUE: {
    code: 10303,
    status: 400,
    system: 'appserver',
    message: 'Row {row}, column {column}: {detail}',
  },
  INGEST_MISSING_COLUMN: {
    code: 10304,
    status: 400,
    system: 'appserver',
    message: 'Row {row}: required column {column} is missing',
  },
  INGEST_READ_ONLY_COLUMN: {
    code: 10305,
    status: 400,
    system: 'appserver',
    message: 'Column {column} of stream {stream} cannot be written ({detail})',
  },
  INGEST_STREAM_FAILED: {
    code: 10306,
    status: 503,
    system: 'appserver',
    message: 'Stream {stream} cannot accept writes: {detail}',
  },

  // --- queries (104xx) ---
  QUERY_NOT_FOUND: { code: 10401, status: 404, system: 'appserver', message: 'Query {id} does not exist' },
  QUERY_STILL_RUNNING: {
    code: 10402,
    status: 409,
    system: 'appserver',
    message: 'Query {id} is running; cancel it before deleting it',
  },
  WRONG_QUERY_TYPE: { code: 10403, status: 400, system: 'appserver', message: '{detail}' },

  // --- inputs, sources, sinks (106xx) ---
  INPUT_PORT_IN_USE: {
    code: 10601,
    status: 409,
    system: 'connector',
    message: 'Cannot listen on {host}:{port}: {detail}',
  },
  INPUT_BAD_TARGET: { code: 10602, status: 400, system: 'connector', message: '{detail}' },
  INPUT_UNKNOWN_TYPE: {
    code: 10603,
    status: 400,
    system: 'connector',
    message: 'Input {input}: unknown type {type}; supported types: {supported}',
  },
  INPUT_MISSING_SETTING: {
    code: 10604,
    status: 400,
    system: 'connector',
    message: 'Input {input}: setting {setting} is required',
  },
  INPUT_BAD_SETTING: {
    code: 10605,
    status: 400,
    system: 'connector',
    message: 'Input {input}: setting {setting} {detail}',
  },
  INPUT_UNKNOWN_SETTING: {
    code: 10606,
    status: 400,
    system: 'connector',
    message: 'Input {input}: unknown setting {setting}{hint}',
  },
  INPUT_LISTEN_FAILED: {
    code: 10607,
    status: 400,
    system: 'connector',
    message: 'Cannot listen on {host}:{port}: {detail}',
  },

  // --- licenses (107xx) ---
  LICENSE_UNREADABLE: {
    code: 10701,
    status: 400,
    system: 'appserver',
    message: 'The license file cannot be decrypted: {detail}',
  },
  LICENSE_SIGNATURE_INVALID: {
    code: 10702,
    status: 400,
    system: 'appserver',
    message: 'The license is not signed by any of the configured license public keys',
  },
  LICENSE_EXPIRED: {
    code: 10703,
    status: 400,
    system: 'appserver',
    message: 'The license expired at {expiry}',
  },
  LICENSE_NO_PUBLIC_KEYS: {
    code: 10704,
    status: 400,
    system: 'appserver',
    message:
      'No license public keys are configured (TRIBUTARY_LICENSE_PUBLIC_KEYS), so no license can be verified',
  },
  LICENSE_TRIAL_USED: {
    code: 10705,
    status: 409,
    system: 'appserver',
    message: 'A trial license was already started on this server (issued {issued})',
  },
  LICENSE_MALFORMED: {
    code: 10706,
    status: 400,
    system: 'appserver',
    message: 'The license is not a Tributary license: {detail}',
  },

  // --- sources (108xx) ---
  SOURCE_BAD_PROPERTY: {
    code: 10801,
    status: 400,
    system: 'connector',
    message: 'Source property {property}: {detail}',
  },
  SOURCE_RUNNING: {
    code: 10802,
    status: 409,
    system: 'connector',
    message: 'Source {name} is running; stop it before changing it',
  },

  // --- sinks and external streams (1081x) ---
  SINK_BAD_PROPERTY: {
    code: 10811,
    status: 400,
    system: 'connector',
    message: 'Sink property {property}: {detail}',
  },
  EXTERNAL_STREAM_BAD_SETTING: {
    code: 10812,
    status: 400,
    system: 'connector',
    message: 'External stream setting {setting}: {detail}',
  },
  EXTERNAL_STREAM_WRITE_ONLY: {
    code: 10813,
    status: 400,
    system: 'connector',
    message: 'External stream {name} of type {type} can only be written to: {detail}',
  },
  DELIVERY_FAILED: {
    code: 10814,
    status: 502,
    system: 'connector',
    message: 'Delivery to {target} failed: {detail}',
  },
  EXTERNAL_STREAM_PATH_DENIED: {
    code: 10815,
    status: 403,
    system: 'connector',
    message: 'External stream {name}: the directory {path} is not inside the user files directory ({dir})',
  },
  EXTERNAL_STREAM_REMOTE_FAILED: {
    code: 10816,
    status: 502,
    system: 'connector',
    message: 'Stream {stream} of {base}: {detail}',
  },
  // --- user-defined functions (engine-compatible codes, and 111xx) ---
  UDF_BAD_DEFINITION: { code: 36, status: 400, system: 'timeplusd', message: '{detail}' },
  UDF_NAME_TAKEN: {
    code: 609,
    status: 409,
    system: 'timeplusd',
    message: '{name} is a built-in function; a user-defined function cannot take its name',
  },
  UDF_ALREADY_EXISTS: {
    code: 609,
    status: 409,
    system: 'timeplusd',
    message: 'User-defined function {name} already exists',
  },
  UDF_NOT_FOUND: {
    code: 46,
    status: 404,
    system: 'timeplusd',
    message: 'User-defined function {name} does not exist',
  },
  UDF_ARGUMENT_COUNT: {
    code: 42,
    status: 400,
    system: 'timeplusd',
    message: "Number of arguments for function {name} doesn't match: passed {passed}, should be {expected}",
  },
  UDF_ARGUMENT_TYPE: {
    code: 43,
    status: 400,
    system: 'timeplusd',
    message: 'Argument {position} of function {name} must be {expected}, but it is {actual}',
  },
  UDF_EMIT_COUNT: {
    code: 53,
    status: 400,
    system: 'timeplusd',
    message: 'JavaScript aggregate {name}: {detail}',
  },
  UDF_EMIT_IN_HISTORICAL_QUERY: {
    code: 2534,
    status: 400,
    system: 'timeplusd',
    message:
      'JavaScript aggregate {name} declares has_customized_emit: it decides itself when to emit, which only a streaming query can do',
  },
  UDF_JAVASCRIPT_ERROR: {
    code: 2533,
    status: 400,
    system: 'timeplusd',
    message: 'JavaScript function {name} failed: {detail}',
  },
  UDF_AGGREGATE_PROCESS_ERROR: {
    code: 503,
    status: 400,
    system: 'timeplusd',
    message: 'JavaScript aggregate {name} threw in process(): {detail}',
  },
  UDF_BAD_RESULT: {
    code: 43,
    status: 400,
    system: 'timeplusd',
    message: 'JavaScript function {name} {detail}',
  },
  UDF_TIMEOUT: {
    code: 159,
    status: 408,
    system: 'timeplusd',
    message: 'User-defined function {name} timed out: {detail}',
  },
  UDF_MEMORY_LIMIT: {
    code: 241,
    status: 400,
    system: 'timeplusd',
    message: 'User-defined function {name} exceeded its memory limit ({limit} MiB of heap)',
  },
  UDF_REMOTE_ERROR: {
    code: 11101,
    status: 502,
    system: 'timeplusd',
    message: 'Remote function {name} failed: {detail}',
  },
  UDF_FAILED: {
    code: 11102,
    status: 500,
    system: 'timeplusd',
    message: 'User-defined function {name} failed: {detail}',
  },
  // --- external tables and format schemas (111xx) ---
  FORMAT_SCHEMA_UNKNOWN_TYPE: {
    code: 73,
    status: 400,
    system: 'timeplusd',
    message: 'Unknown format {type} (a format schema has TYPE Protobuf or Avro)',
  },
  FORMAT_SCHEMA_UNSUPPORTED_TYPE: {
    code: 2613,
    status: 400,
    system: 'timeplusd',
    message: 'Format {type} has no format schemas: TYPE is Protobuf or Avro',
  },
  FORMAT_SCHEMA_NOT_FOUND: {
    code: 2611,
    status: 404,
    system: 'timeplusd',
    message: 'Format schema {name} does not exist',
  },
  FORMAT_SCHEMA_INCORRECT_AVRO: {
    code: 117,
    status: 400,
    system: 'timeplusd',
    message: 'Format schema {name}: the Avro schema is not JSON: {detail}',
  },
  EXTERNAL_TABLE_MISSING_SETTING: {
    code: 11201,
    status: 400,
    system: 'connector',
    message: 'External table {table}: setting {setting} is required {detail}',
  },
  EXTERNAL_TABLE_BAD_SETTING: {
    code: 11202,
    status: 400,
    system: 'connector',
    message: 'External table {table}: setting {setting} {detail}',
  },
  EXTERNAL_TABLE_UNKNOWN_SETTING: {
    code: 11203,
    status: 400,
    system: 'connector',
    message: 'External table {table}: unknown setting {setting}{suggestion}',
  },
  EXTERNAL_TABLE_READ_ONLY: {
    code: 11204,
    status: 400,
    system: 'connector',
    message:
      'External table {table} has only read_from and is read-only: INSERT needs a write_to template (CREATE it again with write_to)',
  },
  EXTERNAL_TABLE_CREDENTIALS: {
    code: 11205,
    status: 400,
    system: 'connector',
    message: 'External table {table}: credentials cannot be resolved: {detail}',
  },
  FORMAT_SCHEMA_BAD: {
    code: 11206,
    status: 400,
    system: 'timeplusd',
    message: 'Format schema {name}: {detail}',
  },
  EXTERNAL_TABLE_OBJECT_STORE: {
    code: 11207,
    status: 502,
    system: 'connector',
    message: 'External table object store: {detail}',
  },

  // --- engine and server (109xx) ---
  ENGINE_UNAVAILABLE: {
    code: 10901,
    status: 503,
    system: 'timeplusd',
    message: 'The engine is unavailable: {detail}',
  },
  ENGINE_ERROR: { code: 10902, status: 500, system: 'timeplusd', message: '{detail}' },
  INTERNAL: { code: 10999, status: 500, system: 'appserver', message: 'Internal error: {detail}' },
} as const satisfies Record<string, ErrorEntry>;

export type ErrorName = keyof typeof ERRORS;
