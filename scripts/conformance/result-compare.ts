// The result check of the original runner (rockets.py `case_result_check`), per the conformance
// README: rows compared as a multiset with equal counts; per field by the result column's type:
// floats with relative tolerance 1e-2 (NaN equals NaN), integers as integers, arrays exactly,
// a null in a nullable column matches anything, anything else as Python text where the expected
// text is split on ',' and the token `any_value` matches any item.

import { stringify } from 'lossless-json';
import { parseProtonType, unwrapType } from './proton-type.ts';
import { floatFromWire, pyFloatParse, pyIntParse, pyStr, pyValueStr } from './python-text.ts';

export interface Column {
  name: string;
  type: string;
}

/** What a statement produced. */
export type ActualResult =
  | { kind: 'rows'; columns: Column[]; rows: unknown[][] }
  | { kind: 'error'; code: number | undefined; message: string }
  | { kind: 'runner-error'; message: string };

export type Verdict = { ok: true; note?: string } | { ok: false; summary: string; details: string[] };

const ANY = 'any_value';
/** Wait-for-DDL timeout: the original runner skipped the check for it (a known log-store issue). */
const DDL_TIMEOUT_CODE = 159;
const DIFF_ROWS = 5;

// ---------------------------------------------------------------- fields

/** Python's float() of an expected field; undefined where Python would raise. */
function expectedFloat(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string') return pyFloatParse(v);
  return undefined;
}

/** math.isclose(a, b, rel_tol=1e-2), with NaN equal to NaN. */
export function isClose(a: number, b: number): boolean {
  if (a === b) return true;
  if (Number.isNaN(a) || Number.isNaN(b)) return Number.isNaN(a) && Number.isNaN(b);
  if (!Number.isFinite(a) || !Number.isFinite(b)) return false;
  return Math.abs(a - b) <= 1e-2 * Math.max(Math.abs(a), Math.abs(b));
}

/**
 * Text comparison: an expected string is split on ',' and compared item by item (Python's zip, so
 * the shorter side decides how many items are compared), `any_value` matching any item. A non-string
 * expected value is compared as its Python str() with the whole actual text.
 */
export function textMatches(expected: unknown, actualText: string): boolean {
  if (typeof expected !== 'string') return pyValueStr(expected) === actualText;
  const e = expected.split(',');
  const a = actualText.split(',');
  const n = Math.min(e.length, a.length);
  for (let i = 0; i < n; i++) {
    if (e[i] !== ANY && e[i] !== a[i]) return false;
  }
  return true;
}

/** One field: the expected value against the actual value of a column of type `type`. */
export function fieldMatches(expected: unknown, actual: unknown, type: string): boolean {
  if (expected === ANY) return true;
  const t = type.toLowerCase();
  const node = parseProtonType(type);
  if (actual === null && t.includes('nullable')) return true;
  if (t.includes('array') && !t.includes('array_join')) return pyValueStr(expected) === pyStr(actual, node);
  const outer = unwrapType(node).name;
  const composite = outer === 'tuple' || outer === 'map';
  if (t.includes('float') && !composite) {
    const e = expectedFloat(expected);
    return e !== undefined && isClose(e, floatFromWire(actual));
  }
  if (t.includes('int') && !t.includes('tuple') && !t.includes('map')) {
    const e = pyIntParse(expected);
    const a = pyIntParse(actual);
    return e !== undefined && a !== undefined && e === a;
  }
  return textMatches(expected, pyStr(actual, node));
}

/** One row: as many fields as columns, each matching. */
export function rowMatches(
  expected: unknown,
  actual: readonly unknown[],
  columns: readonly Column[],
): boolean {
  if (!Array.isArray(expected) || expected.length !== columns.length || actual.length !== columns.length)
    return false;
  for (let i = 0; i < columns.length; i++) {
    if (!fieldMatches(expected[i], actual[i], columns[i]!.type)) return false;
  }
  return true;
}

// ---------------------------------------------------------------- rows as a multiset

export interface RowMatching {
  /** Indexes of expected rows left without an actual row. */
  missing: number[];
  /** Indexes of actual rows left without an expected row. */
  unexpected: number[];
}

/** A maximum matching of expected rows to actual rows (Kuhn's augmenting paths). */
export function matchRows(
  expected: readonly unknown[],
  actual: readonly (readonly unknown[])[],
  columns: readonly Column[],
): RowMatching {
  const adj = expected.map((e) => {
    const js: number[] = [];
    actual.forEach((a, j) => {
      if (rowMatches(e, a, columns)) js.push(j);
    });
    return js;
  });
  const ownerOf: number[] = new Array(actual.length).fill(-1);
  const augment = (i: number, seen: boolean[]): boolean => {
    for (const j of adj[i]!) {
      if (seen[j]) continue;
      seen[j] = true;
      if (ownerOf[j]! < 0 || augment(ownerOf[j]!, seen)) {
        ownerOf[j] = i;
        return true;
      }
    }
    return false;
  };
  const missing: number[] = [];
  for (let i = 0; i < expected.length; i++) {
    // cheap first try: a free matching row
    const free = adj[i]!.find((j) => ownerOf[j]! < 0);
    if (free !== undefined) ownerOf[free] = i;
    else if (!augment(i, new Array(actual.length).fill(false))) missing.push(i);
  }
  const unexpected = ownerOf.flatMap((o, j) => (o < 0 ? [j] : []));
  return { missing, unexpected };
}

// ---------------------------------------------------------------- display

/** JSON text of a value of a case file (bigints kept). */
export function showExpected(v: unknown): string {
  return stringify(v, (_k, x) => (x instanceof Date ? x.toISOString() : x)) ?? String(v);
}

/** An actual row as the Python runner saw it: the str() of each field. */
export function showActualRow(row: readonly unknown[], columns: readonly Column[]): string {
  return JSON.stringify(row.map((v, i) => pyStr(v, columns[i]?.type ?? 'string')));
}

export function describeActual(actual: ActualResult): string {
  if (actual.kind === 'rows') return `${actual.rows.length} row${actual.rows.length === 1 ? '' : 's'}`;
  if (actual.kind === 'error') return `error_code:${actual.code ?? '?'} (${oneLine(actual.message)})`;
  return `runner error: ${oneLine(actual.message)}`;
}

function oneLine(s: string, max = 300): string {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max)}...` : t;
}

// ---------------------------------------------------------------- one expectation

/** Check one `expected_results` entry against what the statement with that query id produced. */
export function checkExpectation(expected: unknown, actual: ActualResult | undefined): Verdict {
  if (expected === 'skip') return { ok: true, note: 'expectation is skip' };
  if (actual === undefined)
    return { ok: false, summary: 'the query produced no result (it did not run)', details: [] };
  if (actual.kind === 'error' && actual.code === DDL_TIMEOUT_CODE)
    return { ok: true, note: 'error 159 (DDL timeout): check skipped, as in the original runner' };
  if (typeof expected === 'string') {
    const m = /^error_code:\s*(-?\d+)$/.exec(expected.trim());
    if (m && actual.kind === 'error' && actual.code === Number(m[1])) return { ok: true };
    return {
      ok: false,
      summary: `expected ${oneLine(expected, 80)}, got ${describeActual(actual)}`,
      details: [],
    };
  }
  if (!Array.isArray(expected)) {
    return {
      ok: false,
      summary: `expected ${oneLine(showExpected(expected), 120)} (a response of the original server's REST API), got ${describeActual(actual)}`,
      details: [],
    };
  }
  if (actual.kind !== 'rows')
    return {
      ok: false,
      summary: `expected ${expected.length} rows, got ${describeActual(actual)}`,
      details: [],
    };
  const { columns, rows } = actual;
  if (expected.length !== rows.length) {
    return {
      ok: false,
      summary: `expected ${expected.length} rows, got ${rows.length}`,
      details: [
        ...expected.slice(0, DIFF_ROWS).map((r) => `expected ${showExpected(r)}`),
        ...(expected.length > DIFF_ROWS ? [`expected ... ${expected.length - DIFF_ROWS} more`] : []),
        ...rows.slice(0, DIFF_ROWS).map((r) => `actual   ${showActualRow(r, columns)}`),
        ...(rows.length > DIFF_ROWS ? [`actual   ... ${rows.length - DIFF_ROWS} more`] : []),
      ],
    };
  }
  const { missing, unexpected } = matchRows(expected, rows, columns);
  if (missing.length === 0) return { ok: true };
  return {
    ok: false,
    summary: `${missing.length} of ${expected.length} expected rows not matched (columns: ${columns
      .map((c) => `${c.name} ${c.type}`)
      .join(', ')})`,
    details: [
      ...missing.slice(0, DIFF_ROWS).map((i) => `missing    ${showExpected(expected[i])}`),
      ...unexpected.slice(0, DIFF_ROWS).map((j) => `unexpected ${showActualRow(rows[j]!, columns)}`),
    ],
  };
}
