import { err } from '../../errors/tributary-error.ts';
import type { Expr } from '../ast/expression.ts';
import type { CreateDictionary, DictionaryCall } from '../ast/statement.ts';
import { PREC } from '../printer/print-expression.ts';
import { Layout } from '../printer/sql-text.ts';
import { ClickHousePrinter } from './clickhouse-printer.ts';
import type { TableResolver } from './resolver.ts';

const ONE_LINE = new Layout(false);
const NO_TABLES: TableResolver = { resolve: () => undefined };

/**
 * Layouts the engine may build. The SSD cache layouts are left out: they write files at a path the
 * statement names, a door to the file system that user SQL may not open.
 */
const LAYOUTS: ReadonlySet<string> = new Set([
  'FLAT',
  'HASHED',
  'SPARSE_HASHED',
  'HASHED_ARRAY',
  'COMPLEX_KEY_HASHED',
  'COMPLEX_KEY_SPARSE_HASHED',
  'COMPLEX_KEY_HASHED_ARRAY',
  'RANGE_HASHED',
  'COMPLEX_KEY_RANGE_HASHED',
  'CACHE',
  'COMPLEX_KEY_CACHE',
  'DIRECT',
  'COMPLEX_KEY_DIRECT',
  'IP_TRIE',
  'POLYGON',
  'POLYGON_SIMPLE',
  'POLYGON_INDEX_EACH',
  'POLYGON_INDEX_CELL',
]);

/** Layouts the engine has that Tributary refuses: the SSD caches write files where the statement says. */
const REFUSED_LAYOUTS: ReadonlySet<string> = new Set(['SSD_CACHE', 'COMPLEX_KEY_SSD_CACHE']);

/** The engine's form of a dictionary: the statement with the source Tributary chose for it. */
export interface EngineDictionary {
  /** `db`: the dictionary lives in the engine database of the same name. */
  readonly database: string;
  /** The SOURCE to give the engine (e.g. `CLICKHOUSE(QUERY '...')`), already vetted. */
  readonly source: DictionaryCall;
  /** CREATE OR REPLACE (re-creating at start, OR REPLACE) instead of a plain CREATE. */
  readonly replace: boolean;
}

/** LIFETIME in seconds: `{min, max}` (`LIFETIME(n)` is `{min: 0, max: n}`; 0 never reloads). */
export interface DictionaryLifetime {
  readonly min: number;
  readonly max: number;
}

/** The dictionary's LIFETIME (default 0: loaded once, reloaded only by SYSTEM RELOAD DICTIONARY). */
export function dictionaryLifetime(s: CreateDictionary): DictionaryLifetime {
  if (!s.lifetime) return { min: 0, max: 0 };
  const seconds = (e: Expr | undefined, what: string): number => {
    if (e === undefined) return 0;
    const n = e.kind === 'Number' ? Number(e.text) : Number.NaN;
    if (!Number.isInteger(n) || n < 0)
      throw err('INVALID_DICTIONARY', {
        name: s.target.name,
        detail: `LIFETIME ${what} must be a whole number of seconds (at position ${e.span.start + 1})`,
      });
    return n;
  };
  const min = seconds(s.lifetime.min, 'MIN');
  const max = seconds(s.lifetime.max, 'MAX');
  if (min > max)
    throw err('INVALID_DICTIONARY', { name: s.target.name, detail: 'LIFETIME MIN is greater than MAX' });
  return { min, max };
}

/** Check what the engine would take on trust: a primary key, a source, a known layout. */
export function checkDictionaryShape(s: CreateDictionary): void {
  const name = s.target.name;
  if (!s.columns.length) throw err('INVALID_DICTIONARY', { name, detail: 'it declares no columns' });
  if (!s.primaryKey.length) throw err('INVALID_DICTIONARY', { name, detail: 'PRIMARY KEY is missing' });
  if (!s.source) throw err('INVALID_DICTIONARY', { name, detail: 'SOURCE is missing' });
  const declared = new Set(s.columns.map((c) => c.name));
  for (const k of s.primaryKey) {
    if (k.kind !== 'Identifier' || !declared.has(k.parts.at(-1) as string))
      throw err('INVALID_DICTIONARY', {
        name,
        detail: `the PRIMARY KEY (at position ${k.span.start + 1}) must name declared columns`,
      });
  }
  const layout = s.layout?.name.toUpperCase();
  if (s.layout && layout && REFUSED_LAYOUTS.has(layout))
    throw err('INVALID_DICTIONARY', {
      name,
      detail: `layout ${s.layout.name} (at position ${s.layout.span.start + 1}) writes files at a path of its own; use CACHE or HASHED`,
    });
  if (s.layout && layout && !LAYOUTS.has(layout))
    throw err('UNKNOWN_DICTIONARY_LAYOUT', {
      name,
      layout: s.layout.name,
      position: ` (at position ${s.layout.span.start + 1})`,
      layouts: [...LAYOUTS].join(', '),
    });
  for (const x of s.settings ?? [])
    if (!isDictionarySetting(x.name))
      throw err('INVALID_DICTIONARY', {
        name,
        detail: `setting ${x.name} (at position ${x.span.start + 1}) is not one a dictionary may set; it may set input format settings (format_*, input_format_*, date_time_input_format) and http_max_tries`,
      });
  dictionaryLifetime(s);
}

/** Settings a dictionary's source may run with: how it parses its input, how often HTTP retries. */
function isDictionarySetting(name: string): boolean {
  const n = name.toLowerCase();
  return (
    n.startsWith('format_') ||
    n.startsWith('input_format_') ||
    n === 'date_time_input_format' ||
    n === 'http_max_tries'
  );
}

/**
 * CREATE [OR REPLACE] DICTIONARY in the engine's dialect: column types and DEFAULT/EXPRESSION
 * expressions translated, the name qualified, the vetted source in place of the written one, a
 * layout (HASHED, or COMPLEX_KEY_HASHED for a composite key, when none is written) and a LIFETIME.
 */
export function translateCreateDictionary(s: CreateDictionary, engine: EngineDictionary): string {
  checkDictionaryShape(s);
  const layout: DictionaryCall = s.layout
    ? { ...s.layout, name: s.layout.name.toUpperCase() }
    : {
        kind: 'DictionaryCall',
        name: s.primaryKey.length > 1 ? 'COMPLEX_KEY_HASHED' : 'HASHED',
        args: [],
        span: s.span,
      };
  const { min, max } = dictionaryLifetime(s);
  const statement: CreateDictionary = {
    ...s,
    orReplace: engine.replace,
    ifNotExists: false,
    target: { database: engine.database, name: s.target.name },
    source: engine.source,
    layout,
    lifetime: {
      min: { kind: 'Number', text: String(min), span: s.span },
      max: { kind: 'Number', text: String(max), span: s.span },
    },
  };
  const printer = new ClickHousePrinter({ resolver: NO_TABLES });
  return printer.statement(statement, ONE_LINE);
}

/** An expression of the dictionary's DDL in the engine's dialect (a column's EXPRESSION). */
export function translateDictionaryExpression(e: Expr): string {
  return new ClickHousePrinter({ resolver: NO_TABLES }).expr(e, PREC.lambda, ONE_LINE);
}
