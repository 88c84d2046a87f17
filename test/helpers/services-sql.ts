import type { Services } from '../../src/api/services.ts';

/** The user in-process tests plan as. */
export const ADMIN_USER = { username: 'admin', role: 'admin' as const };

/** Plan and run one statement (DDL, INSERT) in-process as the admin, without HTTP. */
export async function runStatement(s: Services, sql: string): Promise<void> {
  const plan = await s.planner.plan(sql, { user: ADMIN_USER });
  if (plan.kind !== 'statement') throw new Error(`not a statement: ${sql}`);
  await plan.run(new AbortController().signal);
}
