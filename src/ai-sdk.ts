/**
 * `repeated-tool-failure-guard/ai-sdk`: both guards inside a Vercel AI SDK tool loop (AI SDK 6 and
 * 7) through its `stopWhen` and `prepareStep` settings. See docs/ai-sdk.md.
 *
 * @packageDocumentation
 */
export { AiSdkGuard, createAiSdkGuard } from './hosts/ai-sdk/ai-sdk-guard.js';
export type {
  AiSdkContentPart,
  AiSdkGuardPrepareStep,
  AiSdkGuardSettings,
  AiSdkGuardSettingsInput,
  AiSdkPrepareStep,
  AiSdkPrepareStepOptions,
  AiSdkStep,
  AiSdkStopCondition,
} from './hosts/ai-sdk/ai-sdk-guard.js';
