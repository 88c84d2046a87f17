import { quoteString } from '../printer/sql-text.ts';
import { TYPE_NAME_PAIRS } from '../types/proton-types.ts';

/**
 * In a user's query (TranslateOptions.protonResults), `to_type_name(x)` answers Proton's spelling
 * of the type (`nullable(uint8)`, `fixed_string(4)`, `datetime64(3, 'UTC')`) where the engine's
 * toTypeName answers its own (`Nullable(UInt8)`): the engine's text is cut into words and the rest,
 * and each word that is a type name is replaced by the Proton name (transform over the pairs of
 * proton-types.ts); quoted enum labels stay as they are, and a type the engine lays out on several
 * lines is put back on one.
 */
export function protonTypeNameSql(argSql: string): string {
  const from = TYPE_NAME_PAIRS.map(([ch]) => quoteString(ch)).join(', ');
  const to = TYPE_NAME_PAIRS.map(([, proton]) => quoteString(proton)).join(', ');
  // the engine may lay long types out on several lines (`tuple(\n    a uint8,\n    b string)`)
  const oneLine = `replaceRegexpAll(replaceRegexpAll(toTypeName(${argSql}), ${quoteString(',\n\\s*')}, ', '), ${quoteString('\n\\s*')}, '')`;
  // quoted parts (enum labels) are one word each, never renamed
  const words = quoteString("'(?:[^'\\\\]|\\\\.)*'|[A-Za-z0-9_]+|[^A-Za-z0-9_']+");
  return `arrayStringConcat(arrayMap(__tp_word -> transform(__tp_word, [${from}], [${to}], __tp_word), extractAll(${oneLine}, ${words})))`;
}

/** Whether a Proton call is `to_type_name(x)` (any spelling the catalogue accepts). */
export function isTypeNameCall(name: string, args: number): boolean {
  const lower = name.toLowerCase();
  return args === 1 && (lower === 'to_type_name' || lower === 'totypename');
}
