import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';

/** The Proton smoke suite's case files (README of /work/shared/conformance). */
export const CORPUS_DIR = '/work/shared/conformance/proton-smoke';

/** Every `query` of a `python`-client statement of the smoke suite, in file order. */
export function corpusStatements(dir = CORPUS_DIR): string[] {
  const out: string[] = [];
  for (const file of readdirSync(dir).sort()) {
    const text = readFileSync(join(dir, file), 'utf8');
    const doc = file.endsWith('.json')
      ? JSON.parse(text)
      : file.endsWith('.yaml') || file.endsWith('.yml')
        ? parseYaml(text)
        : undefined;
    if (!doc) continue;
    const visit = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(visit);
      else if (v && typeof v === 'object') {
        const o = v as Record<string, unknown>;
        if (o.client === 'python' && typeof o.query === 'string') out.push(o.query);
        for (const x of Object.values(o)) visit(x);
      }
    };
    visit(doc);
  }
  return out;
}
