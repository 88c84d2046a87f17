import { SPECIAL_BASES } from '../names/function-calls.ts';
import {
  isSpecialFunction,
  isStreamingOnlyFunction,
  resolveFunctionName,
  resolveTableFunctionName,
} from '../names/function-catalog.ts';
import { REDEFINED_JSON_FUNCTIONS } from '../names/json-functions.ts';
import {
  MAPPED_PROTON_ONLY,
  NOT_FUNCTION_NAMES,
  UNSUPPORTED_PROTON_FUNCTIONS,
} from '../names/proton-only-functions.ts';
import { lookupTypeName } from '../types/proton-types.ts';
import { isDictionaryFunction } from './dictionary-calls.ts';
import { ALLOWED_TABLE_FUNCTIONS, isDeniedFunction } from './engine-allow-list.ts';

/**
 * Whether Tributary supports one name of Proton's function list, and how: the one classification
 * that test/unit/proton-function-list.test.ts walks over the whole list and that
 * scripts/generate-function-table.ts prints into docs/sql-reference.md.
 */
export interface ProtonFunctionStatus {
  readonly supported: boolean;
  /** `engine`, `mapped`, `streaming`, `table function`, `type`, `refused`, `not a function`. */
  readonly kind: string;
  /** The engine function it runs as, or why it is refused, or how it is mapped. */
  readonly note: string;
}

const STREAMING_NOTE =
  'streaming planner in streaming queries; its historical meaning in historical ones (see above)';

export function protonFunctionStatus(name: string): ProtonFunctionStatus | undefined {
  const lower = name.toLowerCase();
  if (REDEFINED_JSON_FUNCTIONS.includes(lower))
    return { supported: true, kind: 'mapped', note: "Proton's meaning (see JSON in strings)" };
  // In the order mapFunctionCall (function-calls.ts) decides: streaming functions, then the names
  // Tributary maps, then the engine's.
  if (isStreamingOnlyFunction(lower))
    return lower === 'emit_version'
      ? { supported: true, kind: 'streaming', note: 'streaming queries only' }
      : { supported: true, kind: 'streaming', note: STREAMING_NOTE };
  // Mapped by Tributary before any engine name is looked up (function-calls.ts).
  if (SPECIAL_BASES.includes(lower))
    return { supported: true, kind: 'mapped', note: "Proton's arguments and meaning" };
  const resolved = resolveFunctionName(name);
  if (resolved) {
    if (isDictionaryFunction(resolved.clickhouse))
      return {
        supported: true,
        kind: 'engine',
        note: `${resolved.clickhouse}, over dictionaries made with CREATE DICTIONARY (see Dictionaries)`,
      };
    if (isDeniedFunction(resolved.clickhouse))
      return {
        supported: false,
        kind: 'refused',
        note: 'user SQL may not reach files, the network or the server configuration (docs/operations.md)',
      };
    return { supported: true, kind: 'engine', note: resolved.clickhouse };
  }
  if (isSpecialFunction(name)) return { supported: true, kind: 'mapped', note: "Proton's aggregate, mapped" };
  const table = resolveTableFunctionName(name);
  if (table) {
    return ALLOWED_TABLE_FUNCTIONS.has(table)
      ? { supported: true, kind: 'table function', note: table }
      : {
          supported: false,
          kind: 'refused',
          note: 'a table function that reads files, URLs or other servers (docs/operations.md)',
        };
  }
  if (MAPPED_PROTON_ONLY.has(name)) return { supported: true, kind: 'mapped', note: "Proton's meaning" };
  if (lookupTypeName(name)) return { supported: true, kind: 'type', note: 'a type name, in casts' };
  const reason = UNSUPPORTED_PROTON_FUNCTIONS.get(name);
  if (reason !== undefined) return { supported: false, kind: 'refused', note: reason };
  const notFunction = NOT_FUNCTION_NAMES.get(name);
  if (notFunction !== undefined) return { supported: false, kind: 'not a function', note: notFunction };
  return undefined;
}

/** The Markdown table of a whole function list: name, supported, how (or why not). */
export function protonFunctionTable(names: readonly string[]): string {
  const esc = (s: string) => s.replace(/\|/g, '\\|');
  const lines = ['| Function | Supported | How, or why not |', '|---|---|---|'];
  for (const n of names) {
    const s = protonFunctionStatus(n);
    const how = s ? `${s.kind}: ${s.note}` : 'unknown';
    lines.push(`| \`${esc(n)}\` | ${s?.supported ? 'yes' : 'no'} | ${esc(how)} |`);
  }
  return lines.join('\n');
}
