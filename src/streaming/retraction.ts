import { err } from '../errors/tributary-error.ts';
import type { FunctionCall } from '../sql/ast/expression.ts';

/**
 * Retracting aggregations (streaming-sql-notes.md §1.2): an aggregation over a changelog input
 * (a `versioned_kv`, `changelog_kv` or `changelog` stream, `changelog()`, a nested EMIT CHANGELOG)
 * sees rows with `_tp_delta` +1 and -1. Its state is the net multiset of each group's argument
 * tuples (aggregate-split.ts, `retract`): every emit computes the aggregates over the tuples with a
 * positive net count, which is exact for any function whose result depends only on that multiset.
 *
 * The functions allowed are Proton's `_retract` forms (SubstituteStreamingFunction.cpp
 * `changelog_func_map`): the others depend on the order rows arrived in (latest, earliest,
 * first_value, last_value, lag, moving_sum, group_array) or are approximate sketches whose answer
 * depends on that order (top_k, unique, median, quantile, p90...). Proton refuses them with
 * NOT_IMPLEMENTED; so does Tributary, never answering a wrong number.
 */
const RETRACTABLE = new Set([
  'count',
  'sum',
  'avg',
  'min',
  'max',
  'arg_min',
  'arg_max',
  'min_k',
  'max_k',
  'group_uniq_array',
  // The values a JavaScript aggregate folds (src/udf/aggregate-udf-rewrite.ts): over a changelog
  // input it gets the group's live rows (each as often as its net count) at every emit.
  '__trb_uda_values',
  // the same for an aggregate whose state is kept serialized (folded only without retraction)
  '__trb_uda_fvalues',
  '__trb_uda_states',
]);

/** ClickHouse spellings users may write for the same functions. */
const ENGINE_SPELLINGS: Readonly<Record<string, string>> = {
  argmin: 'arg_min',
  argmax: 'arg_max',
  groupuniqarray: 'group_uniq_array',
};

const known = (n: string) => RETRACTABLE.has(n) || ENGINE_SPELLINGS[n] !== undefined;

/** `count_distinct_if`, `countIf` -> `count`; undefined when the name is not a retractable form. */
export function retractableBase(name: string): string | undefined {
  let n = name.toLowerCase();
  for (const suffix of ['_if', 'if']) {
    if (n.endsWith(suffix) && known(n.slice(0, -suffix.length).replace(/_?distinct$/, ''))) {
      n = n.slice(0, -suffix.length);
      break;
    }
  }
  n = n.replace(/_?distinct$/, '');
  n = ENGINE_SPELLINGS[n] ?? n;
  return RETRACTABLE.has(n) ? n : undefined;
}

/** How a retracting aggregation names its input when that is a nested query's changelog. */
export const NESTED_CHANGELOG_INPUT = 'a query with EMIT CHANGELOG';

/**
 * `group_array` over a nested aggregation's result (0018_query_state6_view ids 162, 163: Proton
 * answers the array of the inner result's current rows): computed over the live tuples, in the
 * order the inner query emitted them (each tuple's latest `_tp_sn`, then its arguments; 0007 id 6),
 * the same for every array so that several stay aligned (AggregateSplit.sequenced). Not over
 * changelog streams, whose order of updates it would have to keep.
 */
export function isNestedOnlyRetractable(name: string): boolean {
  return name.toLowerCase() === 'group_array';
}

/** Refuse (NOT_IMPLEMENTED, 48) an aggregate that cannot be answered over a changelog input. */
export function checkRetractable(call: FunctionCall, input: string): void {
  if (retractableBase(call.name) !== undefined) return;
  if (input === NESTED_CHANGELOG_INPUT && isNestedOnlyRetractable(call.name)) return;
  throw err('NOT_IMPLEMENTED', {
    detail: `${call.name}() cannot retract, so it is not supported over ${input}, whose updates and deletes retract earlier rows; the aggregates that retract are count, sum, avg, min, max, arg_min, arg_max, min_k, max_k, group_uniq_array and their _if and _distinct forms`,
  });
}
