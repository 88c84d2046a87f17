import { err } from '../../errors/tributary-error.ts';
import type { Expr, Setting } from '../../sql/ast/expression.ts';

/**
 * A setting value of `CREATE INPUT ... SETTINGS k=v, ...` as the input validators take it:
 * string literals as strings, numeric literals as numbers, true/false as booleans.
 */
export type InputSettingValue = string | number | boolean;

/**
 * The SETTINGS of a parsed `CREATE INPUT` (`src/sql` AST) as a name -> value record for
 * `validateInputSettings`. Values must be literals (a bare name such as `target_stream=logs` is
 * taken as the string `logs`); anything else, or a setting given twice, is INPUT_BAD_SETTING
 * naming the setting.
 */
export function inputSettingsFromAst(
  input: string,
  settings: readonly Setting[],
): Record<string, InputSettingValue> {
  const out: Record<string, InputSettingValue> = {};
  for (const s of settings) {
    if (Object.hasOwn(out, s.name))
      throw err('INPUT_BAD_SETTING', { input, setting: s.name, detail: 'is given twice' });
    out[s.name] = literal(input, s.name, s.value);
  }
  return out;
}

function literal(input: string, setting: string, e: Expr): InputSettingValue {
  switch (e.kind) {
    case 'String':
    case 'Bool':
      return e.value;
    case 'Number':
      return numberOf(input, setting, e.text);
    case 'Unary':
      if (e.op === '-' && e.operand.kind === 'Number') return -numberOf(input, setting, e.operand.text);
      break;
    case 'Identifier':
      if (e.parts.length === 1) return e.parts[0]!;
      break;
  }
  throw err('INPUT_BAD_SETTING', {
    input,
    setting,
    detail: 'must be a literal (a quoted string, a number or true/false)',
  });
}

function numberOf(input: string, setting: string, text: string): number {
  const n = Number(text);
  if (!Number.isFinite(n))
    throw err('INPUT_BAD_SETTING', { input, setting, detail: `is not a finite number: ${text}` });
  return n;
}
