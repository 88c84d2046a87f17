import type { EsErrorCause } from './es-error.ts';

export type BulkOp = 'index' | 'create' | 'update' | 'delete';

/** An item error: the item's HTTP status and its ErrorCause. */
export interface BulkItemError extends EsErrorCause {
  status: number;
}

/** An action line, read: the op (after `op_type`) and the `_index`/`_id` it names, if any. */
export interface BulkAction {
  op: BulkOp;
  index: string | undefined;
  id: string | undefined;
  /** Set when the line names a known op but its metadata is wrong: the item fails. */
  error?: BulkItemError;
}

/** Set when the line is not an action at all (bad JSON, not an object, unknown op). */
export interface BulkActionUnreadable {
  op: undefined;
  error: BulkItemError;
}

const OPS: ReadonlySet<string> = new Set(['index', 'create', 'update', 'delete']);

const ID_MAX_BYTES = 512;

/**
 * Read one action/metadata line. Unknown metadata keys (`routing`, `pipeline`, `_type`,
 * `require_alias`, `require_data_stream`, `dynamic_templates`, ...) are accepted and ignored;
 * `op_type: "create"` on an `index` action makes it a `create`. Messages follow Elasticsearch's
 * BulkRequestParser where it has one.
 */
export function readActionLine(text: string, lineNo: number): BulkAction | BulkActionUnreadable {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    return unreadable(
      400,
      'x_content_parse_exception',
      `Malformed action/metadata line [${lineNo}]: ${(e as Error).message}`,
    );
  }
  if (!isPlainObject(v))
    return unreadable(
      400,
      'illegal_argument_exception',
      `Malformed action/metadata line [${lineNo}], expected START_OBJECT but found [${tokenName(v)}]`,
    );
  let op: string | undefined;
  let count = 0;
  for (const k in v) {
    if (count++ === 0) op = k;
  }
  if (op === undefined)
    return unreadable(
      400,
      'illegal_argument_exception',
      `Malformed action/metadata line [${lineNo}], expected FIELD_NAME but found [END_OBJECT]`,
    );
  if (!OPS.has(op))
    return unreadable(
      400,
      'illegal_argument_exception',
      `Malformed action/metadata line [${lineNo}], expected field [create], [delete], [index] or [update] but found [${op}]`,
    );
  if (count > 1)
    return unreadable(
      400,
      'illegal_argument_exception',
      `Malformed action/metadata line [${lineNo}], expected one action [${op}] but found ${count} keys`,
    );
  return readMeta(op as BulkOp, (v as Record<string, unknown>)[op], lineNo);
}

function readMeta(op: BulkOp, meta: unknown, lineNo: number): BulkAction {
  const action: BulkAction = { op, index: undefined, id: undefined };
  if (!isPlainObject(meta)) {
    action.error = itemError(
      400,
      'illegal_argument_exception',
      `Malformed action/metadata line [${lineNo}], expected START_OBJECT but found [${tokenName(meta)}]`,
    );
    return action;
  }
  const m = meta as Record<string, unknown>;
  const index = simpleValue(m._index, '_index', lineNo, action);
  const id = simpleValue(m._id, '_id', lineNo, action);
  if (action.error) return action;
  if (index !== undefined) {
    if (index === '') {
      action.error = itemError(
        400,
        'invalid_index_name_exception',
        'Invalid index name [], must not be empty',
      );
      return action;
    }
    action.index = index;
  }
  if (id !== undefined) {
    if (id === '') {
      action.error = validation('if _id is specified it must not be empty');
      return action;
    }
    if (id.length > ID_MAX_BYTES / 4 && Buffer.byteLength(id) > ID_MAX_BYTES) {
      action.error = validation(
        `id [${id}] is too long, must be no longer than ${ID_MAX_BYTES} bytes but was: ${Buffer.byteLength(id)}`,
      );
      return action;
    }
    action.id = id;
  }
  if (op === 'index' && m.op_type !== undefined && m.op_type !== null) {
    if (m.op_type === 'create') action.op = 'create';
    else if (m.op_type !== 'index') {
      action.error = itemError(
        400,
        'illegal_argument_exception',
        `opType must be 'create' or 'index', found: [${String(m.op_type)}]`,
      );
      return action;
    }
  }
  if (op === 'update' && (m.version !== undefined || m.version_type !== undefined)) {
    action.error = itemError(
      400,
      'illegal_argument_exception',
      'Update requests do not support versioning. Please use `if_seq_no` and `if_primary_term` instead',
    );
    return action;
  }
  if ((op === 'update' || op === 'delete') && action.id === undefined)
    action.error = validation('id is missing');
  return action;
}

/** `_index`/`_id` as text: strings, numbers and booleans are taken as text, null as absent. */
function simpleValue(v: unknown, field: string, lineNo: number, action: BulkAction): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  action.error ??= itemError(
    400,
    'illegal_argument_exception',
    `Malformed action/metadata line [${lineNo}], expected a simple value for field [${field}] but found [${tokenName(v)}]`,
  );
  return undefined;
}

/** Whether a line is an action line (used to re-synchronise after an unreadable one). */
export function isActionLine(text: string): boolean {
  const first = firstNonBlank(text);
  if (first !== 123 /* { */) return false;
  try {
    const v = JSON.parse(text) as unknown;
    if (!isPlainObject(v)) return false;
    const keys = Object.keys(v);
    return keys.length === 1 && OPS.has(keys[0]!) && isPlainObject((v as Record<string, unknown>)[keys[0]!]);
  } catch {
    return false;
  }
}

export function itemError(status: number, type: string, reason: string): BulkItemError {
  return { status, type, reason };
}

export function validation(detail: string): BulkItemError {
  return itemError(400, 'action_request_validation_exception', `Validation Failed: 1: ${detail};`);
}

function unreadable(status: number, type: string, reason: string): BulkActionUnreadable {
  return { op: undefined, error: itemError(status, type, reason) };
}

function isPlainObject(v: unknown): v is object {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The Jackson token name Elasticsearch puts in its parse messages. */
export function tokenName(v: unknown): string {
  if (v === null) return 'VALUE_NULL';
  if (Array.isArray(v)) return 'START_ARRAY';
  switch (typeof v) {
    case 'string':
      return 'VALUE_STRING';
    case 'number':
      return Number.isInteger(v) ? 'VALUE_NUMBER_INT' : 'VALUE_NUMBER_FLOAT';
    case 'boolean':
      return v ? 'VALUE_TRUE' : 'VALUE_FALSE';
    default:
      return 'START_OBJECT';
  }
}

/** Char code of the first non-blank character, or -1. */
export function firstNonBlank(s: string): number {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c !== 32 && c !== 9 && c !== 13) return c;
  }
  return -1;
}

/** Char code of the last non-blank character, or -1. */
export function lastNonBlank(s: string): number {
  for (let i = s.length - 1; i >= 0; i--) {
    const c = s.charCodeAt(i);
    if (c !== 32 && c !== 9 && c !== 13) return c;
  }
  return -1;
}
