/**
 * A recording HTTP proxy in front of a local S3 server: every request is forwarded unchanged and
 * logged as `<METHOD> <bucket/key> [uploads|partNumber=N|uploadId] [bytes]`, so a test sees how an object went
 * up (one PUT, or a multipart upload and its parts) independently of the client that sent it.
 */
import { once } from 'node:events';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface S3RequestLog {
  /** `http://127.0.0.1:<port>`: use it as the endpoint instead of the server's. */
  endpoint: string;
  /**
   * The requests so far, e.g. `POST bkt/big/x.bz2 uploads`, `PUT bkt/big/x.bz2 partNumber=2 524288`
   * (a PUT ends with its content-length).
   */
  requests: string[];
  close(): Promise<void>;
}

/** `port`: a given one (0: any), so a test can stop the proxy and start it again at the same address. */
export async function startS3RequestLog(target: string, port = 0): Promise<S3RequestLog> {
  const to = new URL(target);
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const q = url.searchParams;
    const kind = q.has('uploads')
      ? ' uploads'
      : q.has('partNumber')
        ? ` partNumber=${q.get('partNumber')}`
        : q.has('uploadId')
          ? ' uploadId'
          : '';
    const length = req.headers['content-length'];
    requests.push(
      `${req.method} ${decodeURIComponent(url.pathname.slice(1))}${kind}${req.method === 'PUT' && length ? ` ${length}` : ''}`,
    );
    const upstream = request(
      { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  const bound = (server.address() as AddressInfo).port;
  return {
    endpoint: `http://127.0.0.1:${bound}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
