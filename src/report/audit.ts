/**
 * Structural privacy audit of the report's data, the counterpart of the guard-telemetry audit in
 * `replay/audit.ts`: every string the report holds must be an input prompt or session id, a value
 * of its field's closed vocabulary, an identifier-shaped error type or a label-shaped Resource value.
 * Numbers and booleans carry counts, sums and times. A field the audit does not know fails it, so a
 * new field cannot slip a free-form string into the page unnoticed.
 */
import { RESET_REASONS } from '../core/failure/types.js';
import type { UnjudgedReason } from '../engine/failure-types.js';
import { WIRE_PROFILES } from '../profiles/registry.js';
import type { WireProfileDefinition } from '../profiles/registry.js';
import { notCheckableReasons } from '../profiles/wire-profile.js';
import type { InputIdentifiers } from '../replay/audit.js';
import type { ReportData } from './report-data.js';
import { SCOPE_NAME_SHAPE } from './report-data.js';
import { BREAKER_VARIANTS, FAILURE_VARIANTS } from './what-if.js';
import { GATE_CRITERIA } from './gate.js';

const PHASES = ['idle', 'tracking', 'warned', 'latched'];
const FAILURE_DECISIONS = ['none', 'reset', 'tracked', 'would_warn', 'warned', 'would_stop', 'stopped'];
const BREAKER_DECISIONS = ['none', 'reset', 'tracked', 'would_warn', 'warned', 'would_abort', 'aborted'];
const IDENTIFIER = /^[a-z][a-z0-9_]{0,63}$/;
const LABEL = /^(\(unset\)|\(other\)|-|[A-Za-z0-9][A-Za-z0-9._+-]{0,63})$/;
const ROW_ID = /^(threshold-\d{1,3}x\d{1,2}|breaker-\d{1,3}x\d{1,3})$/;

type Check = (value: string, ids: InputIdentifiers) => boolean;

const DEFINITIONS: readonly WireProfileDefinition[] = Object.values(WIRE_PROFILES);
/** Every profile's fixed blind-spot sentences. */
const BLIND_SPOTS: ReadonlySet<string> = new Set(DEFINITIONS.flatMap((d) => d.blindSpots ?? []));
/** Every profile's fixed reasons for an invariant it cannot check. */
const NOT_CHECKABLE_REASONS: ReadonlySet<string> = new Set(DEFINITIONS.flatMap((d) => notCheckableReasons(d.notCheckable)));

function isAgent(v: string): boolean {
  return Object.prototype.hasOwnProperty.call(WIRE_PROFILES, v);
}

function isUsageSource(v: string): boolean {
  return IDENTIFIER.test(v.replace(/[.-]/g, '_')) && v.length <= 64;
}

const oneOf =
  (...values: string[]): Check =>
  (v) =>
    values.includes(v);

/** Allowed strings by field name (the last key of the path). */
const FIELDS: Readonly<Record<string, Check>> = {
  promptId: (v, ids) => ids.promptIds.has(v),
  sessionId: (v, ids) => ids.sessionIds.has(v),
  profile: (v) => Object.prototype.hasOwnProperty.call(WIRE_PROFILES, v),
  agent: isAgent,
  runMode: oneOf('shadow', 'warn', 'enforce', 'mixed'),
  phase: oneOf(...PHASES, 'phase1_to_2', 'phase2_to_3', 'phase3_to_promote'),
  criterion: oneOf(...GATE_CRITERIA),
  status: oneOf('PASS', 'FAIL', 'NOT ENOUGH DATA'),
  unit: oneOf('count', 'days', 'difference', 'ratio'),
  day: (v) => /^\d{4}-\d{2}-\d{2}$/.test(v),
  agentsWithoutUsage: isAgent,
  environment: (v) => LABEL.test(v),
  usageSource: isUsageSource,
  source: isUsageSource,
  mode: oneOf('off', 'shadow', 'warn', 'enforce'),
  route: oneOf('acp_foreground', 'headless', 'agent_run'),
  decision: oneOf(...new Set([...FAILURE_DECISIONS, ...BREAKER_DECISIONS])),
  phaseAfter: oneOf(...PHASES),
  resetReason: oneOf(...RESET_REASONS),
  executionErrorType: (v) => IDENTIFIER.test(v),
  toolType: oneOf('native', 'mcp', 'unknown'),
  group: (v) => LABEL.test(v),
  serviceVersion: (v) => LABEL.test(v),
  serviceName: (v) => LABEL.test(v),
  scopeNames: (v) => v === '(other)' || SCOPE_NAME_SHAPE.test(v),
  id: (v) => ROW_ID.test(v) || v in FAILURE_VARIANTS || v in BREAKER_VARIANTS || IDENTIFIER.test(v),
  description: () => true, // fixed invariant descriptions from replay/audit.ts; checked below
  variant: (v) => v in FAILURE_VARIANTS || v in BREAKER_VARIANTS,
  blindSpots: (v) => BLIND_SPOTS.has(v),
  notCheckable: (v) => NOT_CHECKABLE_REASONS.has(v),
};

/** Keys of count maps, by the map's field name. */
const MAP_KEYS: Readonly<Record<string, Check>> = {
  decisions: oneOf(...FAILURE_DECISIONS),
  resetReasons: oneOf(...RESET_REASONS),
  // Agents are profile names (closed: the registry's).
  untypedFailures: (v) => LABEL.test(v),
  unjudged: oneOf(...(['turn_cancelled', 'cancelled_call', 'other_loop_stop', 'no_terminal_records'] satisfies UnjudgedReason[])),
  evictions: oneOf('capacity', 'idle'),
  repetition: oneOf(...BREAKER_DECISIONS),
};

/**
 * Audit the report's data. Returns one short, data-free line per problem (the field path only);
 * empty when the data holds nothing but what guard telemetry may hold.
 *
 * @param data - the report's data
 * @param ids - the prompt and session ids of the input (`inputIdentifiers` in `replay/audit.ts`)
 * @param invariantDescriptions - the fixed invariant descriptions the report may show
 */
export function auditReportData(data: ReportData, ids: InputIdentifiers, invariantDescriptions: ReadonlySet<string>): string[] {
  const problems: string[] = [];
  const walk = (value: unknown, path: string, field: string, mapKeys: Check | undefined): void => {
    if (value === undefined || value === null || typeof value === 'number' || typeof value === 'boolean') return;
    if (typeof value === 'string') {
      const check = FIELDS[field];
      if (check === undefined) problems.push(`${path}: a string in an unchecked field`);
      else if (field === 'description' ? !invariantDescriptions.has(value) : !check(value, ids)) problems.push(`${path}: a value outside the field's vocabulary`);
      return;
    }
    if (Array.isArray(value)) {
      value.forEach((v, i) => walk(v, `${path}[${i}]`, field, undefined));
      return;
    }
    if (typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        if (mapKeys !== undefined) {
          if (!mapKeys(k, ids)) problems.push(`${path}: a key outside the map's vocabulary`);
          if (typeof v !== 'number') problems.push(`${path}: a map value that is not a count`);
          continue;
        }
        walk(v, path === '' ? k : `${path}.${k}`, k, MAP_KEYS[k]);
      }
      return;
    }
    problems.push(`${path}: unexpected ${typeof value}`);
  };
  walk(data, '', '', undefined);
  return problems;
}
