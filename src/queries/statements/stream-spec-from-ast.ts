import { err } from '../../errors/tributary-error.ts';
import type { Expr, Setting } from '../../sql/ast/expression.ts';
import type { ColumnDef, CreateStream, IndexDef } from '../../sql/ast/statement.ts';
import { printExpression } from '../../sql/printer/format.ts';
import { printDataType } from '../../sql/types/data-type.ts';
import type { ColumnSpec, IndexSpec, StreamSpec } from '../../stream/define-stream.ts';

/** A setting's value as the stream layer takes it: a string, number or boolean. */
export function settingValue(s: Setting): string | number | boolean {
  const v = s.value;
  switch (v.kind) {
    case 'String':
      return v.value;
    case 'Number':
      return Number.isSafeInteger(Number(v.text)) || /[.eE]/.test(v.text) ? Number(v.text) : v.text;
    case 'Bool':
      return v.value;
    case 'Unary':
      if (v.op === '-' && v.operand.kind === 'Number') return -Number(v.operand.text);
      break;
    case 'Identifier':
      return v.parts.join('.');
  }
  return printExpression(v);
}

export function settingsRecord(
  settings: readonly Setting[] | undefined,
): Record<string, string | number | boolean> {
  return Object.fromEntries((settings ?? []).map((s) => [s.name, settingValue(s)]));
}

/** A column of CREATE STREAM or ALTER STREAM ... ADD COLUMN (a type is required). */
export function columnSpecFromAst(c: ColumnDef): ColumnSpec {
  if (!c.type) {
    throw err('BAD_ARGUMENTS', {
      detail: `Column ${c.name} needs a type (a type inferred from DEFAULT is not supported)`,
    });
  }
  return columnChangeSpec(c) as ColumnSpec;
}

/** A column as ALTER STREAM ... MODIFY COLUMN gives it: only what is written (the type may be absent). */
export function columnChangeSpec(c: ColumnDef): Partial<ColumnSpec> & { name: string } {
  let type = c.type ? printDataType(c.type) : undefined;
  if (type !== undefined && c.nullable === true) type = `nullable(${type})`;
  const spec: Partial<ColumnSpec> & { name: string } = {
    name: c.name,
    ...(type !== undefined ? { type } : {}),
  };
  const d = c.default;
  if (d?.expr) {
    if (d.kind === 'ALIAS') spec.alias = printExpression(d.expr);
    else if (d.kind === 'EPHEMERAL')
      throw err('NOT_IMPLEMENTED', { detail: `EPHEMERAL column ${c.name} is not supported` });
    else spec.default = printExpression(d.expr);
  }
  if (c.codec?.length) spec.codec = c.codec.map(printExpression).join(', ');
  if (c.comment !== undefined) spec.comment = c.comment;
  if (c.ttl) spec.ttl = printExpression(c.ttl);
  return spec;
}

function index(i: IndexDef): IndexSpec {
  return {
    name: i.name,
    expr: printExpression(i.expr),
    type: printExpression(i.type),
    ...(i.granularity?.kind === 'Number' ? { granularity: Number(i.granularity.text) } : {}),
  };
}

const text = (e: Expr | undefined) => (e ? printExpression(e) : undefined);

/** ENGINE names of Tributary's own kinds of stream: with them a CREATE STREAM declares a stream. */
const STREAM_ENGINES = new Set(['stream', 'random', 'externalstream']);

/**
 * The table engine a CREATE STREAM names (Proton text), or undefined when it names none or one of
 * Tributary's own stream kinds (`Stream(...)`, `Random()`). As in Proton, only a stream of the Stream
 * engine gets `_tp_time` and the defaults built on it; any other ENGINE makes a plain table.
 */
export function tableEngineOf(engine: Expr | undefined): string | undefined {
  if (!engine) return undefined;
  const name =
    engine.kind === 'Identifier'
      ? engine.parts.join('.')
      : engine.kind === 'Function'
        ? engine.name
        : undefined;
  if (name !== undefined && STREAM_ENGINES.has(name.toLowerCase())) return undefined;
  return printExpression(engine);
}

/** CREATE STREAM as the stream layer's StreamSpec (expressions stay Proton text; the store translates them). */
export function streamSpecFromAst(s: CreateStream, defaultDb: string): StreamSpec {
  if (s.variant !== 'STREAM') {
    throw err('NOT_IMPLEMENTED', { detail: `CREATE ${s.variant} STREAM is not supported yet` });
  }
  if (s.asQuery) throw err('NOT_IMPLEMENTED', { detail: 'CREATE STREAM ... AS SELECT is not supported yet' });
  const primaryKey = text(s.primaryKey ?? s.columnsPrimaryKey);
  const ttl = s.ttl?.length ? s.ttl.map((t) => printExpression(t.expr)).join(', ') : undefined;
  const orderBy = text(s.orderBy);
  const partitionBy = text(s.partitionBy);
  const tableEngine = tableEngineOf(s.engine);
  return {
    db: s.target.database ?? defaultDb,
    name: s.target.name,
    columns: s.columns.map(columnSpecFromAst),
    indexes: s.indexes.map(index),
    ...(primaryKey ? { primaryKey } : {}),
    ...(orderBy ? { orderBy } : {}),
    ...(partitionBy ? { partitionBy } : {}),
    ...(ttl ? { ttl } : {}),
    ...(s.comment !== undefined ? { description: s.comment } : {}),
    ...(tableEngine ? { tableEngine } : {}),
    settings: settingsRecord(s.settings),
  };
}
