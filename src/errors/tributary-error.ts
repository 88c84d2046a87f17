import { ERRORS, type ErrorName, type ErrorSystem } from './catalogue.ts';

export type ErrorParams = Record<string, string | number | undefined>;

/** The JSON body of every error response: `{code, message, system}`. */
export interface ErrorBody {
  code: number;
  message: string;
  system: ErrorSystem;
}

export interface ErrorShape {
  /** Catalogue name, or the engine's own error name (e.g. `UNKNOWN_TABLE`) for engine errors. */
  errorName: string;
  code: number;
  status: number;
  system: ErrorSystem;
  message: string;
  params?: ErrorParams;
}

function fill(template: string, params: ErrorParams): string {
  return template.replace(/\{(\w+)\}/g, (_, key: string) => {
    const v = params[key];
    return v === undefined ? '' : String(v);
  });
}

/**
 * An error as data: a stable name and numeric code, an HTTP status, the raising subsystem and a
 * message. Tributary's own errors come from the catalogue (`err()`); engine errors keep the
 * engine's code and name (`engineError()` in `src/engine/engine-error.ts`).
 */
export class TributaryError extends Error {
  readonly errorName: string;
  readonly code: number;
  readonly status: number;
  readonly system: ErrorSystem;
  readonly params: ErrorParams;

  constructor(shape: ErrorShape, options?: { cause?: unknown }) {
    super(shape.message, options);
    this.name = 'TributaryError';
    this.errorName = shape.errorName;
    this.code = shape.code;
    this.status = shape.status;
    this.system = shape.system;
    this.params = shape.params ?? {};
  }

  toBody(): ErrorBody {
    return { code: this.code, message: this.message, system: this.system };
  }
}

/** A catalogued error: `err('UNKNOWN_STREAM', {name: 'clicks'})`. */
export function err(name: ErrorName, params: ErrorParams = {}, cause?: unknown): TributaryError {
  const entry = ERRORS[name];
  return new TributaryError(
    {
      errorName: name,
      code: entry.code,
      status: entry.status,
      system: entry.system,
      message: fill(entry.message, params),
      params,
    },
    cause === undefined ? undefined : { cause },
  );
}

export function isTributaryError(e: unknown): e is TributaryError {
  return e instanceof TributaryError;
}

/** Any thrown value as a TributaryError (unknown failures become INTERNAL). */
export function toTributaryError(e: unknown): TributaryError {
  if (e instanceof TributaryError) return e;
  const message = e instanceof Error ? e.message : String(e);
  return err('INTERNAL', { detail: message }, e);
}
