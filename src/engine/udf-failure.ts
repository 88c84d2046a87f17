import { err, type TributaryError } from '../errors/tributary-error.ts';

/**
 * A failed user-defined function call, recognised in the engine's message. The function process
 * (src/udf/udf-process.mjs) writes `TRIBUTARY_UDF_ERROR {"kind","name","detail"}` to stderr before
 * it exits and the engine quotes it; a process killed by its heap limit leaves V8's message; a
 * process that never answers leaves the engine's pipe timeout.
 */
const MARKER = /TRIBUTARY_UDF_ERROR (\{.*?\})\s*$/m;
const FAILED = /User defined function '([^']+)' failed/;

/** Heap limit of a function process (MiB): the memory limit of a UDF (src/udf/udf-engine-files.ts). */
export const UDF_HEAP_LIMIT_MB = 256;

const publicName = (engineName: string) => engineName.replace(/^__trb_uda_/, '');

export function udfFailure(message: string): TributaryError | undefined {
  const m = MARKER.exec(message);
  if (m) {
    let parsed: { kind?: string; name?: string; detail?: string };
    try {
      parsed = JSON.parse(m[1] as string);
    } catch {
      parsed = {};
    }
    const name = parsed.name ?? '?';
    const detail = parsed.detail ?? 'failed';
    switch (parsed.kind) {
      case 'throw':
      case 'finalize':
      case 'definition':
        return err('UDF_JAVASCRIPT_ERROR', { name, detail });
      case 'process':
        return err('UDF_AGGREGATE_PROCESS_ERROR', { name, detail });
      case 'result':
        return err('UDF_BAD_RESULT', { name, detail });
      case 'emit_count':
        return err('UDF_EMIT_COUNT', { name, detail });
      case 'timeout':
      case 'remote_timeout':
        return err('UDF_TIMEOUT', { name, detail });
      case 'remote':
        return err('UDF_REMOTE_ERROR', { name, detail });
      default:
        return err('UDF_FAILED', { name, detail });
    }
  }
  const f = FAILED.exec(message);
  if (!f) return undefined;
  const name = publicName(f[1] as string);
  if (/heap limit|heap out of memory|Allocation failed/i.test(message))
    return err('UDF_MEMORY_LIMIT', { name, limit: UDF_HEAP_LIMIT_MB });
  if (/TIMEOUT_EXCEEDED|timeout exceeded/i.test(message))
    return err('UDF_TIMEOUT', { name, detail: 'the function process did not answer in time' });
  const original = /Original error: (?:Code: \d+\. )?(?:DB::Exception: )?([^\n]*)/.exec(message);
  return err('UDF_FAILED', { name, detail: (original?.[1] ?? message).slice(0, 500) });
}
