import { timingSafeEqual } from 'node:crypto';
import { EsRequestError } from './es-error.ts';

/** The `WWW-Authenticate` header Elasticsearch sends with a 401. */
export const WWW_AUTHENTICATE = 'Basic realm="security", charset="UTF-8"';

/**
 * The Basic-auth check of an elastic input. Without credentials configured every request passes,
 * whatever it carries; with them, a request must carry `Authorization: Basic base64(user:pass)`
 * or it gets Elasticsearch's 401 `security_exception`.
 */
export class BasicAuthCheck {
  private readonly expectedHeader: string | undefined;
  private readonly user: Buffer | undefined;
  private readonly pass: Buffer | undefined;

  constructor(username: string | undefined, password: string | undefined) {
    if (username !== undefined && password !== undefined) {
      this.expectedHeader = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
      this.user = Buffer.from(username);
      this.pass = Buffer.from(password);
    }
  }

  get enabled(): boolean {
    return this.expectedHeader !== undefined;
  }

  /** Throws the 401 to send when the request may not pass. */
  check(authorization: string | undefined, path: string): void {
    if (this.expectedHeader === undefined) return;
    // Fast path: the exact header a client builds from the configured credentials.
    if (authorization === this.expectedHeader) return;
    if (authorization === undefined || authorization === '')
      throw unauthorized(`missing authentication credentials for REST request [${path}]`);
    const m = /^\s*basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(authorization);
    if (!m) throw unauthorized(`unable to authenticate with provided credentials for REST request [${path}]`);
    const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const user = colon < 0 ? decoded : decoded.slice(0, colon);
    const pass = colon < 0 ? '' : decoded.slice(colon + 1);
    const userOk = sameBytes(Buffer.from(user), this.user!);
    const passOk = sameBytes(Buffer.from(pass), this.pass!);
    if (!userOk || !passOk)
      throw unauthorized(`unable to authenticate user [${user}] for REST request [${path}]`);
  }
}

function sameBytes(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

function unauthorized(reason: string): EsRequestError {
  return new EsRequestError(401, 'security_exception', reason, { 'www-authenticate': WWW_AUTHENTICATE });
}
