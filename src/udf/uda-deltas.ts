/**
 * The deltas a plain JavaScript aggregate (no emit of its own) gets after its values, as Proton
 * passes `_tp_delta` to `process(values..., deltas)` over a changelog input and nothing otherwise.
 * Queries call `__trb_uda_deltas()` (aggregate-udf-rewrite.ts): the engine's empty array, unless
 * the query's aggregation retracts a changelog input, where it becomes the deltas of the group's
 * live rows, each +1 (aggregate-split.ts; the state of a retracting aggregation is the net
 * multiset of its rows, so a retracted row and its retraction are both gone by the emit).
 */
export const UDA_DELTAS = '__trb_uda_deltas';
