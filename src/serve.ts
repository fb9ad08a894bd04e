/**
 * `repeated-tool-failure-guard/serve`: run the guard as a long-lived OTLP receiver for a closed
 * agent (out of process, shadow).
 *
 * @packageDocumentation
 */
export { startGuardServer } from './serve/guard-server.js';
export type { GuardServer, GuardServerOptions } from './serve/guard-server.js';
