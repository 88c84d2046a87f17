import { distance } from 'fastest-levenshtein';
import {
  AGGREGATE,
  AGGREGATE_COMBINATORS,
  CLICKHOUSE_FUNCTIONS,
  TABLE_FUNCTIONS,
} from './clickhouse-functions.generated.ts';
import {
  CLICKHOUSE_TO_PROTON,
  PROTON_RENAMES,
  PROTON_SPECIAL_AGGREGATES,
  PROTON_SPECIAL_FUNCTIONS,
  STREAMING_ONLY_FUNCTIONS,
  STREAMING_TABLE_FUNCTIONS,
} from './function-exceptions.ts';
import { normalizeName, toSnakeCase } from './snake-case.ts';

/**
 * The function catalogue: ClickHouse names from the generated engine dump, indexed by their
 * normalised form (lower case, no underscores), plus Proton's exceptions. Pure data, built once.
 */
interface Entry {
  readonly name: string;
  readonly aggregate: boolean;
  /** The canonical name if this is an alias. */
  readonly aliasTo: string;
}

const BY_NAME = new Map<string, Entry>();
const BY_NORMAL = new Map<string, Entry>();

function better(a: Entry, b: Entry): Entry {
  // Prefer canonical names over aliases, then names without a leading underscore, then mixed case.
  if ((a.aliasTo === '') !== (b.aliasTo === '')) return a.aliasTo === '' ? a : b;
  if (a.name.startsWith('_') !== b.name.startsWith('_')) return a.name.startsWith('_') ? b : a;
  if (/[a-z][A-Z]/.test(a.name) !== /[a-z][A-Z]/.test(b.name)) return /[a-z][A-Z]/.test(a.name) ? a : b;
  return a.name < b.name ? a : b;
}

for (const [name, flags, aliasTo] of CLICKHOUSE_FUNCTIONS) {
  const entry: Entry = { name, aggregate: (flags & AGGREGATE) !== 0, aliasTo };
  BY_NAME.set(name, entry);
  const key = normalizeName(name);
  const prev = BY_NORMAL.get(key);
  BY_NORMAL.set(key, prev ? better(prev, entry) : entry);
}

/** Combinators by normalised suffix, longest first (`simplestate` before `state`). */
const COMBINATORS = [...AGGREGATE_COMBINATORS]
  .map((c) => ({ name: c, key: normalizeName(c), snake: toSnakeCase(c) }))
  .sort((a, b) => b.key.length - a.key.length);

const RENAMES = new Map(Object.entries(PROTON_RENAMES));
const TO_PROTON = new Map(Object.entries(CLICKHOUSE_TO_PROTON));

const TABLE_FUNCTION_BY_NORMAL = new Map(TABLE_FUNCTIONS.map((t) => [normalizeName(t), t]));

/** A Proton function name resolved to the engine. */
export interface ResolvedFunction {
  /** The ClickHouse function name, including combinator suffixes (`uniqExactIf`). */
  readonly clickhouse: string;
  readonly aggregate: boolean;
  /** The base aggregate and the combinators applied to it, outermost last (`uniqExact`, ['If']). */
  readonly base: string;
  readonly combinators: readonly string[];
}

/** Look up a name without combinators: Proton exceptions first, then the normalised engine name. */
function lookupPlain(name: string): Entry | undefined {
  const renamed = RENAMES.get(name.toLowerCase());
  if (renamed !== undefined) return BY_NAME.get(renamed) ?? { name: renamed, aggregate: false, aliasTo: '' };
  const exact = BY_NAME.get(name);
  if (exact && exact.aliasTo === '') return exact;
  return BY_NORMAL.get(normalizeName(name)) ?? exact;
}

/**
 * Resolve a Proton function name (any case, snake_case or the ClickHouse spelling) to the engine's
 * function, with aggregate combinators split off (`sum_distinct_if` -> sum + Distinct + If).
 * Returns undefined for unknown names. Streaming-only and special names are not resolved here.
 */
export function resolveFunctionName(name: string): ResolvedFunction | undefined {
  const direct = lookupPlain(name);
  if (direct)
    return { clickhouse: direct.name, aggregate: direct.aggregate, base: direct.name, combinators: [] };
  // Strip a combinator suffix: at an underscore when written snake_case, else by normalised suffix.
  const lower = name.toLowerCase();
  const key = normalizeName(name);
  for (const c of COMBINATORS) {
    let baseName: string | undefined;
    if (lower.endsWith(`_${c.key}`) || lower.endsWith(`_${c.snake}`)) {
      const suffix = lower.endsWith(`_${c.key}`) ? c.key : c.snake;
      baseName = name.slice(0, name.length - suffix.length - 1);
    } else if (!name.includes('_') && key.endsWith(c.key) && key.length > c.key.length) {
      baseName = name.slice(0, name.length - c.name.length);
      if (normalizeName(baseName) + c.key !== key) continue;
    }
    if (!baseName) continue;
    const base = resolveFunctionName(baseName) ?? resolveSpecialBase(baseName);
    if (base?.aggregate) {
      return {
        clickhouse: base.clickhouse + c.name,
        aggregate: true,
        base: base.base,
        combinators: [...base.combinators, c.name],
      };
    }
  }
  return undefined;
}

/** Special Proton aggregates (p90, top_k, ...) as bases of combinators: `top_k_if`. */
function resolveSpecialBase(name: string): ResolvedFunction | undefined {
  const lower = name.toLowerCase();
  if (!PROTON_SPECIAL_AGGREGATES.has(lower)) return undefined;
  return { clickhouse: lower, aggregate: true, base: lower, combinators: [] };
}

/** Is `name` (Proton spelling) an aggregate function, including combinator forms and Proton specials? */
export function isAggregateName(name: string): boolean {
  const lower = name.toLowerCase();
  if (PROTON_SPECIAL_AGGREGATES.has(lower)) return true;
  if (STREAMING_ONLY_FUNCTIONS.has(lower)) return false;
  return resolveFunctionName(name)?.aggregate ?? false;
}

export function isStreamingOnlyFunction(name: string): boolean {
  return STREAMING_ONLY_FUNCTIONS.has(name.toLowerCase());
}

export function isSpecialFunction(name: string): boolean {
  const lower = name.toLowerCase();
  return PROTON_SPECIAL_AGGREGATES.has(lower) || PROTON_SPECIAL_FUNCTIONS.has(lower);
}

/** The engine's table function for a name in FROM (`numbers`, `generate_random` -> generateRandom). */
export function resolveTableFunctionName(name: string): string | undefined {
  return TABLE_FUNCTION_BY_NORMAL.get(normalizeName(name));
}

export function isStreamingTableFunction(name: string): boolean {
  return STREAMING_TABLE_FUNCTIONS.has(name.toLowerCase());
}

/** The Proton spelling of a ClickHouse function name (result headers, messages). */
export function toProtonFunctionName(clickhouse: string): string {
  const exception = TO_PROTON.get(clickhouse);
  if (exception !== undefined) return exception;
  // Combinator forms: uniqExactIf -> unique_exact_if.
  for (const c of COMBINATORS) {
    if (clickhouse.endsWith(c.name) && clickhouse.length > c.name.length) {
      const base = clickhouse.slice(0, -c.name.length);
      if (BY_NAME.get(base)?.aggregate) return `${toProtonFunctionName(base)}_${c.snake}`;
    }
  }
  return toSnakeCase(clickhouse);
}

let protonNames: string[] | undefined;

/** Every Proton function name Tributary knows (for suggestions and documentation). */
export function protonFunctionNames(): readonly string[] {
  if (!protonNames) {
    const set = new Set<string>();
    for (const e of BY_NAME.values()) {
      if (e.name.startsWith('_')) continue;
      set.add(toProtonFunctionName(e.name));
    }
    for (const k of Object.keys(PROTON_RENAMES)) if (!k.startsWith('_')) set.add(k);
    for (const k of [
      ...STREAMING_ONLY_FUNCTIONS,
      ...PROTON_SPECIAL_AGGREGATES,
      ...PROTON_SPECIAL_FUNCTIONS,
      ...STREAMING_TABLE_FUNCTIONS,
    ])
      set.add(k);
    protonNames = [...set].sort();
  }
  return protonNames;
}

/** The known Proton function name nearest to `name` (edit distance), if reasonably near. */
export function suggestFunctionName(name: string): string | undefined {
  const lower = name.toLowerCase();
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of protonFunctionNames()) {
    const d = distance(lower, candidate.toLowerCase());
    if (d < bestDistance) {
      bestDistance = d;
      best = candidate;
    }
  }
  return best !== undefined && bestDistance <= Math.max(1, Math.floor(lower.length / 4)) ? best : undefined;
}
