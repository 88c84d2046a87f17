import { quoteIdent } from '../engine/settings-clause.ts';
import type { StreamDefinition } from '../stream/stream-definition.ts';

/** Engine type names `random_in_type` does not generate: such columns come from generateRandom(). */
const COMPOSITE =
  /^(Array|Map|Tuple|Nullable|LowCardinality|Enum8|Enum16|Nested|JSON|Object|Variant|Dynamic)\b/;

const sqlString = (s: string) => `'${s.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;

/**
 * The engine SELECT that generates `count` rows of a random stream: every column with a DEFAULT is
 * that expression (cast to the column's type); a column without one was given
 * `random_in_type('<type>')` at CREATE when that function knows the type, and the rest (arrays,
 * maps, nullable, enums, ...) come from the engine's `generateRandom`. `_tp_time` is the current
 * time unless `withTime` is false (ingest stamps it), `_tp_sn` the row number when `withSn`.
 */
export function randomBatchSql(
  def: StreamDefinition,
  count: number,
  options: { withTime?: boolean; withSn?: boolean } = {},
): string {
  const exprs: string[] = [];
  const generated: string[] = [];
  for (const c of def.columns) {
    if (c.alias || c.name === '_tp_delta') continue;
    if (c.name === '_tp_time') {
      if (options.withTime !== false) exprs.push(`now64(3, 'UTC') AS ${quoteIdent(c.name)}`);
      continue;
    }
    if (c.default) {
      exprs.push(`CAST((${c.default.engine}), ${sqlString(c.engineType)}) AS ${quoteIdent(c.name)}`);
    } else {
      generated.push(`${quoteIdent(c.name)} ${c.engineType}`);
      exprs.push(quoteIdent(c.name));
    }
  }
  if (options.withSn) exprs.push('toInt64(rowNumberInAllBlocks()) AS _tp_sn');
  const n = Math.max(0, Math.floor(count));
  if (generated.length === 0) return `SELECT ${exprs.join(', ')} FROM numbers(${n})`;
  const seed = Math.floor(Math.random() * 2 ** 31);
  // generateRandom(structure, seed, max string length, max array length)
  return `SELECT ${exprs.join(', ')} FROM generateRandom(${sqlString(generated.join(', '))}, ${seed}, 20, 5) LIMIT ${n}`;
}

/** True when `random_in_type` can generate values of the engine type (else generateRandom does). */
export function randomInTypeCovers(engineType: string): boolean {
  return !COMPOSITE.test(engineType);
}
