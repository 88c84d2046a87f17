import { err } from '../../errors/tributary-error.ts';

/** Where and how to reach another Tributary (or Timeplus) server's REST API. */
export interface TimeplusRemote {
  /** The base the `/v1beta2/...` paths go after, e.g. `http://127.0.0.1:8000/default/api`. */
  readonly base: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly db: string;
  readonly stream: string;
}

/** A remote query's header (Proton type names) and rows as it answers them. */
export interface RemoteBatch {
  readonly columns: readonly string[];
  readonly rows: readonly unknown[][];
}

/** An identifier as the remote's Proton SQL writes it. */
export function quoteRemote(name: string): string {
  return `\`${name.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``;
}

/** `db`.`stream` on the remote. */
export function remoteName(r: TimeplusRemote): string {
  return `${quoteRemote(r.db)}.${quoteRemote(r.stream)}`;
}

/**
 * Run `sql` on the remote through its SSE query channel (POST /v1beta2/queries) and hand each
 * batch of rows to `onRows` until the query ends, `signal` aborts, or `onRows` answers false.
 * A refusal (4xx/5xx) throws EXTERNAL_STREAM_REMOTE_FAILED with the remote's message.
 */
export async function remoteQuery(
  r: TimeplusRemote,
  sql: string,
  signal: AbortSignal,
  onRows: (batch: RemoteBatch) => boolean | Promise<boolean>,
): Promise<void> {
  const controller = new AbortController();
  const stop = () => controller.abort();
  signal.addEventListener('abort', stop, { once: true });
  try {
    let res: Response;
    try {
      res = await fetch(`${r.base}/v1beta2/queries`, {
        method: 'POST',
        headers: { ...r.headers, 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({ sql }),
        signal: controller.signal,
      });
    } catch (e) {
      if (signal.aborted) return;
      throw failed(
        r,
        (e as Error).cause instanceof Error ? ((e as Error).cause as Error).message : String(e),
      );
    }
    if (!res.ok || !res.body) {
      const text = await res.text().catch(() => '');
      let message = text;
      try {
        message = (JSON.parse(text) as { message?: string }).message ?? text;
      } catch {}
      throw failed(r, `${res.status} ${message}`.trim());
    }
    let columns: string[] = [];
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        for (let sep = buffer.indexOf('\n\n'); sep >= 0; sep = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, sep);
          buffer = buffer.slice(sep + 2);
          let event = 'message';
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith('event: ')) event = line.slice(7);
            else if (line.startsWith('data: ')) data.push(line.slice(6));
          }
          if (!data.length) continue;
          const value = JSON.parse(data.join('\n')) as unknown;
          if (event === 'query') {
            const q = value as {
              status?: string;
              message?: string;
              result?: { header?: { name: string }[] };
            };
            if (q.result?.header) columns = q.result.header.map((c) => c.name);
            if (q.status === 'failed') throw failed(r, q.message ?? 'the query failed');
          } else if (event === 'message' && Array.isArray(value)) {
            if (!(await onRows({ columns, rows: value as unknown[][] }))) return;
          }
        }
      }
    } catch (e) {
      if (signal.aborted || controller.signal.aborted) return;
      throw e;
    }
  } finally {
    signal.removeEventListener('abort', stop);
    controller.abort();
  }
}

function failed(r: TimeplusRemote, detail: string) {
  return err('EXTERNAL_STREAM_REMOTE_FAILED', { stream: `${r.db}.${r.stream}`, base: r.base, detail });
}
