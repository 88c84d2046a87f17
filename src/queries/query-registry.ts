import type { Actor } from '../catalog/audit.ts';
import { err } from '../errors/tributary-error.ts';
import type { RowsPlan } from './execution.ts';
import type { QueryInfo } from './query-types.ts';
import { type QueryRequest, RunningQuery } from './running-query.ts';

/** How many ended queries are kept for GET /queries. */
const HISTORY = 500;

/** Every query run through the API: running ones and a bounded history of ended ones. */
export class QueryRegistry {
  private readonly queries = new Map<string, RunningQuery>();

  /** Register a planned query (not yet started). */
  add(request: QueryRequest, plan: RowsPlan, actor: Actor): RunningQuery {
    // A subscribed query recovered runs under its old id (its checkpoints are named after it).
    const earlier = plan.queryId !== undefined ? this.queries.get(plan.queryId) : undefined;
    if (earlier?.status === 'running') {
      void plan.dispose?.();
      throw err('QUERY_ALREADY_RUNNING', { id: earlier.id });
    }
    const q = new RunningQuery(request, plan, actor);
    this.queries.set(q.id, q);
    q.onEnd(() => this.trim());
    return q;
  }

  list(tag?: string): QueryInfo[] {
    return [...this.queries.values()]
      .map((q) => q.snapshot())
      .filter((q) => !tag || q.tags.includes(tag))
      .sort((a, b) => b.start_time - a.start_time);
  }

  get(id: string): RunningQuery {
    const q = this.queries.get(id);
    if (!q) throw err('QUERY_NOT_FOUND', { id });
    return q;
  }

  /** Cancel a query; a query that is not running is left as it is. */
  cancel(id: string): void {
    this.get(id).cancel();
  }

  delete(id: string): void {
    const q = this.get(id);
    if (q.status === 'running') throw err('QUERY_STILL_RUNNING', { id });
    this.queries.delete(id);
  }

  running(): RunningQuery[] {
    return [...this.queries.values()].filter((q) => q.status === 'running');
  }

  /** Cancel everything (server shutdown) and wait for the queries to end. */
  async closeAll(): Promise<void> {
    const running = this.running();
    for (const q of running) q.cancel();
    await Promise.allSettled(running.map((q) => q.done()));
  }

  private trim(): void {
    const ended = [...this.queries.values()].filter((q) => q.status !== 'running');
    if (ended.length <= HISTORY) return;
    const oldest = ended
      .sort((a, b) => a.snapshot().end_time - b.snapshot().end_time)
      .slice(0, ended.length - HISTORY);
    for (const q of oldest) this.queries.delete(q.id);
  }
}
