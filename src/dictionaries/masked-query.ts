import type { DictionaryCall } from '../sql/ast/statement.ts';
import { parseStatement } from '../sql/parser/parse.ts';

const MASK = "'******'";

/** Spans of the secret values in a dictionary source: passwords, and HTTP header values. */
function secretSpans(call: DictionaryCall, out: { start: number; end: number }[]): void {
  const name = call.name.toLowerCase();
  for (const a of call.args) {
    if (a.value.kind === 'DictionaryCall') {
      secretSpans(a.value, out);
      continue;
    }
    const key = a.key.toLowerCase();
    if (key === 'password' || (name === 'header' && key === 'value')) out.push(a.value.span);
  }
}

/**
 * A CREATE DICTIONARY statement as written, its secrets (`password '...'`, header values) shown as
 * `'******'`: what SHOW CREATE DICTIONARY and the REST resource answer. The statement kept in the
 * catalog keeps them (the engine needs them to load the source).
 */
export function maskedDictionaryQuery(text: string): string {
  let statement: ReturnType<typeof parseStatement>;
  try {
    statement = parseStatement(text);
  } catch {
    return text;
  }
  if (statement.kind !== 'CreateDictionary' || !statement.source) return text;
  const spans: { start: number; end: number }[] = [];
  secretSpans(statement.source, spans);
  let out = text;
  for (const s of spans.sort((a, b) => b.start - a.start))
    out = `${out.slice(0, s.start)}${MASK}${out.slice(s.end)}`;
  return out;
}
