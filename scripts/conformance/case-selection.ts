// Which cases of a suite run, and why the others are skipped. Follows the original runner's
// test_case_collect: `tests_2_run.tags_2_run` (when not empty) or `ids_2_run` pick the cases, then
// `tags_2_skip` entries whose key contains "default" drop cases carrying one of their tags. Suites
// tagged `skip`, or limited by `settings_to_run` to other settings than `default`, are skipped whole.
// Cases with out-of-scope client steps (exec, unmapped rest) are skipped with the step as reason.

import { type CaseDef, type Step, type StepItem, type SuiteFile, textOf } from './case-file.ts';
import { describeOutOfScope, mapRestStatement } from './rest-mapping.ts';

/** The setting the runner plays (the original suite ran under `default`, `redp`, `nativelog`, ...). */
export const SETTING = 'default';

function statementsOf(steps: readonly Step[] | undefined): StepItem[] {
  return (steps ?? []).flatMap((s) => (Array.isArray(s.statements) ? s.statements : []));
}

function expectedIds(c: CaseDef): Set<string> {
  return new Set((c.expected_results ?? []).map((e) => String(e.query_id)));
}

/** Why a statement list cannot run through Tributary's API, if it cannot. */
function outOfScopeReason(statements: readonly StepItem[], checkedIds: Set<string>): string | undefined {
  for (const st of statements) {
    const client = textOf(st, 'client') ?? 'python';
    if (client === 'exec') return describeOutOfScope(st);
    if (client === 'rest') {
      if (!mapRestStatement(st)) return describeOutOfScope(st);
      const id = textOf(st, 'query_id');
      if (id !== undefined && checkedIds.has(id))
        return `${describeOutOfScope(st)}: its response body is checked`;
    }
  }
  return undefined;
}

/** Why the whole suite is skipped, if it is. */
export function suiteSkipReason(suite: SuiteFile): string | undefined {
  if (suite.tag === 'skip') return 'suite tagged skip';
  const settings = suite.config.settings_to_run;
  if (Array.isArray(settings) && !settings.map(String).includes(SETTING))
    return `suite runs only under settings ${settings.map(String).join(', ')}`;
  const setupReason = outOfScopeReason(
    statementsOf(suite.config.setup ? [suite.config.setup] : []),
    new Set(),
  );
  if (setupReason) return `suite setup: ${setupReason}`;
  return undefined;
}

function tagsOf(c: CaseDef): string[] {
  return Array.isArray(c.tags) ? c.tags.map(String) : [];
}

/** Why a case is not run (undefined: it runs). */
export function caseSkipReason(suite: SuiteFile, c: CaseDef): string | undefined {
  const suiteReason = suiteSkipReason(suite);
  if (suiteReason) return suiteReason;
  const sel = suite.config.tests_2_run;
  if (sel) {
    const tagsToRun = Array.isArray(sel.tags_2_run) ? sel.tags_2_run.map(String) : [];
    const idsToRun = Array.isArray(sel.ids_2_run) ? sel.ids_2_run.map(String) : [];
    if (tagsToRun.length > 0) {
      if (!tagsOf(c).some((t) => tagsToRun.includes(t)))
        return `no tag in tags_2_run (${tagsToRun.join(', ')})`;
    } else if (idsToRun.length > 0 && idsToRun[0] !== 'all' && !idsToRun.includes(String(c.id))) {
      return 'not in ids_2_run';
    } else if (idsToRun.length === 0) {
      return 'ids_2_run is empty';
    }
    const skipSets = sel.tags_2_skip ?? {};
    const skipTags = Object.entries(skipSets)
      .filter(([key]) => key.includes(SETTING))
      .flatMap(([, tags]) => (Array.isArray(tags) ? tags.map(String) : []));
    const hit = tagsOf(c).find((t) => skipTags.includes(t));
    if (hit !== undefined) return `tag '${hit}' in tags_2_skip.${SETTING}`;
  }
  return outOfScopeReason(statementsOf(c.steps), expectedIds(c));
}
