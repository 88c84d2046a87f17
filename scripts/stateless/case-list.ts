// The cases of a directory: every NAME.sql, with NAME.reference when there is one, sorted by name,
// filtered by name substrings.

import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { CaseFiles } from './case-runner.ts';

export function listCases(dir: string, only: readonly string[] = []): CaseFiles[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .map((f) => f.slice(0, -'.sql'.length))
    .filter((name) => only.length === 0 || only.some((s) => name.includes(s)))
    .sort()
    .map((name) => {
      const reference = join(dir, `${name}.reference`);
      return {
        name,
        sqlPath: join(dir, `${name}.sql`),
        referencePath: existsSync(reference) ? reference : undefined,
      };
    });
}
