import { err } from '../../errors/tributary-error.ts';
import type { Expr, FunctionCall } from '../ast/expression.ts';
import type { TableResolver } from './resolver.ts';

/** The engine's dictionary functions: `dictGet`, its typed forms, `dictHas`, the hierarchy ones. */
const DICTIONARY_FUNCTION = /^dict(get[a-z0-9]*|has|isin)$/i;

export function isDictionaryFunction(engineName: string): boolean {
  return DICTIONARY_FUNCTION.test(engineName);
}

/**
 * `call` (an engine dictionary function) with its first argument, a Tributary dictionary's name as
 * the user wrote it (`'d'` or `'db.d'`), replaced by the engine's name of that dictionary. Only
 * dictionaries Tributary created can be named (never an engine table or dictionary of its own), and
 * only by a string literal, so what a query reads is known before it runs.
 */
export function withDictionaryName(
  call: FunctionCall,
  written: FunctionCall,
  resolver: TableResolver,
): FunctionCall {
  const resolve = resolver.resolveDictionary;
  const first = call.args[0];
  const at = first ?? written;
  const position = ` (at position ${at.span.start + 1})`;
  if (!resolve)
    throw err('ENGINE_ACCESS_DENIED', {
      what: 'function',
      name: written.name,
      position: ` (at position ${written.span.start + 1})`,
      reason: 'dictionaries are not available here',
    });
  if (first?.kind !== 'String')
    throw err('BAD_ARGUMENTS', {
      detail: `${written.name} needs the dictionary's name as a string literal as its first argument${position}`,
    });
  const dot = first.value.indexOf('.');
  const db = dot > 0 ? first.value.slice(0, dot) : undefined;
  const name = dot > 0 ? first.value.slice(dot + 1) : first.value;
  const engineName = resolve.call(resolver, db, name);
  if (engineName === undefined) throw err('UNKNOWN_DICTIONARY', { name: first.value, position });
  const named: Expr = { ...first, value: engineName };
  return { ...call, args: [named, ...call.args.slice(1)] };
}
