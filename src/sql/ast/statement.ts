import type { DataType } from '../types/data-type.ts';
import type { Expr, Identifier, Setting } from './expression.ts';
import type { Query } from './query.ts';
import type { Span } from './span.ts';

/** Every statement the dialect has. Queries (SELECT / UNION) are statements too. */
export type Statement =
  | Query
  | CreateStream
  | CreateView
  | CreateExternalTable
  | CreateInput
  | CreateDictionary
  | CreateFormatSchema
  | CreateFunction
  | CreateDatabase
  | DropStatement
  | AlterStream
  | RenameStatement
  | TruncateStatement
  | InsertStatement
  | ShowStatement
  | ShowCreateStatement
  | DescribeStatement
  | ExplainStatement
  | KillQueryStatement
  | UseStatement
  | SetStatement
  | OptimizeStatement
  | SystemStatement
  | SubscribeStatement
  | RecoverStatement
  | UnsubscribeStatement;

/** `[db.]name` */
export interface QualifiedName {
  readonly database?: string;
  readonly name: string;
}

/** A column definition of CREATE STREAM / EXTERNAL TABLE / DICTIONARY / ALTER ... ADD COLUMN. */
export interface ColumnDef {
  readonly kind: 'ColumnDef';
  readonly name: string;
  /** Omitted only when a DEFAULT/ALIAS expression gives the type. */
  readonly type?: DataType;
  /** `NULL` / `NOT NULL` after the type (ClickHouse style). */
  readonly nullable?: boolean;
  readonly default?: {
    readonly kind: 'DEFAULT' | 'ALIAS' | 'MATERIALIZED' | 'EPHEMERAL';
    readonly expr?: Expr;
  };
  /** Codec calls, e.g. `CODEC(DoubleDelta, LZ4)` -> [DoubleDelta, LZ4] (identifiers or calls). */
  readonly codec?: readonly Expr[];
  readonly ttl?: Expr;
  readonly comment?: string;
  /** Dictionary attributes: `EXPRESSION expr`, `HIERARCHICAL`, `INJECTIVE`, `IS_OBJECT_ID`. */
  readonly dictionary?: {
    readonly expression?: Expr;
    readonly hierarchical?: boolean;
    readonly injective?: boolean;
    readonly isObjectId?: boolean;
  };
  readonly span: Span;
}

/** One TTL rule: `expr [DELETE | TO VOLUME 'v' | TO DISK 'd']`. */
export interface TtlItem {
  readonly kind: 'TtlItem';
  readonly expr: Expr;
  readonly action?: 'DELETE' | 'TO VOLUME' | 'TO DISK';
  readonly target?: string;
  readonly span: Span;
}

/** `INDEX name expr TYPE type [GRANULARITY n]` inside a column list. */
export interface IndexDef {
  readonly kind: 'IndexDef';
  readonly name: string;
  readonly expr: Expr;
  /** `minmax` (Identifier) or `bloom_filter(0.01)` (FunctionCall). */
  readonly type: Expr;
  readonly granularity?: Expr;
  readonly span: Span;
}

/**
 * CREATE [OR REPLACE] [RANDOM | EXTERNAL | MUTABLE] STREAM [IF NOT EXISTS] [db.]name (columns..., INDEX ...)
 * [ENGINE = ...] [ORDER BY e] [PARTITION BY e] [PRIMARY KEY e] [TTL e, ...] [SETTINGS ...] [COMMENT '..'] [AS query]
 */
export interface CreateStream {
  readonly kind: 'CreateStream';
  readonly variant: 'STREAM' | 'RANDOM' | 'EXTERNAL' | 'MUTABLE';
  readonly orReplace: boolean;
  readonly ifNotExists: boolean;
  readonly target: QualifiedName;
  readonly columns: readonly ColumnDef[];
  readonly indexes: readonly IndexDef[];
  /** `PRIMARY KEY (a, b)` written inside the column list. */
  readonly columnsPrimaryKey?: Expr;
  readonly engine?: Expr;
  readonly orderBy?: Expr;
  readonly partitionBy?: Expr;
  readonly primaryKey?: Expr;
  readonly ttl?: readonly TtlItem[];
  readonly settings?: readonly Setting[];
  readonly comment?: string;
  readonly asQuery?: Query;
  readonly span: Span;
}

/** CREATE [OR REPLACE] [MATERIALIZED] VIEW [IF NOT EXISTS] [db.]name [(cols)] [INTO [db.]target] AS query [COMMENT ..] */
export interface CreateView {
  readonly kind: 'CreateView';
  readonly materialized: boolean;
  readonly orReplace: boolean;
  readonly ifNotExists: boolean;
  readonly target: QualifiedName;
  readonly columns?: readonly ColumnDef[];
  readonly into?: QualifiedName;
  readonly query: Query;
  readonly comment?: string;
  readonly span: Span;
}

/** CREATE [OR REPLACE] EXTERNAL TABLE [IF NOT EXISTS] [db.]name [(cols)] [PARTITION BY e] SETTINGS ... [COMMENT '..'] */
export interface CreateExternalTable {
  readonly kind: 'CreateExternalTable';
  readonly orReplace: boolean;
  readonly ifNotExists: boolean;
  readonly target: QualifiedName;
  readonly columns: readonly ColumnDef[];
  readonly partitionBy?: Expr;
  readonly settings?: readonly Setting[];
  readonly comment?: string;
  readonly span: Span;
}

/** CREATE INPUT [IF NOT EXISTS] name SETTINGS type='elastic', ... [COMMENT '..'] */
export interface CreateInput {
  readonly kind: 'CreateInput';
  readonly ifNotExists: boolean;
  readonly name: string;
  readonly settings: readonly Setting[];
  readonly comment?: string;
  readonly span: Span;
}

/** A call of the dictionary DDL: `TIMEPLUS(STREAM 'x')`, `HASHED()`, `FLAT(INITIAL_ARRAY_SIZE 5)`. */
export interface DictionaryCall {
  readonly kind: 'DictionaryCall';
  readonly name: string;
  readonly args: readonly { readonly key: string; readonly value: Expr | DictionaryCall }[];
  readonly span: Span;
}

/** CREATE [OR REPLACE] DICTIONARY [IF NOT EXISTS] name (cols) PRIMARY KEY .. SOURCE(..) LAYOUT(..) LIFETIME(..) [RANGE(..)] [SETTINGS(..)] [COMMENT ..] */
export interface CreateDictionary {
  readonly kind: 'CreateDictionary';
  readonly orReplace: boolean;
  readonly ifNotExists: boolean;
  readonly target: QualifiedName;
  readonly columns: readonly ColumnDef[];
  readonly primaryKey: readonly Expr[];
  readonly source?: DictionaryCall;
  readonly layout?: DictionaryCall;
  /** `LIFETIME(300)` -> {max: 300}; `LIFETIME(MIN 0 MAX 300)` -> {min, max}. */
  readonly lifetime?: { readonly min?: Expr; readonly max: Expr };
  readonly range?: { readonly min: Identifier; readonly max: Identifier };
  readonly settings?: readonly Setting[];
  readonly comment?: string;
  readonly span: Span;
}

/** CREATE [OR REPLACE] FORMAT SCHEMA name AS 'body' TYPE Protobuf|Avro */
export interface CreateFormatSchema {
  readonly kind: 'CreateFormatSchema';
  readonly orReplace: boolean;
  readonly ifNotExists: boolean;
  readonly name: string;
  readonly body: string;
  readonly schemaType: string;
  readonly span: Span;
}

export interface FunctionParam {
  readonly name: string;
  readonly type: DataType;
}

/**
 * CREATE [OR REPLACE] [AGGREGATE | REMOTE] FUNCTION [IF NOT EXISTS] name ...
 * - SQL:        `CREATE FUNCTION f AS (x, y) -> x + y`                         (lambda)
 * - Script:     `CREATE [AGGREGATE] FUNCTION f(a type) RETURNS type LANGUAGE JAVASCRIPT AS $$..$$`
 * - Remote:     `CREATE REMOTE FUNCTION f(a type) RETURNS type URL '..' AUTH_METHOD '..' [AUTH_HEADER '..' AUTH_KEY '..'] [EXECUTION_TIMEOUT n]`
 */
export interface CreateFunction {
  readonly kind: 'CreateFunction';
  readonly variant: 'SQL' | 'SCRIPT' | 'REMOTE';
  readonly aggregate: boolean;
  readonly orReplace: boolean;
  readonly ifNotExists: boolean;
  readonly name: string;
  readonly params?: readonly FunctionParam[];
  readonly returns?: DataType;
  readonly lambda?: Expr;
  readonly language?: string;
  readonly body?: string;
  readonly url?: string;
  readonly authMethod?: string;
  readonly authHeader?: string;
  readonly authKey?: string;
  readonly executionTimeout?: Expr;
  readonly span: Span;
}

/** CREATE DATABASE [IF NOT EXISTS] name [ENGINE = ..] [COMMENT '..'] */
export interface CreateDatabase {
  readonly kind: 'CreateDatabase';
  readonly ifNotExists: boolean;
  readonly name: string;
  readonly engine?: Expr;
  readonly comment?: string;
  readonly span: Span;
}

export type DropObject =
  | 'STREAM'
  | 'VIEW'
  | 'MATERIALIZED VIEW'
  | 'TABLE'
  | 'EXTERNAL TABLE'
  | 'EXTERNAL STREAM'
  | 'INPUT'
  | 'DICTIONARY'
  | 'FORMAT SCHEMA'
  | 'FUNCTION'
  | 'DATABASE';

/** DROP <object> [IF EXISTS] [db.]name [SYNC] [SETTINGS ..] */
export interface DropStatement {
  readonly kind: 'Drop';
  readonly object: DropObject;
  readonly ifExists: boolean;
  readonly target: QualifiedName;
  readonly sync?: boolean;
  readonly settings?: readonly Setting[];
  readonly span: Span;
}

export type AlterCommand =
  | {
      readonly kind: 'AddColumn';
      readonly ifNotExists: boolean;
      readonly column: ColumnDef;
      readonly first?: boolean;
      readonly after?: string;
      readonly span: Span;
    }
  | { readonly kind: 'DropColumn'; readonly ifExists: boolean; readonly name: string; readonly span: Span }
  | {
      readonly kind: 'RenameColumn';
      readonly ifExists: boolean;
      readonly from: string;
      readonly to: string;
      readonly span: Span;
    }
  | {
      readonly kind: 'ModifyColumn';
      readonly ifExists: boolean;
      readonly column: ColumnDef;
      readonly span: Span;
    }
  | {
      readonly kind: 'CommentColumn';
      readonly ifExists: boolean;
      readonly name: string;
      readonly comment: string;
      readonly span: Span;
    }
  | { readonly kind: 'ModifySetting'; readonly settings: readonly Setting[]; readonly span: Span }
  | { readonly kind: 'ResetSetting'; readonly names: readonly string[]; readonly span: Span }
  | { readonly kind: 'ModifyTtl'; readonly ttl: readonly TtlItem[]; readonly span: Span }
  | { readonly kind: 'RemoveTtl'; readonly span: Span }
  | { readonly kind: 'ModifyComment'; readonly comment: string; readonly span: Span }
  | { readonly kind: 'ModifyQuery'; readonly query: Query; readonly span: Span }
  | {
      readonly kind: 'AddIndex';
      readonly ifNotExists: boolean;
      readonly index: IndexDef;
      readonly after?: string;
      readonly span: Span;
    }
  | { readonly kind: 'DropIndex'; readonly ifExists: boolean; readonly name: string; readonly span: Span }
  | { readonly kind: 'Delete'; readonly where: Expr; readonly span: Span }
  | {
      readonly kind: 'Update';
      readonly assignments: readonly { readonly column: string; readonly value: Expr }[];
      readonly where: Expr;
      readonly span: Span;
    };

/** ALTER STREAM|VIEW|TABLE [db.]name command, command, ... */
export interface AlterStream {
  readonly kind: 'Alter';
  readonly object: 'STREAM' | 'VIEW' | 'TABLE';
  readonly target: QualifiedName;
  readonly commands: readonly AlterCommand[];
  readonly settings?: readonly Setting[];
  readonly span: Span;
}

/** RENAME STREAM|TABLE|VIEW|DATABASE|DICTIONARY [IF EXISTS] a TO b [, c TO d] */
export interface RenameStatement {
  readonly kind: 'Rename';
  readonly object: 'STREAM' | 'TABLE' | 'VIEW' | 'DATABASE' | 'DICTIONARY';
  readonly ifExists: boolean;
  readonly pairs: readonly { readonly from: QualifiedName; readonly to: QualifiedName }[];
  readonly span: Span;
}

/** TRUNCATE [STREAM|TABLE] [IF EXISTS] [db.]name */
export interface TruncateStatement {
  readonly kind: 'Truncate';
  readonly object?: 'STREAM' | 'TABLE';
  readonly ifExists: boolean;
  readonly target: QualifiedName;
  readonly span: Span;
}

/**
 * INSERT INTO [STREAM|TABLE] [db.]name | FUNCTION f(...) [(cols | * EXCEPT ...)] [SETTINGS ..]
 *   VALUES (..)(..) | SELECT ... | FORMAT name <data>
 */
export interface InsertStatement {
  readonly kind: 'Insert';
  readonly target?: QualifiedName;
  readonly tableFunction?: Expr;
  /** Identifiers, or an Asterisk (with EXCEPT). Undefined: all columns. */
  readonly columns?: readonly Expr[];
  readonly settings?: readonly Setting[];
  readonly values?: readonly (readonly Expr[])[];
  readonly query?: Query;
  readonly format?: string;
  /** The raw data after `FORMAT name`. */
  readonly data?: string;
  readonly span: Span;
}

export type ShowWhat =
  | 'STREAMS'
  | 'TABLES'
  | 'DATABASES'
  | 'VIEWS'
  | 'MATERIALIZED VIEWS'
  | 'EXTERNAL STREAMS'
  | 'EXTERNAL TABLES'
  | 'DICTIONARIES'
  | 'FUNCTIONS'
  | 'INPUTS'
  | 'FORMAT SCHEMAS'
  | 'SETTINGS'
  | 'PROCESSLIST'
  | 'COLUMNS'
  | 'USERS';

/** SHOW [FULL] STREAMS [FROM db] [LIKE '..' | WHERE ..] [LIMIT n], SHOW INPUTS, SHOW COLUMNS FROM t, ... */
export interface ShowStatement {
  readonly kind: 'Show';
  readonly what: ShowWhat;
  readonly full?: boolean;
  readonly from?: QualifiedName;
  readonly like?: string;
  readonly notLike?: boolean;
  readonly ilike?: boolean;
  readonly where?: Expr;
  readonly limit?: Expr;
  readonly span: Span;
}

export type ShowCreateObject =
  | 'STREAM'
  | 'TABLE'
  | 'VIEW'
  | 'MATERIALIZED VIEW'
  | 'EXTERNAL STREAM'
  | 'EXTERNAL TABLE'
  | 'DATABASE'
  | 'DICTIONARY'
  | 'INPUT'
  | 'FORMAT SCHEMA'
  | 'FUNCTION';

/** SHOW CREATE [object] [db.]name  (object omitted: a stream/table) */
export interface ShowCreateStatement {
  readonly kind: 'ShowCreate';
  readonly object?: ShowCreateObject;
  readonly target: QualifiedName;
  readonly span: Span;
}

/** DESCRIBE|DESC [STREAM|TABLE] [db.]name | table_function(...) | (query) [SETTINGS ..] */
export interface DescribeStatement {
  readonly kind: 'Describe';
  readonly target?: QualifiedName;
  readonly tableFunction?: Expr;
  readonly query?: Query;
  readonly settings?: readonly Setting[];
  readonly span: Span;
}

/** EXPLAIN [AST | SYNTAX | PLAN | PIPELINE | ESTIMATE | QUERY TREE] [k = v, ...] statement */
export interface ExplainStatement {
  readonly kind: 'Explain';
  readonly explainKind?:
    | 'AST'
    | 'SYNTAX'
    | 'PLAN'
    | 'PIPELINE'
    | 'ESTIMATE'
    | 'QUERY TREE'
    | 'TABLE OVERRIDE';
  readonly options: readonly Setting[];
  readonly statement: Statement;
  readonly span: Span;
}

/** KILL QUERY WHERE expr [SYNC | ASYNC | TEST] */
export interface KillQueryStatement {
  readonly kind: 'KillQuery';
  readonly where: Expr;
  readonly mode?: 'SYNC' | 'ASYNC' | 'TEST';
  readonly span: Span;
}

export interface UseStatement {
  readonly kind: 'Use';
  readonly database: string;
  readonly span: Span;
}

/** SET k = v, ... */
export interface SetStatement {
  readonly kind: 'Set';
  readonly settings: readonly Setting[];
  readonly span: Span;
}

/** OPTIMIZE [STREAM|TABLE] [db.]name [PARTITION expr] [FINAL] [DEDUPLICATE] */
export interface OptimizeStatement {
  readonly kind: 'Optimize';
  readonly target: QualifiedName;
  readonly partition?: Expr;
  readonly final: boolean;
  readonly deduplicate: boolean;
  readonly span: Span;
}

/** SYSTEM <words...>: kept as the normalised word list (e.g. ['FLUSH', 'LOGS']) plus an optional target. */
export interface SystemStatement {
  readonly kind: 'System';
  readonly words: readonly string[];
  readonly target?: QualifiedName;
  readonly span: Span;
}

/** Proton checkpointed queries: SUBSCRIBE TO <query> (settings belong to the query). */
export interface SubscribeStatement {
  readonly kind: 'Subscribe';
  readonly query: Query;
  readonly span: Span;
}

/** RECOVER FROM '<query_id>' */
export interface RecoverStatement {
  readonly kind: 'Recover';
  readonly queryId: string;
  readonly span: Span;
}

/** UNSUBSCRIBE TO '<query_id>' */
export interface UnsubscribeStatement {
  readonly kind: 'Unsubscribe';
  readonly queryId: string;
  readonly span: Span;
}
