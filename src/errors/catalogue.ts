/**
 * The one catalogue of the errors Tributary itself raises. Every entry has a stable name, a numeric
 * code, an HTTP status, the subsystem that raises it and a message template. `docs/errors.md` lists
 * the same entries; `test/unit/error-catalogue.test.ts` fails when the two drift apart.
 *
 * Codes below 2000 are ClickHouse/Proton engine codes, used where Tributary raises the error the
 * engine would raise for the same SQL (so clients that match on `code` see what Proton sends).
 * Codes 2000-2999 are Tributary's own.
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
  UNKNOWN_FUNCTION: { code: 46, status: 400, system: 'timeplusd', message: 'Unknown function {name}{hint}' },
  UNKNOWN_IDENTIFIER: {
    code: 47,
    status: 400,
    system: 'timeplusd',
    message: 'Unknown identifier {name}{hint}',
  },
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
  NOT_IMPLEMENTED: { code: 48, status: 400, system: 'timeplusd', message: '{detail}' },
  INCORRECT_QUERY: { code: 80, status: 400, system: 'timeplusd', message: '{detail}' },
  ILLEGAL_COLUMN: { code: 44, status: 400, system: 'timeplusd', message: '{detail}' },
  UNEXPECTED_EXPRESSION: { code: 183, status: 400, system: 'timeplusd', message: '{detail}' },
  QUERY_CANCELED: { code: 394, status: 499, system: 'timeplusd', message: 'Query was canceled' },
  QUERY_TIMEOUT: {
    code: 159,
    status: 408,
    system: 'timeplusd',
    message: 'Query exceeded its timeout of {timeout_ms} ms',
  },

  // --- authentication and access (20xx) ---
  AUTH_REQUIRED: { code: 2001, status: 401, system: 'appserver', message: 'Authentication required' },
  AUTH_FAILED: {
    code: 2002,
    status: 401,
    system: 'appserver',
    message: 'Invalid username, password or API key',
  },
  FORBIDDEN_READ_ONLY: {
    code: 2003,
    status: 403,
    system: 'appserver',
    message: 'User {user} has role read_only and may not {action}',
  },
  USER_NOT_FOUND: { code: 2004, status: 404, system: 'appserver', message: 'User {name} does not exist' },
  USER_ALREADY_EXISTS: {
    code: 2005,
    status: 409,
    system: 'appserver',
    message: 'User {name} already exists',
  },
  LAST_ADMIN: {
    code: 2006,
    status: 409,
    system: 'appserver',
    message: 'User {name} is the last admin and cannot be {action}',
  },

  // --- requests (21xx) ---
  INVALID_REQUEST: { code: 2101, status: 400, system: 'appserver', message: 'Invalid request: {detail}' },
  INVALID_FIELD: { code: 2102, status: 400, system: 'appserver', message: 'Invalid field {field}: {detail}' },
  ROUTE_NOT_FOUND: { code: 2103, status: 404, system: 'appserver', message: 'No route {method} {url}' },
  BODY_TOO_LARGE: {
    code: 2104,
    status: 413,
    system: 'appserver',
    message: 'Request body is larger than {limit} bytes',
  },
  UNSUPPORTED_MEDIA_TYPE: {
    code: 2105,
    status: 415,
    system: 'appserver',
    message: 'Unsupported Content-Type {type}',
  },

  // --- resources (22xx) ---
  RESOURCE_NOT_FOUND: {
    code: 2201,
    status: 404,
    system: 'appserver',
    message: '{kind} {name} does not exist',
  },
  RESOURCE_ALREADY_EXISTS: {
    code: 2202,
    status: 409,
    system: 'appserver',
    message: '{kind} {name} already exists',
  },
  RESOURCE_IN_USE: {
    code: 2203,
    status: 409,
    system: 'appserver',
    message: '{kind} {name} is used by {users}',
  },

  // --- ingest (23xx) ---
  INGEST_MALFORMED: {
    code: 2301,
    status: 400,
    system: 'appserver',
    message: 'Malformed ingest body: {detail}',
  },
  INGEST_UNKNOWN_COLUMN: {
    code: 2302,
    status: 400,
    system: 'appserver',
    message: 'Unknown column {column} for stream {stream}',
  },
  INGEST_BAD_VALUE: {
    code: 2303,
    status: 400,
    system: 'appserver',
    message: 'Row {row}, column {column}: {detail}',
  },
  INGEST_MISSING_COLUMN: {
    code: 2304,
    status: 400,
    system: 'appserver',
    message: 'Row {row}: required column {column} is missing',
  },
  INGEST_READ_ONLY_COLUMN: {
    code: 2305,
    status: 400,
    system: 'appserver',
    message: 'Column {column} of stream {stream} cannot be written ({detail})',
  },

  // --- queries (24xx) ---
  QUERY_NOT_FOUND: { code: 2401, status: 404, system: 'appserver', message: 'Query {id} does not exist' },
  QUERY_STILL_RUNNING: {
    code: 2402,
    status: 409,
    system: 'appserver',
    message: 'Query {id} is running; cancel it before deleting it',
  },
  WRONG_QUERY_TYPE: { code: 2403, status: 400, system: 'appserver', message: '{detail}' },

  // --- inputs, sources, sinks (26xx) ---
  INPUT_PORT_IN_USE: {
    code: 2601,
    status: 409,
    system: 'connector',
    message: 'Cannot listen on {host}:{port}: {detail}',
  },
  INPUT_BAD_TARGET: { code: 2602, status: 400, system: 'connector', message: '{detail}' },

  // --- engine and server (29xx) ---
  ENGINE_UNAVAILABLE: {
    code: 2901,
    status: 503,
    system: 'timeplusd',
    message: 'The engine is unavailable: {detail}',
  },
  ENGINE_ERROR: { code: 2902, status: 500, system: 'timeplusd', message: '{detail}' },
  INTERNAL: { code: 2999, status: 500, system: 'appserver', message: 'Internal error: {detail}' },
} as const satisfies Record<string, ErrorEntry>;

export type ErrorName = keyof typeof ERRORS;
