import { err } from '../errors/tributary-error.ts';
import { bindable } from './fast-bind.ts';
import type { ParsedRows } from './ingest-body.ts';
import type { ProducerTag } from './producer-marks.ts';
import type { StagedRows } from './stage-area.ts';
import type { ColumnRule, StreamSchema } from './stream-schema.ts';
import { type DoubtKind, type DoubtSink, LossyNumber } from './value-checks.ts';

export type PayloadFormat = 'JSONCompactEachRow' | 'JSONEachRow';

/**
 * One validated request, ready for the writer: its rows as an engine payload. Batches of the same
 * `shape` (format and column list) are committed together in one insert.
 */
export interface PreparedBatch {
  readonly rows: number;
  readonly shape: string;
  readonly format: PayloadFormat;
  /** The column list of a JSONCompactEachRow payload. */
  readonly columns?: readonly string[];
  /** The payload tried first: the request's own bytes when they are in the engine's format. */
  payload: Buffer;
  /** Re-encodes the rows from their parsed values, for when the engine refuses `payload`'s bytes. */
  reencode?: () => Buffer;
  readonly idempotencyId?: string;
  /** The producer tag of the write (producer-marks.ts). */
  readonly producer?: ProducerTag;
  /** `payload`'s rows, already parsed by the engine into a staging table (stage-area.ts). */
  staged?: StagedRows;
}

export interface PrepareOptions {
  /** Columns every row must give (not null). */
  requiredColumns?: readonly string[];
  idempotencyId?: string;
  producer?: ProducerTag;
  /** Ask the engine which of these strings it parses; answers one boolean per value. */
  verifyDoubts?: (kind: DoubtKind, values: string[]) => Promise<boolean[]>;
}

interface Doubt {
  kind: DoubtKind;
  value: string;
  row: number;
  column: string;
}

class DoubtList implements DoubtSink {
  readonly items: Doubt[] = [];
  row = 0;
  column = '';
  add(kind: DoubtKind, value: string): void {
    this.items.push({ kind, value, row: this.row, column: this.column });
  }
}

/** Rows re-encoded from their parsed values; bound per request (unnamed: fast-bind.ts). */
const encodeRows = bindable((values: unknown[]): Buffer => {
  // JSON.stringify never emits a raw newline, so the payload has no blank line.
  return values.length === 0 ? Buffer.alloc(0) : Buffer.from(JSON.stringify(values).slice(1, -1));
});

async function settleDoubts(doubts: DoubtList, options: PrepareOptions): Promise<void> {
  if (doubts.items.length === 0) return;
  for (const kind of ['datetime', 'date'] as const) {
    const items = doubts.items.filter((d) => d.kind === kind);
    if (items.length === 0) continue;
    const ok = options.verifyDoubts
      ? await options.verifyDoubts(
          kind,
          items.map((d) => d.value),
        )
      : items.map(() => false);
    const bad = items.findIndex((_, i) => !ok[i]);
    if (bad >= 0) {
      const d = items[bad] as Doubt;
      throw err('INGEST_BAD_VALUE', {
        row: d.row,
        column: d.column,
        detail: `${JSON.stringify(d.value)} is not a ${kind === 'date' ? 'date' : 'date-time'} the engine can read`,
      });
    }
  }
}

/** A compact request's column list checked against a schema: its rules and its batch shape. */
interface ColumnPlan {
  readonly columns: readonly string[];
  readonly rules: readonly ColumnRule[];
  readonly seen: ReadonlySet<string>;
  readonly shape: string;
}

/**
 * The last column list each schema accepted: a client sends the same `columns` on every request,
 * which is then compared name by name instead of checked and joined again. A schema is replaced,
 * never changed, when its stream's columns change, so a plan never outlives its rules.
 */
const lastPlans = new WeakMap<StreamSchema, ColumnPlan>();

function sameColumns(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The rules of `columns` (throws the first unknown, read-only or repeated column), remembered. */
function columnPlan(schema: StreamSchema, columns: readonly string[]): ColumnPlan {
  const last = lastPlans.get(schema);
  if (last && sameColumns(last.columns, columns)) return last;
  const stream = schema.streamName;
  const seen = new Set<string>();
  const rules = columns.map((c) => {
    if (seen.has(c)) throw err('INGEST_MALFORMED', { detail: `column ${c} appears twice in "columns"` });
    seen.add(c);
    const rule = schema.rule(c);
    if (!rule) throw err('INGEST_UNKNOWN_COLUMN', { column: c, stream, at: '' });
    if (!rule.writable) throw err('INGEST_READ_ONLY_COLUMN', { column: c, stream, detail: rule.reason });
    return rule;
  });
  const plan = { columns: [...columns], rules, seen, shape: `C\u0001${columns.join('\u0001')}` };
  lastPlans.set(schema, plan);
  return plan;
}

const NO_REQUIRED: ReadonlySet<string> = new Set();

function prepareCompact(
  schema: StreamSchema,
  parsed: Extract<ParsedRows, { kind: 'compact' }>,
  options: PrepareOptions,
  doubts: DoubtList,
): PreparedBatch {
  const { columns, rows } = parsed;
  const { rules, seen, shape } = columnPlan(schema, columns);
  const required = options.requiredColumns ? new Set(options.requiredColumns) : NO_REQUIRED;
  if (rows.length > 0 && columns.length === 0)
    throw err('INGEST_MALFORMED', { detail: '"columns" is empty' });
  if (rows.length > 0) {
    for (const r of required) if (!seen.has(r)) throw err('INGEST_MISSING_COLUMN', { row: 1, column: r });
  }
  const n = columns.length;
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r];
    if (!Array.isArray(row))
      throw err('INGEST_MALFORMED', { detail: `row ${r + 1} of "data" is not an array` });
    if (row.length < n) throw err('INGEST_MISSING_COLUMN', { row: r + 1, column: columns[row.length] });
    if (row.length > n) {
      throw err('INGEST_MALFORMED', {
        detail: `row ${r + 1} has ${row.length} values but "columns" names ${n}`,
      });
    }
    for (let i = 0; i < n; i++) {
      const rule = rules[i];
      if (!rule?.writable) continue;
      const v = row[i];
      if (v === null) {
        if (required.has(rule.name)) throw err('INGEST_MISSING_COLUMN', { row: r + 1, column: rule.name });
        if (!rule.nullable) continue; // null means "the column's default"
      }
      doubts.row = r + 1;
      doubts.column = rule.name;
      const e = rule.check(v, doubts);
      if (e) throw err('INGEST_BAD_VALUE', { row: r + 1, column: rule.name, detail: e });
    }
  }
  // bind, not an arrow: no per-request function naming by the TypeScript loader (ingest-body.ts).
  const reencode = encodeRows.bind(undefined, rows);
  // One literal, every key present (undefined when unset): no spread objects per request.
  return {
    rows: rows.length,
    shape,
    format: 'JSONCompactEachRow',
    columns,
    payload: parsed.passthrough ?? reencode(),
    reencode: parsed.passthrough ? reencode : undefined,
    idempotencyId: options.idempotencyId || undefined,
    producer: options.producer || undefined,
  };
}

function prepareObjects(
  schema: StreamSchema,
  parsed: Extract<ParsedRows, { kind: 'objects' }>,
  options: PrepareOptions,
  doubts: DoubtList,
): PreparedBatch {
  const stream = schema.streamName;
  const required = options.requiredColumns ?? [];
  const objects = parsed.objects;
  for (let r = 0; r < objects.length; r++) {
    const o = objects[r];
    if (o === null || typeof o !== 'object' || Array.isArray(o)) {
      throw err('INGEST_MALFORMED', { detail: `row ${r + 1} is not a JSON object` });
    }
    const obj = o as Record<string, unknown>;
    for (const key in obj) {
      const rule = schema.rule(key);
      if (!rule) throw err('INGEST_UNKNOWN_COLUMN', { column: key, stream, at: ` (row ${r + 1})` });
      if (!rule.writable) throw err('INGEST_READ_ONLY_COLUMN', { column: key, stream, detail: rule.reason });
      const v = obj[key];
      if (v === null && !rule.nullable) continue;
      doubts.row = r + 1;
      doubts.column = key;
      const e = rule.check(v, doubts);
      if (e) throw err('INGEST_BAD_VALUE', { row: r + 1, column: key, detail: e });
    }
    for (const c of required) {
      if (obj[c] === undefined || obj[c] === null)
        throw err('INGEST_MISSING_COLUMN', { row: r + 1, column: c });
    }
  }
  const reencode = encodeRows.bind(undefined, objects);
  return {
    rows: objects.length,
    shape: 'E',
    format: 'JSONEachRow',
    payload: parsed.passthrough ?? reencode(),
    ...(parsed.passthrough ? { reencode } : {}),
    ...(options.idempotencyId ? { idempotencyId: options.idempotencyId } : {}),
    ...(options.producer ? { producer: options.producer } : {}),
  };
}

/**
 * Validate parsed rows against a stream's schema and turn them into a batch. A bad request throws
 * the first problem found (INGEST_UNKNOWN_COLUMN, INGEST_READ_ONLY_COLUMN, INGEST_MISSING_COLUMN,
 * INGEST_BAD_VALUE or INGEST_MALFORMED, naming the row and column); nothing has been written then.
 */
export async function prepareBatch(
  schema: StreamSchema,
  parsed: ParsedRows,
  options: PrepareOptions = {},
): Promise<PreparedBatch> {
  return prepareBatchNow(schema, parsed, options);
}

/**
 * prepareBatch without a promise when no value needs the engine's word (no doubtful date or
 * date-time, the usual case): the batch itself, else a promise of it. A bad request throws at once
 * in the first case. The ingest path uses it so a request does not hold promises it does not need
 * while it waits for its commit.
 */
export function prepareBatchNow(
  schema: StreamSchema,
  parsed: ParsedRows,
  options: PrepareOptions = {},
): PreparedBatch | Promise<PreparedBatch> {
  let doubts = new DoubtList();
  let batch: PreparedBatch;
  try {
    batch = prepareParsed(schema, parsed, options, doubts);
  } catch (e) {
    if (!(e instanceof LossyNumber)) throw e;
    if (!parsed.lossless) throw lossyValue(e, doubts);
    doubts = new DoubtList();
    try {
      batch = prepareParsed(schema, parsed.lossless(), options, doubts);
    } catch (e2) {
      // The lossless parse keeps every integer exact, so this is a safeguard only.
      throw e2 instanceof LossyNumber ? lossyValue(e2, doubts) : e2;
    }
  }
  if (doubts.items.length === 0) return batch;
  const checked = batch;
  return settleDoubts(doubts, options).then(() => checked);
}

function lossyValue(e: LossyNumber, at: DoubtList) {
  return err('INGEST_BAD_VALUE', { row: at.row, column: at.column, detail: e.message });
}

function prepareParsed(
  schema: StreamSchema,
  parsed: ParsedRows,
  options: PrepareOptions,
  doubts: DoubtList,
): PreparedBatch {
  return parsed.kind === 'compact'
    ? prepareCompact(schema, parsed, options, doubts)
    : prepareObjects(schema, parsed, options, doubts);
}

/**
 * Values handed in by in-process producers, made JSON-safe: bigint and Date become strings, NaN and
 * the infinities become "nan"/"inf"/"-inf" (as the engine reads them), undefined becomes null.
 */
export function toJsonValue(v: unknown): unknown {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return v;
    case 'number':
      if (Number.isFinite(v)) return v;
      return Number.isNaN(v) ? 'nan' : v > 0 ? 'inf' : '-inf';
    case 'bigint':
      return v.toString();
    case 'undefined':
      return null;
    case 'object': {
      if (v === null) return null;
      if (v instanceof Date) return v.toISOString();
      if (Buffer.isBuffer(v) || v instanceof Uint8Array) return Buffer.from(v).toString('utf8');
      if (Array.isArray(v)) return v.map(toJsonValue);
      if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [String(k), toJsonValue(x)]));
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) out[k] = toJsonValue(x);
      return out;
    }
    default:
      return String(v);
  }
}
