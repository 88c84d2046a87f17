import { err } from '../errors/tributary-error.ts';
import type { EmitClause } from '../sql/ast/query.ts';
import { intervalMillis, intervalOf, type WindowInterval } from './window-interval.ts';

/** Proton's default periodic emit of a global aggregation: every 2 seconds. */
export const DEFAULT_PERIODIC_MS = 2000;

export type QueryShape = 'tail' | 'global' | 'window';

/**
 * When a streaming query emits, resolved from its EMIT clause and its shape as Proton 1.6 does
 * (WatermarkStamperParams, streaming-sql-notes.md §1.6).
 */
export type EmitPolicy =
  | { shape: 'tail'; changelog: boolean }
  | {
      shape: 'global';
      /** Emit every `periodicMs` (skipped without new data), and/or on every batch with updates. */
      periodicMs?: number;
      onUpdate: boolean;
      changelog: boolean;
    }
  | {
      shape: 'window';
      /** Delay subtracted from the max event time before it becomes the watermark. */
      delay?: WindowInterval;
      /** PERIODIC: emit open windows' intermediate results (and closed ones) at each tick. */
      periodicMs?: number;
      /** ON UPDATE: emit the changed groups of open windows after every batch. */
      onUpdate: boolean;
      /** TIMEOUT: close every open window after this long without new rows (processing time). */
      timeoutMs?: number;
      changelog: boolean;
    };

const incorrect = (detail: string) => err('INCORRECT_QUERY', { detail });

/** Resolve the EMIT clause of a query of the given shape; refuses combinations Proton refuses. */
export function resolveEmitPolicy(emit: EmitClause | undefined, shape: QueryShape): EmitPolicy {
  const changelog = emit?.mode === 'CHANGELOG';
  const periodic = emit?.periodic ? intervalOf(emit.periodic, 'EMIT PERIODIC') : undefined;
  const delay = emit?.delay ? intervalOf(emit.delay, 'EMIT ... WITH DELAY') : undefined;
  const timeout = emit?.timeout ? intervalOf(emit.timeout, 'EMIT TIMEOUT') : undefined;
  const afterWatermark = emit?.afterWatermark ?? false;
  const onUpdate = emit?.onUpdate ?? false;

  if (periodic && delay) throw incorrect("Streaming doesn't support having both delay and periodic emit");
  if (periodic && timeout) throw incorrect("Streaming doesn't support having both timeout and periodic emit");
  for (const [i, what] of [
    [periodic, 'PERIODIC'],
    [timeout, 'TIMEOUT'],
  ] as const) {
    // Days at most (0099_fixed_issues id 6: `emit periodic 1w`, 1M, 1q, 1y answer 43).
    if (i && ['WEEK', 'MONTH', 'QUARTER', 'YEAR'].includes(i.unit)) {
      throw err('ILLEGAL_TYPE_OF_ARGUMENT', {
        detail: `The maximum interval kind of streaming ${what.toLowerCase()} emit policy is day, but got ${i.unit.toLowerCase()}`,
      });
    }
  }

  switch (shape) {
    case 'tail':
      if (periodic || afterWatermark || onUpdate || delay || timeout) {
        throw incorrect("Streaming tail mode doesn't support any watermark or periodic emit");
      }
      return { shape, changelog };
    case 'global':
      if (afterWatermark || delay) {
        throw incorrect(
          'Watermark emit is only supported in streaming queries with streaming window function',
        );
      }
      if (!periodic && !onUpdate)
        return { shape, periodicMs: DEFAULT_PERIODIC_MS, onUpdate: false, changelog };
      return { shape, ...(periodic ? { periodicMs: intervalMillis(periodic) } : {}), onUpdate, changelog };
    case 'window':
      return {
        shape,
        ...(delay ? { delay } : {}),
        ...(periodic ? { periodicMs: intervalMillis(periodic) } : {}),
        ...(timeout ? { timeoutMs: intervalMillis(timeout) } : {}),
        onUpdate,
        changelog,
      };
  }
}

/**
 * A global aggregation written without EMIT PERIODIC / ON UPDATE over a nested global
 * aggregation (`SELECT count(*), sum(cnt) FROM (SELECT id, count() AS cnt ... GROUP BY id EMIT
 * PERIODIC 1s)`), with no GROUP BY, emits when its input changes, i.e. at each emit of the nested one that changed
 * something, as in Proton (0013_changelog_stream3 id 55: one outer row per inner emit 1 s apart),
 * rather than on a 2 s timer of its own that skips some of them.
 */
export function followsNestedAggregation(
  policy: EmitPolicy,
  written: EmitClause | undefined,
  children: readonly { readonly program: { readonly shape: string } }[],
  grouped: boolean,
): EmitPolicy {
  // Grouped, a periodic emit sends every group and ON UPDATE only the changed ones: kept periodic.
  if (policy.shape !== 'global' || grouped || written?.periodic || written?.onUpdate) return policy;
  if (children.length === 0 || !children.every((c) => c.program.shape === 'global')) return policy;
  const { periodicMs: _timer, ...rest } = policy;
  return { ...rest, onUpdate: true };
}
