import type { InputSettingValue } from '../input-settings.ts';
import {
  type ElasticInputDefinition,
  elasticInputSettings,
  isSecretSetting,
} from './elastic-input-definition.ts';

/** What SHOW CREATE INPUT prints in place of a secret. */
export const MASKED_SECRET = '******';

/**
 * `SHOW CREATE INPUT <name>`: the statement that recreates the input, with every resolved
 * setting, in a fixed order, and secrets (the password) masked unless `showSecrets` is set.
 */
export function showCreateElasticInput(
  def: ElasticInputDefinition,
  options: { showSecrets?: boolean } = {},
): string {
  const settings = Object.entries(elasticInputSettings(def)).map(([key, value]) => {
    const shown = isSecretSetting(key) && !options.showSecrets ? MASKED_SECRET : value;
    return `${key}=${literal(shown)}`;
  });
  const comment = def.comment !== undefined ? ` COMMENT ${quote(def.comment)}` : '';
  return `CREATE INPUT ${identifier(def.name)} SETTINGS ${settings.join(', ')}${comment}`;
}

function literal(v: InputSettingValue): string {
  return typeof v === 'string' ? quote(v) : String(v);
}

function quote(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

function identifier(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name)
    ? name
    : `\`${name.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``;
}
