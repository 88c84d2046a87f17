// The hints ClickHouse's client reads in a test script's comments (`-- { ... }`):
// `serverError N` / `clientError N` (a code, a name such as CANNOT_PARSE_DATETIME, several
// separated by `,` or `|`, or `NAME (N)`): the statement must fail with one of those codes;
// `echo` / `echoOn` / `echoOff`: print the statements from here on before their results.
// As in the client, error hints count only in the statement and the comments after it on its line;
// echo hints count in its leading comments too.

import { ENGINE_ERROR_CODES } from './error-codes.generated.ts';
import type { ScriptStatement } from './script-splitter.ts';

export interface StatementHints {
  /** Codes the statement must fail with (empty: it must succeed). */
  errors: number[];
  /** Names in an error hint that are not engine error names (reported, not guessed). */
  unknownNames: string[];
  /** Echo state from this statement on (undefined: unchanged). */
  echo?: boolean;
}

const HINT = /\{([^{}]*)\}/g;
const ERROR_KINDS = new Set(['servererror', 'clienterror']);

function errorCodes(words: string[], i: number, hints: StatementHints): number {
  let j = i;
  while (j < words.length) {
    const w = words[j]!;
    if (/^\d+$/.test(w)) hints.errors.push(Number(w));
    else if (/^[A-Z][A-Z0-9_]*$/.test(w)) {
      const code = ENGINE_ERROR_CODES[w];
      if (code !== undefined) hints.errors.push(code);
      else hints.unknownNames.push(w);
    } else break;
    j++;
  }
  return j;
}

/** The hints of one statement. */
export function hintsOf(statement: Pick<ScriptStatement, 'comments' | 'leadingComments'>): StatementHints {
  const hints: StatementHints = { errors: [], unknownNames: [] };
  const scan = (comment: string, errorsToo: boolean) => {
    for (const m of comment.matchAll(HINT)) {
      const words = (m[1] ?? '')
        .replace(/[(),|;]/g, ' ')
        .split(/\s+/)
        .filter((w) => w.length > 0);
      let i = 0;
      while (i < words.length) {
        const w = words[i]!;
        const lower = w.toLowerCase();
        if (ERROR_KINDS.has(lower)) {
          const end = errorCodes(words, i + 1, errorsToo ? hints : { errors: [], unknownNames: [] });
          i = end;
        } else if (lower === 'echo' || lower === 'echoon') {
          hints.echo = true;
          i++;
        } else if (lower === 'echooff') {
          hints.echo = false;
          i++;
        } else i++;
      }
    }
  };
  for (const c of statement.leadingComments) scan(c, false);
  for (const c of statement.comments) scan(c, true);
  hints.errors = [...new Set(hints.errors)];
  return hints;
}
