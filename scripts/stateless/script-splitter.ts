// Splits a historical-SQL test script (`NAME.sql` of ../shared/conformance/proton-stateless) into
// statements the way ClickHouse's client does for its test files: a statement ends at a `;` outside
// strings, quoted names and comments; the comments that follow it on the same line belong to it
// (that is where `-- { serverError N }` hints sit); the comments before it (after the previous
// statement's line) are its leading text, echoed with it in `-- { echo }` mode.

export interface ScriptStatement {
  /** The statement as sent to the server: from its first token to before its `;`. */
  sql: string;
  /** What the client echoes: leading comments, the statement, its `;` and same-line comments. */
  echoText: string;
  /** The statement with strings, quoted names and comments blanked out (for keyword checks). */
  code: string;
  /** Comments inside the statement and after it on the same line (error hints). */
  comments: string[];
  /** Comments before the statement (only `echo` hints count there, as in the client). */
  leadingComments: string[];
  /** 1-based line of the statement's first token. */
  line: number;
}

interface Piece {
  kind: 'code' | 'string' | 'comment' | 'space';
  text: string;
  /** For comments: whether it ends at a newline (`--`, `#`) rather than `*\/`. */
  lineComment?: boolean;
}

/** Length of the quoted run starting at `i` (quote char `q`, backslash escapes, doubled quotes). */
function quotedLength(text: string, i: number, q: string): number {
  let j = i + 1;
  while (j < text.length) {
    const c = text[j]!;
    if (c === '\\') {
      j += 2;
      continue;
    }
    if (c === q) {
      if (text[j + 1] === q) {
        j += 2;
        continue;
      }
      return j + 1 - i;
    }
    j++;
  }
  return text.length - i;
}

/** Length of a block comment at `i` (nested, as ClickHouse's lexer reads them). */
function blockCommentLength(text: string, i: number): number {
  let depth = 0;
  let j = i;
  while (j < text.length) {
    if (text.startsWith('/*', j)) {
      depth++;
      j += 2;
    } else if (text.startsWith('*/', j)) {
      depth--;
      j += 2;
      if (depth === 0) return j - i;
    } else j++;
  }
  return text.length - i;
}

/** A `#` starts a comment only as `# ` or `#!` (else it is part of a name or an operator). */
function isHashComment(text: string, i: number): boolean {
  const next = text[i + 1];
  return text[i] === '#' && (next === ' ' || next === '!');
}

function lex(text: string): Piece[] {
  const out: Piece[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === "'" || c === '"' || c === '`') {
      const n = quotedLength(text, i, c);
      out.push({ kind: 'string', text: text.slice(i, i + n) });
      i += n;
    } else if (text.startsWith('--', i) || isHashComment(text, i)) {
      let j = text.indexOf('\n', i);
      if (j < 0) j = text.length;
      out.push({ kind: 'comment', text: text.slice(i, j), lineComment: true });
      i = j;
    } else if (text.startsWith('/*', i)) {
      const n = blockCommentLength(text, i);
      out.push({ kind: 'comment', text: text.slice(i, i + n) });
      i += n;
    } else if (/\s/.test(c)) {
      let j = i + 1;
      while (j < text.length && /\s/.test(text[j]!)) j++;
      out.push({ kind: 'space', text: text.slice(i, j) });
      i = j;
    } else {
      // a run of code up to the next quote, comment start, space or `;` (kept alone)
      if (c === ';') {
        out.push({ kind: 'code', text: ';' });
        i++;
        continue;
      }
      let j = i + 1;
      while (j < text.length) {
        const d = text[j]!;
        if (d === ';' || d === "'" || d === '"' || d === '`' || /\s/.test(d)) break;
        if (text.startsWith('--', j) || text.startsWith('/*', j) || isHashComment(text, j)) break;
        j++;
      }
      out.push({ kind: 'code', text: text.slice(i, j) });
      i = j;
    }
  }
  return out;
}

function blank(p: Piece): string {
  if (p.kind === 'string') return `${p.text[0]}${' '.repeat(Math.max(0, p.text.length - 2))}${p.text[0]}`;
  if (p.kind === 'comment') return ' ';
  return p.text;
}

/** Split a script into its statements (empty statements, e.g. `;;`, are dropped). */
export function splitScript(text: string): ScriptStatement[] {
  const pieces = lex(text);
  const out: ScriptStatement[] = [];
  let k = 0;
  let line = 1;
  const countLines = (s: string) => {
    for (const ch of s) if (ch === '\n') line++;
  };
  while (k < pieces.length) {
    // leading text: spaces and comments before the first code or string
    const leading: Piece[] = [];
    while (k < pieces.length && (pieces[k]!.kind === 'space' || pieces[k]!.kind === 'comment')) {
      leading.push(pieces[k]!);
      countLines(pieces[k]!.text);
      k++;
    }
    if (k >= pieces.length) break;
    if (pieces[k]!.kind === 'code' && pieces[k]!.text === ';') {
      // an empty statement
      k++;
      continue;
    }
    const startLine = line;
    const body: Piece[] = [];
    let ended = false;
    while (k < pieces.length) {
      const p = pieces[k]!;
      k++;
      if (p.kind === 'code' && p.text === ';') {
        ended = true;
        break;
      }
      body.push(p);
      countLines(p.text);
    }
    // same-line trailing comments after the `;` (spaces without a newline between them)
    const trailing: Piece[] = [];
    if (ended) {
      let m = k;
      const pending: Piece[] = [];
      while (m < pieces.length) {
        const p = pieces[m]!;
        if (p.kind === 'space') {
          if (p.text.includes('\n')) break;
          pending.push(p);
          m++;
        } else if (p.kind === 'comment') {
          trailing.push(...pending.splice(0), p);
          m++;
          if (p.lineComment) break;
        } else break;
      }
      k = m - pending.length;
      for (const p of trailing) countLines(p.text);
    }
    while (body.length > 0 && body[body.length - 1]!.kind === 'space') body.pop();
    const sql = body.map((p) => p.text).join('');
    const leadText = leading
      .map((p) => p.text)
      .join('')
      .replace(/^\s+/, '');
    const echoText = `${leadText}${sql}${ended ? ';' : ''}${trailing.map((p) => p.text).join('')}`.replace(
      /\s+$/,
      '',
    );
    out.push({
      sql,
      echoText,
      code: body.map(blank).join(''),
      comments: [...body, ...trailing].filter((p) => p.kind === 'comment').map((p) => p.text),
      leadingComments: leading.filter((p) => p.kind === 'comment').map((p) => p.text),
      line: startLine,
    });
  }
  return out;
}
