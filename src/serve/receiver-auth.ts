/**
 * Who may send to `serve`: the receivers' TLS and bearer-token settings, what the OpenTelemetry
 * Collector's OTLP receiver offers (`tls.cert_file`, `tls.key_file`, `tls.client_ca_file`; the
 * `bearertokenauth` extension). Anyone who can reach an unauthenticated receiver can make the
 * guard judge forged telemetry under any `session.id` (a forged loop reads as a victim's stop, a
 * forged success hides a real loop), so a receiver on a non-loopback address needs one of them.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

/** TLS of the receivers (PEM). */
export interface ReceiverTls {
  /** Server certificate chain. */
  readonly cert: string | Buffer;
  /** Its private key. */
  readonly key: string | Buffer;
  /** When set, clients must present a certificate signed by these CAs (mutual TLS). */
  readonly clientCa?: string | Buffer;
}

/** Which clients the receivers accept. */
export interface ReceiverAuth {
  readonly tls?: ReceiverTls;
  /** Every request must carry `Authorization: Bearer <token>` (HTTP header; gRPC metadata `authorization`). */
  readonly bearerToken?: string;
}

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/**
 * A checker of `Authorization` values against one token, in constant time (both sides hashed to
 * the same length first). The scheme is case-insensitive (RFC 6750); the token is not.
 */
export function bearerChecker(token: string): (authorization: string | undefined) => boolean {
  const want = digest(token);
  return (authorization) => {
    if (typeof authorization !== 'string') return false;
    const m = /^\s*bearer\s+(\S+)\s*$/i.exec(authorization);
    return m !== null && timingSafeEqual(digest(m[1] as string), want);
  };
}

/** True for an address only this machine reaches: `localhost`, `127.0.0.0/8`, `::1` (bracketed or not, IPv4-mapped too). */
export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (h === 'localhost' || h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
  const v4 = h.startsWith('::ffff:') ? h.slice(7) : h;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

/** Whether `auth` authenticates clients (a bearer token, or client certificates). */
export function authenticatesClients(auth: ReceiverAuth): boolean {
  return (auth.bearerToken !== undefined && auth.bearerToken !== '') || auth.tls?.clientCa !== undefined;
}

/**
 * Why `serve` must not start on `host` with `auth`, or `undefined` when it may: a non-loopback
 * address needs a bearer token or client certificates, unless `allowUnauthenticated` says the
 * network in front of it does the authentication.
 */
export function exposureRefusal(host: string, auth: ReceiverAuth, allowUnauthenticated: boolean): string | undefined {
  if (isLoopbackHost(host) || authenticatesClients(auth) || allowUnauthenticated) return undefined;
  return `refusing to receive on ${host} without authentication: anyone who reaches it can make the guard judge forged telemetry for any session; give a bearer token (--bearer-token-file) or client certificates (--tls-client-ca-file), or --allow-unauthenticated if the network in front of serve authenticates its clients`;
}
