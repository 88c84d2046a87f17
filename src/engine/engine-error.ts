import { err, TributaryError } from '../errors/tributary-error.ts';
import { udfFailure } from './udf-failure.ts';

/** HTTP status for an engine error code (default 400: the statement was wrong). */
const STATUS_BY_CODE: Readonly<Record<number, number>> = {
  60: 404, // UNKNOWN_TABLE
  81: 404, // UNKNOWN_DATABASE
  57: 409, // TABLE_ALREADY_EXISTS
  82: 409, // DATABASE_ALREADY_EXISTS
  159: 408, // TIMEOUT_EXCEEDED
  394: 499, // QUERY_WAS_CANCELLED
  241: 500, // MEMORY_LIMIT_EXCEEDED
  1000: 500,
  1001: 500,
  1002: 500,
};

const ENGINE_MESSAGE =
  /^Code: (\d+)\. (?:DB::Exception: )?([\s\S]*?)(?: \(([A-Z_0-9]+)\))?(?: \(version [^)]*\))?\s*$/;

/** Split an engine message `Code: 62. DB::Exception: Syntax error ... (SYNTAX_ERROR)` into its parts. */
export function parseEngineMessage(text: string): { code?: number; name?: string; message: string } {
  const m = ENGINE_MESSAGE.exec(text.trim());
  if (!m) return { message: text.trim() };
  return { code: Number(m[1]), message: (m[2] ?? '').trim(), ...(m[3] ? { name: m[3] } : {}) };
}

/** Turn whatever the engine threw into a TributaryError that keeps the engine's own code. */
export function engineError(e: unknown): TributaryError {
  if (e instanceof TributaryError) return e;
  const raw = e instanceof Error ? e.message : String(e);
  const udf = udfFailure(raw);
  if (udf) return udf;
  const parsed = parseEngineMessage(raw);
  const chCode = (e as { clickhouseCode?: unknown })?.clickhouseCode;
  const code = typeof chCode === 'number' ? chCode : parsed.code;
  if (code === undefined) return err('ENGINE_ERROR', { detail: parsed.message }, e);
  return new TributaryError(
    {
      errorName: parsed.name ?? 'ENGINE',
      code,
      status: STATUS_BY_CODE[code] ?? 400,
      system: 'timeplusd',
      message: parsed.message,
    },
    { cause: e },
  );
}
