import { err, type TributaryError } from '../../errors/tributary-error.ts';
import { CHAIN_RUN, MAX_DEPTH } from '../parser/parser-expression.ts';

/** Whether `e` is the JavaScript engine's stack overflow. */
export function isStackOverflow(e: unknown): boolean {
  return e instanceof RangeError && /call stack/i.test(e.message);
}

/**
 * The last line of defence behind the parser's limits (nesting MAX_DEPTH, balanced chains): a
 * statement whose tree still overflows the stack in some pass answers SQL_TOO_DEEP (306), a 4xx,
 * never an internal error.
 */
export function tooDeep(): TributaryError {
  return err('SQL_TOO_DEEP', {
    detail: `the statement's expressions nest too deeply to process (at most ${MAX_DEPTH} levels of parentheses, NOT, unary minus, function calls and subqueries; operator chains of any length are fine, in runs of ${CHAIN_RUN})`,
  });
}

/** Run `fn`, turning a stack overflow into SQL_TOO_DEEP. */
export async function guardDepth<T>(fn: () => Promise<T> | T): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (isStackOverflow(e)) throw tooDeep();
    throw e;
  }
}
