import { err } from '../errors/tributary-error.ts';
import type { Expr, Setting } from '../sql/ast/expression.ts';

/** The settings of a materialized view's SELECT that the view itself reads. */
export interface MaterializedViewSettings {
  /** Created paused (the view starts only when resumed). */
  pause_on_start?: boolean;
  /** Seconds between checkpoints of the durable execution. */
  checkpoint_interval?: number;
}

function literal(e: Expr): string | number | boolean | undefined {
  if (e.kind === 'Number') return Number(e.text);
  if (e.kind === 'String') return e.value;
  if (e.kind === 'Bool') return e.value;
  return undefined;
}

/** Read `pause_on_start` and `checkpoint_interval` (BAD_ARGUMENTS for a value of the wrong kind). */
export function materializedViewSettings(settings: readonly Setting[] | undefined): MaterializedViewSettings {
  const out: MaterializedViewSettings = {};
  for (const s of settings ?? []) {
    const name = s.name.toLowerCase();
    const v = literal(s.value);
    if (name === 'pause_on_start') {
      const b =
        v === true || v === 1 || v === 'true'
          ? true
          : v === false || v === 0 || v === 'false'
            ? false
            : undefined;
      if (b === undefined)
        throw err('BAD_ARGUMENTS', { detail: 'pause_on_start must be true or false (or 1 / 0)' });
      out.pause_on_start = b;
    } else if (name === 'checkpoint_interval') {
      const n = typeof v === 'string' ? Number(v) : v;
      if (typeof n !== 'number' || !Number.isFinite(n) || n <= 0)
        throw err('BAD_ARGUMENTS', { detail: 'checkpoint_interval must be a positive number of seconds' });
      out.checkpoint_interval = n;
    }
  }
  return out;
}
