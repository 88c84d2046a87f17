import { err } from '../../errors/tributary-error.ts';
import type { ElasticInputDefinition } from './elastic/elastic-input-definition.ts';
import { validateElasticInputSettings } from './elastic/elastic-input-definition.ts';
import { showCreateElasticInput } from './elastic/show-create-elastic-input.ts';
import type { InputSettingValue } from './input-settings.ts';

/** The definition of an input, as the catalog keeps it (one shape per input type). */
export type InputDefinition = ElasticInputDefinition;

export const INPUT_TYPES = ['elastic'] as const;

/**
 * Validate `CREATE INPUT <name> SETTINGS ... [COMMENT '...']` and resolve its defaults, by type.
 * Throws catalogue errors (INPUT_MISSING_SETTING, INPUT_UNKNOWN_TYPE, INPUT_BAD_SETTING,
 * INPUT_UNKNOWN_SETTING) that name the setting at fault.
 */
export function validateInputSettings(
  name: string,
  settings: Readonly<Record<string, InputSettingValue>>,
  comment?: string,
): InputDefinition {
  const typeKey = Object.keys(settings).find((k) => k.toLowerCase() === 'type');
  const type = typeKey === undefined ? undefined : settings[typeKey];
  if (type === undefined) throw err('INPUT_MISSING_SETTING', { input: name, setting: 'type' });
  switch (type) {
    case 'elastic':
      return validateElasticInputSettings(name, settings, comment);
    default:
      throw err('INPUT_UNKNOWN_TYPE', { input: name, type: String(type), supported: INPUT_TYPES.join(', ') });
  }
}

/** SHOW CREATE INPUT: the statement, secrets masked unless `showSecrets`. */
export function showCreateInput(def: InputDefinition, options: { showSecrets?: boolean } = {}): string {
  return showCreateElasticInput(def, options);
}
