/**
 * What the `gemini-cli` profile reads (its log events and attribute keys); `serve` keeps only these
 * at ingest. Keep in step with `gemini-cli-profile.ts` (a test checks both).
 */
import type { WireProfileReads } from '../wire-profile.js';
import {
  ATTR_DECISION,
  ATTR_ERROR_TYPE,
  ATTR_EVENT_NAME,
  ATTR_FUNCTION_ARGS,
  ATTR_FUNCTION_NAME,
  ATTR_INTERACTIVE,
  ATTR_LOOP_COUNT,
  ATTR_PROMPT_ID,
  ATTR_ROLE,
  ATTR_SESSION_ID,
  ATTR_SUCCESS,
  ATTR_TOOL_TYPE,
  EVENT_API_REQUEST,
  EVENT_LOOP_DETECTED,
  EVENT_TOOL_CALL,
  EVENT_USER_PROMPT,
} from './semconv.js';

/** The `gemini-cli` profile's reads: logs only (spans are not read; their ids arrive on the logs). */
export const GEMINI_CLI_READS: WireProfileReads = Object.freeze({
  spanNames: Object.freeze([]),
  spanAttributes: Object.freeze([]),
  logEventNames: Object.freeze([EVENT_USER_PROMPT, EVENT_API_REQUEST, EVENT_TOOL_CALL, EVENT_LOOP_DETECTED]),
  logAttributes: Object.freeze([
    ATTR_EVENT_NAME,
    ATTR_PROMPT_ID,
    ATTR_SESSION_ID,
    ATTR_INTERACTIVE,
    ATTR_ROLE,
    ATTR_FUNCTION_NAME,
    ATTR_FUNCTION_ARGS,
    ATTR_SUCCESS,
    ATTR_DECISION,
    ATTR_TOOL_TYPE,
    ATTR_ERROR_TYPE,
    ATTR_LOOP_COUNT,
  ]),
});
