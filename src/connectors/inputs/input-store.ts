import type { Actor } from '../../catalog/audit.ts';
import type { Catalog, CatalogRecord } from '../../catalog/catalog.ts';
import type { InputDefinition } from './input-definition.ts';

/** The catalog kind of input definitions; the key is the input's name (inputs are not per database). */
export const INPUT_KIND = 'input';

export type InputRecord = CatalogRecord<InputDefinition>;

/**
 * Input definitions as the catalog keeps them (kind `input`, key = name, value = the resolved
 * definition, password included: the listener needs it to check Basic auth).
 */
export class InputStore {
  constructor(private readonly catalog: Catalog) {}

  get(name: string): InputRecord | undefined {
    return this.catalog.get<InputDefinition>(INPUT_KIND, name);
  }

  list(): InputRecord[] {
    return this.catalog.list<InputDefinition>(INPUT_KIND).sort((a, b) => a.key.localeCompare(b.key));
  }

  /** Throws RESOURCE_ALREADY_EXISTS when the name is taken. */
  create(definition: InputDefinition, actor: Actor): Promise<InputRecord> {
    return this.catalog.create(INPUT_KIND, definition.name, definition, actor);
  }

  delete(name: string): Promise<boolean> {
    return this.catalog.delete(INPUT_KIND, name);
  }
}
