import { quoteIdent } from '../engine/settings-clause.ts';
import type { StreamDefinition } from '../stream/stream-definition.ts';

/** Engine type names `random_in_type` does not generate: such columns come from generateRandom(). */
const COMPOSITE =
  /^(Array|Map|Tuple|Nullable|LowCardinality|Enum8|Enum16|Nested|JSON|Object|Variant|Dynamic)\b/;

/** The engine's row number in a translated DEFAULT (what `monotonic(n)` becomes, monotonic-call.ts). */
const ROW_NUMBER = /\browNumberInAllBlocks\(\)/g;

const sqlString = (s: string) => `'${s.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;

/**
 * The engine SELECT that generates `count` rows of a random stream: every column with a DEFAULT is
 * that expression (cast to the column's type); a column without one was given
 * `random_in_type('<type>')` at CREATE when that function knows the type, and the rest (arrays,
 * maps, nullable, enums, ...) come from the engine's `generateRandom`. `_tp_time` is the current
 * time unless `withTime` is false (ingest stamps it), `_tp_sn` the row number (from 1) when `withSn`.
 *
 * Row numbers in the defaults (`monotonic(n)`, `row_number_in_all_blocks()`) count the stream's
 * generated rows, not the batch's: `rowOffset` rows came before this batch (the generator's total),
 * so `monotonic(2)` answers 2, 3, 4, ... across batches, in step with `_tp_sn`.
 */
export function randomBatchSql(
  def: StreamDefinition,
  count: number,
  options: { withTime?: boolean; withSn?: boolean; rowOffset?: number; shards?: number } = {},
): string {
  const offset = Math.max(0, Math.floor(options.rowOffset ?? 0));
  const rowNumber = offset === 0 ? 'rowNumberInAllBlocks()' : `(rowNumberInAllBlocks() + ${offset})`;
  const exprs: string[] = [];
  const generated: string[] = [];
  for (const c of def.columns) {
    if (c.alias || c.name === '_tp_delta') continue;
    if (c.name === '_tp_time') {
      if (options.withTime !== false) exprs.push(`now64(3, 'UTC') AS ${quoteIdent(c.name)}`);
      continue;
    }
    if (c.default) {
      const engine = c.default.engine.replace(ROW_NUMBER, rowNumber);
      exprs.push(`CAST((${engine}), ${sqlString(c.engineType)}) AS ${quoteIdent(c.name)}`);
    } else {
      generated.push(`${quoteIdent(c.name)} ${c.engineType}`);
      exprs.push(quoteIdent(c.name));
    }
  }
  if (options.withSn) {
    exprs.push('toInt64(rowNumberInAllBlocks() + 1) AS _tp_sn');
    exprs.push(`${shardSql('rowNumberInAllBlocks()', options.shards ?? 1)} AS _tp_shard`);
  }
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

/**
 * `_tp_shard` of a random stream's row from its 0-based row number: one generator makes the rows of
 * all `shards` shards, in turn (row 0 in shard 0, row 1 in shard 1, ...), so a batch of `shards` rows
 * has one row of each, as Proton's `shards` generators make.
 */
export function shardSql(rowNumber: string, shards: number): string {
  const n = Math.max(1, Math.floor(shards));
  return n === 1 ? 'toInt32(0)' : `toInt32((${rowNumber}) % ${n})`;
}
