import { quoteIdent } from '../engine/settings-clause.ts';
import { err } from '../errors/tributary-error.ts';
import {
  type ColumnSpec,
  columnFromSpec,
  exprOf,
  normaliseCodec,
  normaliseType,
  reservedColumnReason,
  type TranslateExpression,
  withCreateQuery,
} from './define-stream.ts';
import { referencedNames } from './sql-text.ts';
import {
  type ColumnHistoryEntry,
  type StreamColumn,
  type StreamDefinition,
  TP_DELTA,
  TP_SHARD,
  TP_SN,
  TP_TIME,
} from './stream-definition.ts';

/**
 * ALTER STREAM's column commands on a definition (pure: no engine). Each command is checked against
 * the definition as the commands before it left it, and answers the new definition, the change as
 * the engine must apply it, and the entry WAL replay needs (README.md, "ALTER STREAM").
 */

/** One column command of ALTER STREAM. Fields of `modify` that are absent keep their value. */
export type ColumnAlteration =
  | { kind: 'add'; column: ColumnSpec; ifNotExists?: boolean; after?: string; first?: boolean }
  | { kind: 'drop'; name: string; ifExists?: boolean }
  | { kind: 'modify'; column: Partial<ColumnSpec> & { name: string }; ifExists?: boolean }
  | { kind: 'rename'; from: string; to: string; ifExists?: boolean }
  | { kind: 'comment'; name: string; comment: string; ifExists?: boolean };

/** A command resolved against a definition: what the engine tables must do. */
export type ColumnChange =
  | { kind: 'add'; column: StreamColumn; first: boolean; after?: string }
  | { kind: 'drop'; name: string }
  | { kind: 'modify'; before: StreamColumn; column: StreamColumn }
  | { kind: 'rename'; from: string; to: string }
  | { kind: 'comment'; name: string; comment: string };

export interface AppliedAlteration {
  def: StreamDefinition;
  /** Undefined: nothing to do (IF [NOT] EXISTS, or a modify that changes nothing). */
  change?: ColumnChange;
}

const RESERVED = new Set([TP_TIME, TP_SN, TP_DELTA]);

function shown(def: StreamDefinition): string {
  return def.db === 'default' ? def.name : `${def.db}.${def.name}`;
}

function noSuchColumn(def: StreamDefinition, name: string): never {
  throw err('NO_SUCH_COLUMN_IN_TABLE', { name, stream: shown(def) });
}

function refuseReserved(name: string, what: string): void {
  if (RESERVED.has(name))
    throw err('ILLEGAL_COLUMN', { detail: `Column ${name} is reserved; it cannot be ${what}` });
}

/**
 * What in the definition names column `name` (other than the column itself): keys, TTL, indexes,
 * other columns' expressions, the event-time and version columns. A column something uses cannot
 * be dropped or renamed (Tributary keeps expressions as text and does not rewrite them).
 */
export function usersOf(def: StreamDefinition, name: string): string[] {
  const uses = (text: string | undefined) => text !== undefined && referencedNames(text).has(name);
  const out: string[] = [];
  if (uses(def.primaryKey?.engine) || def.keyColumns.includes(name)) out.push('the PRIMARY KEY');
  if (uses(def.orderBy.engine)) out.push('ORDER BY');
  if (uses(def.partitionBy?.engine)) out.push('PARTITION BY');
  if (uses(def.ttl?.engine)) out.push('the TTL');
  if (uses(def.eventTimeColumn?.engine)) out.push('the event_time_column setting');
  if (def.versionColumn === name) out.push('the version_column setting');
  for (const ix of def.indexes) if (uses(ix.expr.engine)) out.push(`index ${ix.name}`);
  for (const c of def.columns) {
    if (c.name === name) continue;
    if (uses(c.default?.engine) || uses(c.alias?.engine) || uses(c.ttl?.engine))
      out.push(`the expression of column ${c.name}`);
  }
  return out;
}

function refuseUsed(def: StreamDefinition, name: string, what: string): void {
  const users = usersOf(def, name);
  if (users.length > 0) {
    throw err('ILLEGAL_COLUMN', {
      detail: `Column ${name} of stream ${shown(def)} cannot be ${what}: it is used by ${users.join(', ')}`,
    });
  }
}

function refuseNewName(def: StreamDefinition, name: string): void {
  const reason = reservedColumnReason(name);
  if (reason) throw err('ILLEGAL_COLUMN', { detail: reason });
  if (def.columns.some((c) => c.name === name)) throw err('DUPLICATE_COLUMN', { name });
}

function redefine(def: StreamDefinition, columns: StreamColumn[]): StreamDefinition {
  const { createQuery: _, ...base } = def;
  return withCreateQuery({ ...base, columns });
}

/** Apply one command to a definition (see the file comment). */
export function applyAlteration(
  def: StreamDefinition,
  a: ColumnAlteration,
  translate: TranslateExpression,
): AppliedAlteration {
  const find = (name: string) => def.columns.findIndex((c) => c.name === name);
  switch (a.kind) {
    case 'add': {
      const name = a.column.name;
      if (a.ifNotExists && find(name) >= 0) return { def };
      refuseNewName(def, name);
      const column = columnFromSpec(a.column, translate);
      const columns = [...def.columns];
      let at = columns.length;
      if (a.first) at = 0;
      else if (a.after !== undefined) {
        const i = find(a.after);
        if (i < 0) noSuchColumn(def, a.after);
        at = i + 1;
      }
      columns.splice(at, 0, column);
      const after = at > 0 ? (columns[at - 1] as StreamColumn).name : undefined;
      return {
        def: redefine(def, columns),
        change: { kind: 'add', column, first: at === 0, ...(after !== undefined ? { after } : {}) },
      };
    }
    case 'drop': {
      refuseReserved(a.name, 'dropped');
      const i = find(a.name);
      if (i < 0) {
        if (a.ifExists) return { def };
        noSuchColumn(def, a.name);
      }
      refuseUsed(def, a.name, 'dropped');
      return {
        def: redefine(
          def,
          def.columns.filter((_, j) => j !== i),
        ),
        change: { kind: 'drop', name: a.name },
      };
    }
    case 'rename': {
      refuseReserved(a.from, 'renamed');
      const i = find(a.from);
      if (i < 0) {
        if (a.ifExists) return { def };
        noSuchColumn(def, a.from);
      }
      if (a.to === a.from) return { def };
      refuseNewName(def, a.to);
      refuseUsed(def, a.from, 'renamed');
      const columns = [...def.columns];
      columns[i] = { ...(columns[i] as StreamColumn), name: a.to };
      return { def: redefine(def, columns), change: { kind: 'rename', from: a.from, to: a.to } };
    }
    case 'modify': {
      const name = a.column.name;
      refuseReserved(name, 'modified');
      const i = find(name);
      if (i < 0) {
        if (a.ifExists) return { def };
        noSuchColumn(def, name);
      }
      const before = def.columns[i] as StreamColumn;
      const c = a.column;
      if (c.default !== undefined && c.alias !== undefined)
        throw err('BAD_ARGUMENTS', { detail: `Column ${name} cannot have both DEFAULT and ALIAS` });
      const typed = c.type !== undefined ? normaliseType(c.type, name) : before;
      const dflt = exprOf(c.default, translate);
      const alias = exprOf(c.alias, translate);
      const expr = dflt
        ? { default: dflt }
        : alias
          ? { alias }
          : before.default
            ? { default: before.default }
            : before.alias
              ? { alias: before.alias }
              : {};
      const codec = c.codec !== undefined ? normaliseCodec(c.codec) : before.codec;
      const ttl = c.ttl !== undefined ? exprOf(c.ttl, translate) : before.ttl;
      const comment = c.comment !== undefined ? c.comment : before.comment;
      const column: StreamColumn = {
        name,
        type: typed.type,
        engineType: typed.engineType,
        ...expr,
        ...(codec ? { codec } : {}),
        ...(comment ? { comment } : {}),
        ...(ttl ? { ttl } : {}),
      };
      if (JSON.stringify(column) === JSON.stringify(before)) return { def };
      const columns = [...def.columns];
      columns[i] = column;
      return { def: redefine(def, columns), change: { kind: 'modify', before, column } };
    }
    case 'comment': {
      const i = find(a.name);
      if (i < 0) {
        if (a.ifExists) return { def };
        noSuchColumn(def, a.name);
      }
      const columns = [...def.columns];
      const { comment: _, ...rest } = columns[i] as StreamColumn;
      columns[i] = { ...rest, ...(a.comment ? { comment: a.comment } : {}) };
      return {
        def: redefine(def, columns),
        change: { kind: 'comment', name: a.name, comment: a.comment },
      };
    }
  }
}

/** Does the change alter what the tables store (anything but a comment)? */
export function isStructural(change: ColumnChange): boolean {
  return change.kind !== 'comment';
}

/** The WAL-replay entry of a change made with `sn` as the next sequence number (none for comments). */
export function historyEntry(
  before: StreamDefinition,
  change: ColumnChange,
  sn: number,
): ColumnHistoryEntry | undefined {
  const old = (name: string) => before.columns.find((c) => c.name === name) as StreamColumn;
  switch (change.kind) {
    case 'add':
      return { sn, kind: 'add', column: change.column.name };
    case 'drop':
      return { sn, kind: 'drop', before: old(change.name) };
    case 'rename':
      return { sn, kind: 'rename', to: change.to, before: old(change.from) };
    case 'modify':
      return change.before.engineType === change.column.engineType &&
        JSON.stringify(change.before.default) === JSON.stringify(change.column.default) &&
        JSON.stringify(change.before.alias) === JSON.stringify(change.column.alias)
        ? undefined
        : { sn, kind: 'modify', before: change.before };
    case 'comment':
      return undefined;
  }
}

/**
 * The stored columns a WAL record starting at `first` was written with, and where each current
 * column comes from in them (`origin`: current name -> old name; absent: the column is newer than
 * the record and takes its DEFAULT). Undefined when no change postdates the record.
 */
export function schemaAt(
  def: StreamDefinition,
  first: number,
): { columns: StreamColumn[]; origin: Map<string, string> } | undefined {
  const changes = (def.columnHistory ?? []).filter((h) => h.sn > first);
  if (changes.length === 0) return undefined;
  let columns = [...def.columns];
  const origin = new Map(def.columns.map((c) => [c.name, c.name]));
  const retarget = (from: string, to: string | undefined) => {
    for (const [cur, old] of origin) {
      if (old !== from) continue;
      if (to === undefined) origin.delete(cur);
      else origin.set(cur, to);
    }
  };
  for (const h of [...changes].reverse()) {
    switch (h.kind) {
      case 'add':
        columns = columns.filter((c) => c.name !== h.column);
        retarget(h.column, undefined);
        break;
      case 'drop':
        columns.push(h.before);
        break;
      case 'modify':
        columns = columns.map((c) => (c.name === h.before.name ? h.before : c));
        break;
      case 'rename':
        columns = columns.map((c) => (c.name === h.to ? h.before : c));
        retarget(h.to, h.before.name);
        break;
    }
  }
  const stored = columns.filter((c) => !c.alias);
  const storedNames = new Set(stored.map((c) => c.name));
  for (const [cur, old] of origin) if (!storedNames.has(old)) origin.delete(cur);
  return { columns: stored, origin };
}

/** Keep only the history entries some retained WAL record (first sn >= `walFirstSn`) predates. */
export function pruneHistory(
  history: readonly ColumnHistoryEntry[] | undefined,
  walFirstSn: number | undefined,
): ColumnHistoryEntry[] {
  if (walFirstSn === undefined) return [];
  return (history ?? []).filter((h) => h.sn > walFirstSn);
}

/**
 * The INSERT ... SELECT lists that carry rows stored with `old` columns into the current ones:
 * renamed columns under their new name, modified ones CAST to their new type; columns newer than
 * `old` are left out (they take their DEFAULT). `_tp_sn` is always carried. Without `old`: every
 * stored column as it is.
 */
export function columnMapping(
  def: StreamDefinition,
  old?: { columns: StreamColumn[]; origin: Map<string, string> },
): { names: string[]; exprs: string[] } {
  const names: string[] = [];
  const exprs: string[] = [];
  for (const c of def.columns) {
    if (c.alias) continue;
    const from = old ? old.origin.get(c.name) : c.name;
    if (from === undefined) continue;
    const type = old?.columns.find((o) => o.name === from)?.engineType ?? c.engineType;
    names.push(quoteIdent(c.name));
    exprs.push(type === c.engineType ? quoteIdent(from) : `CAST(${quoteIdent(from)} AS ${c.engineType})`);
  }
  names.push(quoteIdent(TP_SN));
  exprs.push(quoteIdent(TP_SN));
  if (def.shardedStorage) {
    names.push(quoteIdent(TP_SHARD));
    exprs.push(quoteIdent(TP_SHARD));
  }
  return { names, exprs };
}

/** How the columns after `steps` derive from the columns before the first of them. */
export function stepsOrigin(
  steps: ReadonlyArray<{ before: StreamDefinition; def: StreamDefinition; change: ColumnChange }>,
): { columns: StreamColumn[]; origin: Map<string, string> } | undefined {
  const last = steps.at(-1);
  if (!last) return undefined;
  const entries = steps
    .map((s) => historyEntry(s.before, s.change, 1))
    .filter((e): e is ColumnHistoryEntry => e !== undefined);
  return schemaAt({ ...last.def, columnHistory: entries }, 0);
}
