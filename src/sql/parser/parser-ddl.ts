import type { Expr } from '../ast/expression.ts';
import type {
  AlterCommand,
  AlterStream,
  ColumnDef,
  DropObject,
  DropStatement,
  IndexDef,
  QualifiedName,
  RenameStatement,
  TruncateStatement,
  TtlItem,
} from '../ast/statement.ts';
import { QueryParser } from './parser-select.ts';
import { TokenCursor } from './token-cursor.ts';

/** Words that start an ALTER command, ending a comma list inside the previous command. */
const ALTER_WORDS = [
  'ADD',
  'DROP',
  'RENAME',
  'MODIFY',
  'COMMENT',
  'RESET',
  'REMOVE',
  'DELETE',
  'UPDATE',
  'CLEAR',
  'MATERIALIZE',
];

const COLUMN_MODIFIERS = [
  'NULL',
  'NOT',
  'DEFAULT',
  'ALIAS',
  'MATERIALIZED',
  'EPHEMERAL',
  'COMMENT',
  'CODEC',
  'TTL',
  'EXPRESSION',
  'HIERARCHICAL',
  'INJECTIVE',
  'IS_OBJECT_ID',
  'FIRST',
  'AFTER',
];

/** Column definitions, and the DDL statements that change or remove things: DROP, ALTER, RENAME, TRUNCATE. */
export abstract class DdlParser extends QueryParser {
  /** `[db.]name` */
  qualifiedName(): QualifiedName {
    const first = this.name('name');
    if (this.isOp('.') && (this.peek().type === 'ident' || this.peek().type === 'quoted')) {
      this.pos++;
      return { database: first, name: this.name('name') };
    }
    return { name: first };
  }

  ifNotExists(): boolean {
    return this.acceptKeyword('IF NOT EXISTS');
  }

  ifExists(): boolean {
    return this.acceptKeyword('IF EXISTS');
  }

  /** `name [type] [NULL|NOT NULL] [DEFAULT e | ALIAS e | ...] [COMMENT 's'] [CODEC(...)] [TTL e]` */
  columnDef(): ColumnDef {
    const start = this.token.start;
    const name = this.name('column name');
    const t = this.token;
    const hasType =
      (t.type === 'ident' && !COLUMN_MODIFIERS.includes(t.value.toUpperCase())) || t.type === 'quoted';
    const type = hasType ? this.dataType() : undefined;
    let nullable: boolean | undefined;
    let def: ColumnDef['default'];
    let codec: Expr[] | undefined;
    let ttl: Expr | undefined;
    let comment: string | undefined;
    let expression: Expr | undefined;
    let hierarchical = false;
    let injective = false;
    let isObjectId = false;
    for (;;) {
      if (this.acceptKeyword('NOT NULL')) nullable = false;
      else if (this.acceptKeyword('NULL')) nullable = true;
      else if (this.acceptKeyword('DEFAULT')) def = { kind: 'DEFAULT', expr: this.expression() };
      else if (this.acceptKeyword('ALIAS')) def = { kind: 'ALIAS', expr: this.expression() };
      else if (this.acceptKeyword('MATERIALIZED')) def = { kind: 'MATERIALIZED', expr: this.expression() };
      else if (this.acceptKeyword('EPHEMERAL')) {
        const ends =
          this.isOp(',') ||
          this.isOp(')') ||
          COLUMN_MODIFIERS.includes(this.token.value.toUpperCase()) ||
          this.atEnd();
        def = ends ? { kind: 'EPHEMERAL' } : { kind: 'EPHEMERAL', expr: this.expression() };
      } else if (this.acceptKeyword('COMMENT')) comment = this.stringLiteral();
      else if (this.acceptKeyword('CODEC')) {
        this.expectOp('(');
        codec = this.expressionList();
        this.expectOp(')');
      } else if (this.acceptKeyword('TTL')) ttl = this.expression();
      else if (this.acceptKeyword('EXPRESSION')) expression = this.expression();
      else if (this.acceptKeyword('HIERARCHICAL')) hierarchical = true;
      else if (this.acceptKeyword('INJECTIVE')) injective = true;
      else if (this.acceptKeyword('IS_OBJECT_ID')) isObjectId = true;
      else break;
    }
    const dictionary =
      expression || hierarchical || injective || isObjectId
        ? {
            ...(expression ? { expression } : {}),
            ...(hierarchical ? { hierarchical } : {}),
            ...(injective ? { injective } : {}),
            ...(isObjectId ? { isObjectId } : {}),
          }
        : undefined;
    return {
      kind: 'ColumnDef',
      name,
      ...(type ? { type } : {}),
      ...(nullable !== undefined ? { nullable } : {}),
      ...(def ? { default: def } : {}),
      ...(codec ? { codec } : {}),
      ...(ttl ? { ttl } : {}),
      ...(comment !== undefined ? { comment } : {}),
      ...(dictionary ? { dictionary } : {}),
      span: this.spanFrom(start),
    };
  }

  /** `INDEX name expr TYPE t [GRANULARITY n]` (after INDEX was consumed; `start` is its offset). */
  indexDef(start: number): IndexDef {
    const name = this.name('index name');
    const expr = this.expression();
    this.expectKeyword('TYPE');
    const type = this.expression();
    const granularity = this.acceptKeyword('GRANULARITY') ? this.expression() : undefined;
    return {
      kind: 'IndexDef',
      name,
      expr,
      type,
      ...(granularity ? { granularity } : {}),
      span: this.spanFrom(start),
    };
  }

  // --- DROP ---

  /** DROP <object> [IF EXISTS] [db.]name [SYNC] [SETTINGS ..]; DROP was consumed. */
  drop(start: number): DropStatement {
    const object = this.acceptAnyKeyword<DropObject>(
      'STREAM',
      'MATERIALIZED VIEW',
      'VIEW',
      'TABLE',
      'EXTERNAL TABLE',
      'EXTERNAL STREAM',
      'INPUT',
      'DICTIONARY',
      'FORMAT SCHEMA',
      'FUNCTION',
      'DATABASE',
    );
    if (!object) this.fail();
    const ifExists = this.ifExists();
    const target = this.qualifiedName();
    const sync = this.acceptKeyword('SYNC');
    const settings = this.acceptKeyword('SETTINGS') ? this.settingsList() : undefined;
    return {
      kind: 'Drop',
      object,
      ifExists,
      target,
      ...(sync ? { sync } : {}),
      ...(settings ? { settings } : {}),
      span: this.spanFrom(start),
    };
  }

  // --- ALTER ---

  /** ALTER STREAM|VIEW|TABLE [db.]name command, ...; ALTER was consumed. */
  alter(start: number): AlterStream {
    const object = this.acceptAnyKeyword('STREAM', 'VIEW', 'TABLE');
    if (!object) this.fail();
    const target = this.qualifiedName();
    const commands: AlterCommand[] = [];
    do commands.push(this.alterCommand());
    while (this.acceptOp(','));
    const settings = this.acceptKeyword('SETTINGS') ? this.settingsList() : undefined;
    return {
      kind: 'Alter',
      object,
      target,
      commands,
      ...(settings ? { settings } : {}),
      span: this.spanFrom(start),
    };
  }

  private alterCommand(): AlterCommand {
    const start = this.token.start;
    if (this.acceptKeyword('ADD COLUMN')) {
      const ifNotExists = this.ifNotExists();
      const column = this.columnDef();
      const first = this.acceptKeyword('FIRST');
      const after = !first && this.acceptKeyword('AFTER') ? this.name('column name') : undefined;
      return {
        kind: 'AddColumn',
        ifNotExists,
        column,
        ...(first ? { first } : {}),
        ...(after !== undefined ? { after } : {}),
        span: this.spanFrom(start),
      };
    }
    if (this.acceptKeyword('DROP COLUMN')) {
      const ifExists = this.ifExists();
      return { kind: 'DropColumn', ifExists, name: this.name('column name'), span: this.spanFrom(start) };
    }
    if (this.acceptKeyword('RENAME COLUMN')) {
      const ifExists = this.ifExists();
      const from = this.name('column name');
      this.expectKeyword('TO');
      const to = this.name('column name');
      return { kind: 'RenameColumn', ifExists, from, to, span: this.spanFrom(start) };
    }
    if (this.acceptKeyword('MODIFY COLUMN')) {
      const ifExists = this.ifExists();
      return { kind: 'ModifyColumn', ifExists, column: this.columnDef(), span: this.spanFrom(start) };
    }
    if (this.acceptKeyword('COMMENT COLUMN')) {
      const ifExists = this.ifExists();
      const name = this.name('column name');
      return {
        kind: 'CommentColumn',
        ifExists,
        name,
        comment: this.stringLiteral(),
        span: this.spanFrom(start),
      };
    }
    if (this.acceptKeyword('MODIFY SETTING'))
      return { kind: 'ModifySetting', settings: this.settingsList(), span: this.spanFrom(start) };
    if (this.acceptKeyword('RESET SETTING')) {
      const names = [this.name('setting name')];
      while (this.commaNotBefore(ALTER_WORDS)) names.push(this.name('setting name'));
      return { kind: 'ResetSetting', names, span: this.spanFrom(start) };
    }
    if (this.acceptKeyword('MODIFY TTL'))
      return { kind: 'ModifyTtl', ttl: this.ttlList(), span: this.spanFrom(start) };
    if (this.acceptKeyword('REMOVE TTL')) return { kind: 'RemoveTtl', span: this.spanFrom(start) };
    if (this.acceptKeyword('MODIFY COMMENT'))
      return { kind: 'ModifyComment', comment: this.stringLiteral(), span: this.spanFrom(start) };
    if (this.acceptKeyword('MODIFY QUERY'))
      return { kind: 'ModifyQuery', query: this.query(), span: this.spanFrom(start) };
    if (this.acceptKeyword('ADD INDEX')) {
      const ifNotExists = this.ifNotExists();
      const index = this.indexDef(start);
      const after = this.acceptKeyword('AFTER') ? this.name('index name') : undefined;
      return {
        kind: 'AddIndex',
        ifNotExists,
        index,
        ...(after !== undefined ? { after } : {}),
        span: this.spanFrom(start),
      };
    }
    if (this.acceptKeyword('DROP INDEX')) {
      const ifExists = this.ifExists();
      return { kind: 'DropIndex', ifExists, name: this.name('index name'), span: this.spanFrom(start) };
    }
    if (this.acceptKeyword('DELETE WHERE'))
      return { kind: 'Delete', where: this.expression(), span: this.spanFrom(start) };
    if (this.acceptKeyword('UPDATE')) {
      const assignments: { column: string; value: Expr }[] = [];
      do {
        const column = this.name('column name');
        this.expectOp('=');
        assignments.push({ column, value: this.expression() });
      } while (this.acceptOp(','));
      this.expectKeyword('WHERE');
      return { kind: 'Update', assignments, where: this.expression(), span: this.spanFrom(start) };
    }
    this.fail();
  }

  /** TTL items: `e [DELETE | TO VOLUME 'v' | TO DISK 'd'], ...` */
  ttlList(): TtlItem[] {
    const list: TtlItem[] = [];
    do {
      const start = this.token.start;
      const expr = this.expression();
      let action: TtlItem['action'];
      let target: string | undefined;
      if (this.acceptKeyword('DELETE')) action = 'DELETE';
      else if (this.acceptKeyword('TO VOLUME')) action = 'TO VOLUME';
      else if (this.acceptKeyword('TO DISK')) action = 'TO DISK';
      if (action === 'TO VOLUME' || action === 'TO DISK') target = this.stringLiteral();
      list.push({
        kind: 'TtlItem',
        expr,
        ...(action ? { action } : {}),
        ...(target !== undefined ? { target } : {}),
        span: this.spanFrom(start),
      });
    } while (this.commaNotBefore(ALTER_WORDS));
    return list;
  }

  /** Consume a `,` unless the word after it is one of `words` (then the comma belongs to an outer list). */
  protected commaNotBefore(words: readonly string[]): boolean {
    if (!this.isOp(',')) return false;
    const n = this.peek();
    if (n.type === 'ident' && words.includes(n.value.toUpperCase())) return false;
    this.pos++;
    return true;
  }

  // --- RENAME / TRUNCATE ---

  /** RENAME STREAM|TABLE|... [IF EXISTS] a TO b [, c TO d]; RENAME was consumed. */
  rename(start: number): RenameStatement {
    const object = this.acceptAnyKeyword('STREAM', 'TABLE', 'VIEW', 'DATABASE', 'DICTIONARY');
    if (!object) this.fail();
    const ifExists = this.ifExists();
    const pairs: { from: QualifiedName; to: QualifiedName }[] = [];
    do {
      const from = this.qualifiedName();
      this.expectKeyword('TO');
      pairs.push({ from, to: this.qualifiedName() });
    } while (this.acceptOp(','));
    return { kind: 'Rename', object, ifExists, pairs, span: this.spanFrom(start) };
  }

  /** TRUNCATE [STREAM|TABLE] [IF EXISTS] [db.]name; TRUNCATE was consumed. */
  truncate(start: number): TruncateStatement {
    const object = this.acceptAnyKeyword('STREAM', 'TABLE');
    const ifExists = this.ifExists();
    const target = this.qualifiedName();
    return { kind: 'Truncate', ...(object ? { object } : {}), ifExists, target, span: this.spanFrom(start) };
  }

  /** Is the current token the word `kw`? (no expectation recorded) */
  protected atWord(kw: string): boolean {
    return TokenCursor.isWord(this.token, kw);
  }
}
