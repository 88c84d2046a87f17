// CPU time of this process's threads, grouped by kind (Linux: /proc/self/task/<tid>/stat and comm).
// On a shared machine wall-clock rates move with the load; CPU time per request moves much less,
// and splitting it by thread says who pays: the main (JavaScript) thread, the load generator's worker
// thread (it reports its thread id), Node's other threads (libuv's pool, which runs the engine's calls
// and the WAL's writes, and V8's helpers: GC) and the engine's own threads (ClickHouse names them).
import { readdirSync, readFileSync } from 'node:fs';

/** CPU ms per thread kind. */
export type ThreadCpu = Record<string, number>;

const TICK_MS = 10; // USER_HZ is 100 on Linux

/** The kind of a thread, from its id and name (`comm`). */
function kindOf(tid: string, comm: string, generator: ReadonlySet<string>): string {
  if (tid === String(process.pid)) return 'main';
  if (generator.has(tid)) return 'generator';
  if (comm === 'node') return 'node pool';
  return 'engine';
}

/** This thread's id (Linux), e.g. for a load generator's worker to report. */
export const THREAD_ID_SOURCE = "require('node:fs').readlinkSync('/proc/thread-self').split('/').pop()";

/**
 * Now: CPU ms used so far by each kind of thread still alive (undefined where /proc is missing);
 * `generator`: thread ids counted as the load generator's.
 */
export function threadCpu(generator: ReadonlySet<string> = new Set()): ThreadCpu | undefined {
  let tids: string[];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return undefined;
  }
  const out: ThreadCpu = {};
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'latin1');
      const comm = readFileSync(`/proc/self/task/${tid}/comm`, 'latin1').trim();
      // Fields after the parenthesised name: state is field 3; utime and stime are fields 14 and 15.
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ms = (Number(rest[11]) + Number(rest[12])) * TICK_MS;
      const kind = kindOf(tid, comm, generator);
      out[kind] = (out[kind] ?? 0) + ms;
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}

/** CPU ms per kind between two samples (threads that ended in between are not counted). */
export function threadCpuSince(
  before: ThreadCpu | undefined,
  after: ThreadCpu | undefined,
): ThreadCpu | undefined {
  if (!before || !after) return undefined;
  const out: ThreadCpu = {};
  for (const [k, v] of Object.entries(after)) out[k] = v - (before[k] ?? 0);
  return out;
}
