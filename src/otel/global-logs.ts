/**
 * The global LoggerProvider on either OpenTelemetry JS line.
 *
 * The logs API moved: on the 2.x line (`@opentelemetry/api` 1.9) it is the separate package
 * `@opentelemetry/api-logs` 0.2xx, whose global lives under its own key; on the 3.x line
 * (`@opentelemetry/api` 1.10, `sdk-logs` 3.x, `sdk-node` 0.301) it is `logs` in
 * `@opentelemetry/api` itself, and `sdk-node` registers its provider there. The guard reads the
 * provider from the API the host registered it with: `api.logs` when the installed API has it,
 * else `@opentelemetry/api-logs` (an optional peer, loaded only then, so a 3.x host needs none).
 */
import * as api from '@opentelemetry/api';
import type { Attributes } from '@opentelemetry/api';
import { createRequire } from 'node:module';
import type { AnyValue } from '../profiles/wire-profile.js';

/**
 * A log record the guard emits: the fields of the logs API's `LogRecord` it sets (the same on both
 * lines). `timestamp` in milliseconds since the epoch; `severityNumber` per the OpenTelemetry logs
 * data model (9 INFO, 13 WARN).
 */
export interface GuardLogRecord {
  readonly eventName?: string;
  readonly timestamp?: number;
  readonly severityNumber?: number;
  readonly severityText?: string;
  readonly body?: AnyValue;
  readonly attributes?: Attributes;
}

/** What the guard needs of a `Logger` (api-logs 0.2xx or api 1.10; both satisfy it). */
export interface GuardLogger {
  emit(logRecord: GuardLogRecord): void;
}

/**
 * What the guard needs of a `LoggerProvider`: the logs API's interface on either line and
 * `LoggerProvider` of `@opentelemetry/sdk-logs` 0.2xx or 3.x satisfy it.
 */
export interface GuardLoggerProvider {
  getLogger(name: string, version?: string): GuardLogger;
}

/** The logs API object (`logs`) of either package. */
interface LogsApi {
  getLoggerProvider(): GuardLoggerProvider;
}

/** SeverityNumber INFO of the OpenTelemetry logs data model. */
export const SEVERITY_NUMBER_INFO = 9;
/** SeverityNumber WARN of the OpenTelemetry logs data model. */
export const SEVERITY_NUMBER_WARN = 13;

let apiLogs: LogsApi | null | undefined;

/**
 * The logs API the host's SDK registers its provider with: `logs` of `@opentelemetry/api` (1.10+),
 * else `logs` of `@opentelemetry/api-logs`; `undefined` when the API has no logs and api-logs is
 * not installed (then no provider can be registered globally, and the guard emits no logs unless
 * one is passed in options).
 */
function logsApi(): LogsApi | undefined {
  // Reflect.get: `logs` is absent from api 1.9, and a static member access would be an error there.
  const fromApi = Reflect.get(api, 'logs') as LogsApi | undefined;
  if (fromApi !== undefined) return fromApi;
  if (apiLogs === undefined) {
    try {
      apiLogs = (createRequire(import.meta.url)('@opentelemetry/api-logs') as { logs: LogsApi }).logs;
    } catch {
      apiLogs = null;
    }
  }
  return apiLogs ?? undefined;
}

/** The global LoggerProvider (a proxy until the host registers one), or `undefined` (see above). */
export function globalLoggerProvider(): GuardLoggerProvider | undefined {
  return logsApi()?.getLoggerProvider();
}
