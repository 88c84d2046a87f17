import { err } from '../../errors/tributary-error.ts';
import type { Statement } from '../../sql/ast/statement.ts';
import type { StatementHandler } from '../statement-handler.ts';

/**
 * One statement kind served by several owners, chosen by a key of the statement (DROP by object,
 * SHOW by what is shown, ...). Owners register their part; unregistered keys are NOT_IMPLEMENTED.
 */
export class SubDispatch<S extends Statement> {
  private readonly handlers = new Map<string, StatementHandler<S>>();

  constructor(
    private readonly keyOf: (s: S) => string,
    private readonly describe: (key: string) => string,
  ) {}

  register(key: string, handler: StatementHandler<S>): this {
    this.handlers.set(key, handler);
    return this;
  }

  /** Replace the handler of `key` by `around(it)` (e.g. a check before DROP STREAM); no-op if none. */
  wrap(key: string, around: (handler: StatementHandler<S>) => StatementHandler<S>): this {
    const h = this.handlers.get(key);
    if (h) this.handlers.set(key, around(h));
    return this;
  }

  handler(): StatementHandler<S> {
    return (s, ctx) => {
      const key = this.keyOf(s);
      const h = this.handlers.get(key);
      if (!h) throw err('NOT_IMPLEMENTED', { detail: `${this.describe(key)} is not supported` });
      return h(s, ctx);
    };
  }
}
