import { actorOf } from '../../catalog/audit.ts';
import { err } from '../../errors/tributary-error.ts';
import type { StatementHandler } from '../../queries/statement-handler.ts';
import { StaticRows, statementPlan } from '../../queries/static-rows.ts';
import { showNameFilter } from '../../sql/ast/build.ts';
import type {
  CreateInput,
  DropStatement,
  QualifiedName,
  ShowCreateStatement,
  ShowStatement,
} from '../../sql/ast/statement.ts';
import { elasticInputSettings, isSecretSetting } from './elastic/elastic-input-definition.ts';
import { MASKED_SECRET } from './elastic/show-create-elastic-input.ts';
import { type InputDefinition, showCreateInput, validateInputSettings } from './input-definition.ts';
import type { InputService } from './input-service.ts';
import { inputSettingsFromAst } from './input-settings.ts';
import type { InputStatus } from './running-inputs.ts';

/**
 * CREATE INPUT [IF NOT EXISTS] name SETTINGS type='elastic', target_stream='s', ... [COMMENT '..'].
 * Settings and the target stream are checked when the statement is planned; the listener starts
 * and the definition is stored when it runs (a port in use leaves nothing behind).
 */
export function createInputHandler(inputs: InputService): StatementHandler<CreateInput> {
  return async (s, ctx) => {
    const definition = validateInputSettings(s.name, inputSettingsFromAst(s.name, s.settings), s.comment);
    return statementPlan(ctx.sql, 'create', async () => {
      await inputs.create(definition, actorOf(ctx.options.user.username), { ifNotExists: s.ifNotExists });
    });
  };
}

/** DROP INPUT [IF EXISTS] name: the definition is forgotten and the listener stops. */
export function dropInputHandler(inputs: InputService): StatementHandler<DropStatement> {
  return async (s, ctx) =>
    statementPlan(ctx.sql, 'drop', async () => {
      await inputs.drop(inputName(s.target), { ifExists: s.ifExists });
    });
}

/** SHOW CREATE INPUT name: the statement, every setting resolved, the password masked. */
export function showCreateInputHandler(inputs: InputService): StatementHandler<ShowCreateStatement> {
  return async (s, ctx) => {
    const name = inputName(s.target);
    const record = inputs.definition(name);
    if (!record) throw err('RESOURCE_NOT_FOUND', { kind: 'Input', name });
    return new StaticRows(
      [{ name: 'statement', type: 'string' }],
      [[showCreateInput(record.value)]],
      ctx.sql,
      'show',
    );
  };
}

export const SHOW_INPUTS_HEADER = [
  { name: 'name', type: 'string' },
  { name: 'type', type: 'string' },
  { name: 'target_stream', type: 'string' },
  { name: 'status', type: 'string' },
  { name: 'listen_host', type: 'string' },
  { name: 'tcp_port', type: 'uint16' },
  { name: 'bound_port', type: 'nullable(uint16)' },
  { name: 'settings', type: 'string' },
  { name: 'comment', type: 'string' },
  { name: 'started_at', type: 'nullable(string)' },
  { name: 'docs_accepted', type: 'uint64' },
  { name: 'docs_rejected', type: 'uint64' },
  { name: 'bytes_received', type: 'uint64' },
  { name: 'requests', type: 'uint64' },
  { name: 'bulk_requests', type: 'uint64' },
  { name: 'failed_requests', type: 'uint64' },
  { name: 'last_error', type: 'nullable(string)' },
  { name: 'last_error_at', type: 'nullable(string)' },
];

/**
 * SHOW INPUTS [FROM db] [LIKE '..'] [LIMIT n]: one row per input with its settings (secrets
 * masked), status, bound port and traffic counters. FROM filters by the target stream's database.
 */
export function showInputsHandler(inputs: InputService): StatementHandler<ShowStatement> {
  return async (s, ctx) => {
    if (s.where) throw err('NOT_IMPLEMENTED', { detail: 'SHOW INPUTS ... WHERE is not supported; use LIKE' });
    const test = showNameFilter(s);
    const limit = limitOf(s);
    const rows: unknown[][] = [];
    for (const status of inputs.list()) {
      if (!test(status.name)) continue;
      const record = inputs.definition(status.name);
      if (s.from && (!record || inputs.targetOf(record.value).db !== s.from.name)) continue;
      rows.push(showInputsRow(status, record?.value));
    }
    return new StaticRows(SHOW_INPUTS_HEADER, rows.slice(0, limit), ctx.sql, 'show');
  };
}

function showInputsRow(status: InputStatus, def: InputDefinition | undefined): unknown[] {
  const st = status.stats;
  return [
    status.name,
    status.type,
    status.target_stream,
    status.status,
    status.listen_host,
    status.tcp_port,
    status.bound_port,
    def ? maskedSettings(def) : '',
    status.comment ?? '',
    status.started_at,
    st.docs_accepted,
    st.docs_rejected,
    st.bytes_received,
    st.requests,
    st.bulk_requests,
    st.failed_requests,
    st.last_error?.message ?? null,
    st.last_error?.at ?? null,
  ];
}

/** `type='elastic', target_stream='logs', ..., password='******'`, in SHOW CREATE's order. */
export function maskedSettings(def: InputDefinition): string {
  return Object.entries(elasticInputSettings(def))
    .map(([k, v]) => {
      const shown = isSecretSetting(k) ? MASKED_SECRET : v;
      return `${k}=${typeof shown === 'string' ? `'${shown.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'` : String(shown)}`;
    })
    .join(', ');
}

/** Input names are not per database: `db.name` is taken as the name `db.name`. */
function inputName(target: QualifiedName): string {
  return target.database ? `${target.database}.${target.name}` : target.name;
}

function limitOf(s: ShowStatement): number {
  if (!s.limit) return Number.POSITIVE_INFINITY;
  if (s.limit.kind === 'Number' && /^\d+$/.test(s.limit.text)) return Number(s.limit.text);
  throw err('BAD_ARGUMENTS', { detail: 'SHOW INPUTS ... LIMIT takes a non-negative integer' });
}
