import type { UdfDefinition } from './udf-definition.ts';

/**
 * JavaScript aggregates whose state the engine keeps serialized. A plain aggregate (no emit of its
 * own) whose object defines `serialize()` and `deserialize(state)` runs as
 * `__trb_uda_g(__trb_uda_fvalues(a)..., __trb_uda_deltas(), __trb_uda_states(NULL))`: the values
 * are kept as they come, and when the query's state table is compacted (every 64 steps and before
 * each checkpoint, see uda-compaction.ts) each group's kept values and earlier state are folded by
 * `__trb_udafold_g` (deserialize, process, serialize) into one serialized state, and the values
 * dropped. So a checkpoint copies serialized states, and a group's memory and what each emit
 * processes is its serialized state plus the values of the steps since the last compaction. At an emit the function
 * deserializes the state (merging further ones with `merge(state)` when a group has several),
 * processes the newer values and finalizes.
 *
 * Not for DISTINCT or FILTER (their collectors are not plain value lists) nor aggregates with their
 * own emit (their results depend on replaying the batches).
 */

/** The collector of a serialized-state aggregate's values (the engine's groupArray). */
export const UDA_FOLDED_VALUES = '__trb_uda_fvalues';
/** The collector of its serialized states: groupArray of a NULL (none) at every fold step. */
export const UDA_STATES = '__trb_uda_states';
/** The engine function folding a group's values and states into one serialized state. */
export const UDA_FOLD_PREFIX = '__trb_udafold_';

/** The function defines serialize and deserialize (as methods or properties of its object). */
export function keepsSerializedState(
  def: Pick<UdfDefinition, 'is_aggregation' | 'customized_emit' | 'source' | 'type'>,
): boolean {
  if (def.type !== 'javascript' || !def.is_aggregation || def.customized_emit) return false;
  const source = def.source ?? '';
  return /\bserialize\s*(:|\()/.test(source) && /\bdeserialize\s*(:|\()/.test(source);
}

/** The engine name of the fold function of aggregate `name`. */
export const foldFunctionName = (name: string) => `${UDA_FOLD_PREFIX}${name}`;
