import type { BinaryOp, Expr } from '../ast/expression.ts';
import { SHORTHAND_SUFFIX } from '../printer/print-expression.ts';
import { quoteString } from '../printer/sql-text.ts';
import { printDataType } from '../types/data-type.ts';

/**
 * The name Proton gives a result column that has no alias: ClickHouse's column-name rules
 * (operators written as functions, arguments joined by ", ") with Proton's snake_case function
 * names, e.g. `count()`, `max(value)`, `plus(a, 1)`, `to_string(window_start)`. The translator
 * aliases computed select items with it so result headers read as in Proton.
 */
export function protonColumnName(e: Expr): string {
  switch (e.kind) {
    case 'Number':
      return e.text;
    case 'String':
      return quoteString(e.value);
    case 'Null':
      return 'NULL';
    case 'Bool':
      return e.value ? 'true' : 'false';
    case 'Identifier':
      return e.parts.join('.');
    case 'Asterisk':
      return '*';
    case 'Columns':
      return e.pattern !== undefined
        ? `COLUMNS(${quoteString(e.pattern)})`
        : `COLUMNS(${(e.columns ?? []).map(protonColumnName).join(', ')})`;
    case 'Array':
      return `[${e.elements.map(protonColumnName).join(', ')}]`;
    case 'Tuple':
      return `tuple(${e.elements.map(protonColumnName).join(', ')})`;
    case 'Map':
      return `map(${e.entries.map((x) => `${protonColumnName(x.key)}, ${protonColumnName(x.value)}`).join(', ')})`;
    case 'Range':
      return `[${protonColumnName(e.start)}, ${protonColumnName(e.end)}]`;
    case 'Interval':
      return e.shorthand && e.value.kind === 'Number'
        ? `${e.value.text}${SHORTHAND_SUFFIX[e.unit]}`
        : `to_interval_${e.unit.toLowerCase()}(${protonColumnName(e.value)})`;
    case 'Function': {
      // `count(*)` is named `count()`, as ClickHouse (and Proton) name it.
      if (
        e.name.toLowerCase() === 'count' &&
        e.args.length === 1 &&
        e.args[0]?.kind === 'Asterisk' &&
        !e.over
      )
        return `${e.name}()`;
      const args = `${e.distinct ? 'DISTINCT ' : ''}${e.args.map(protonColumnName).join(', ')}`;
      const head = e.params
        ? `${e.name}(${e.params.map(protonColumnName).join(', ')})(${args})`
        : `${e.name}(${args})`;
      return e.over !== undefined ? `${head} OVER (...)` : head;
    }
    case 'Lambda':
      return `lambda(tuple(${e.params.join(', ')}), ${protonColumnName(e.body)})`;
    case 'Unary':
      return e.op === 'NOT'
        ? `not(${protonColumnName(e.operand)})`
        : `negate(${protonColumnName(e.operand)})`;
    case 'Binary':
      return `${BINARY_NAMES[e.op]}(${protonColumnName(e.left)}, ${protonColumnName(e.right)})`;
    case 'Between': {
      const x = protonColumnName(e.expr);
      const inner = `and(greater_or_equals(${x}, ${protonColumnName(e.low)}), less_or_equals(${x}, ${protonColumnName(e.high)}))`;
      return e.not ? `not(${inner})` : inner;
    }
    case 'IsNull':
      return `${e.not ? 'is_not_null' : 'is_null'}(${protonColumnName(e.expr)})`;
    case 'Case': {
      const parts = e.whens.flatMap((w) => [protonColumnName(w.when), protonColumnName(w.result)]);
      if (e.operand)
        return `case_with_expression(${[protonColumnName(e.operand), ...parts, e.else ? protonColumnName(e.else) : 'NULL'].join(', ')})`;
      return `multi_if(${[...parts, e.else ? protonColumnName(e.else) : 'NULL'].join(', ')})`;
    }
    case 'Cast':
      return `cast(${protonColumnName(e.expr)}, ${quoteString(printDataType(e.type))})`;
    case 'JsonAccess':
      // Proton names the shortcut by its text (the code name of its json_value call).
      return `${protonColumnName(e.object)}:${e.path}`;
    case 'Subscript':
      return `array_element(${protonColumnName(e.object)}, ${protonColumnName(e.index)})`;
    case 'TupleElement':
      return `tuple_element(${protonColumnName(e.object)}, ${e.index})`;
    case 'Ternary':
      return `if(${protonColumnName(e.condition)}, ${protonColumnName(e.whenTrue)}, ${protonColumnName(e.whenFalse)})`;
    case 'Subquery':
      return '_subquery';
    case 'Alias':
      return e.alias;
  }
}

const BINARY_NAMES: Record<BinaryOp, string> = {
  OR: 'or',
  AND: 'and',
  '=': 'equals',
  '!=': 'not_equals',
  '<': 'less',
  '>': 'greater',
  '<=': 'less_or_equals',
  '>=': 'greater_or_equals',
  LIKE: 'like',
  'NOT LIKE': 'not_like',
  ILIKE: 'ilike',
  'NOT ILIKE': 'not_ilike',
  IN: 'in',
  'NOT IN': 'not_in',
  'GLOBAL IN': 'global_in',
  'GLOBAL NOT IN': 'global_not_in',
  '||': 'concat',
  '+': 'plus',
  '-': 'minus',
  '*': 'multiply',
  '/': 'divide',
  '%': 'modulo',
  DIV: 'int_div',
};
