// @ts-check
/**
 * The AI SDK conformance scenarios: plain data. Each prompt is a list of model rounds; a round is
 * the tool calls one model response asks for (all run before the next model call), and after the
 * last round the model answers with text. Tools really touch a scratch directory:
 *
 * - `read_file {path}`: `fs.readFile`; a missing path fails with the real `ENOENT` error
 *   (key `(read_file, file_not_found)`);
 * - `write_file {path}`: `fs.writeFile`; the path `dir` is a directory (`EISDIR`, another key);
 * - `list_dir {}`: succeeds;
 * - `status {scope, view}`: succeeds (the seed's byte-identical `acp_status` call).
 *
 * Expected decisions come from the design: eight eligible failures of one key across at least two
 * batches warn; the next matching batch stops; other tools' successes are ignored; a success of
 * the candidate tool, mixed keys and a new prompt reset. The breaker (seed): warn at the third
 * identical call, abort at the fifth. A decision is written `bN:decision[:resetReason](failures,batches)#ordinal` (as
 * conformance/decisions.mjs `compact`), prefixed `pN/` for the N-th prompt; `none` is left out. A reset carries the counts of the streak
 * it ends (as the diagnostic log does). The breaker's decisions are written `runLength:decision`;
 * its counted calls below a threshold (`tracked`) are not reported.
 */

const MISS = { name: 'read_file', args: { path: 'missing.txt' } };
const MISS2 = { name: 'read_file', args: { path: 'also-missing.txt' } };
const READ_OK = { name: 'read_file', args: { path: 'README.md' } };
const LIST = { name: 'list_dir', args: {} };
const WRITE_DIR = { name: 'write_file', args: { path: 'dir' } };
const STATUS = { name: 'status', args: { scope: 'uncompressed', view: 'ranges' } };

const LOOP = Array.from({ length: 6 }, () => [MISS, MISS2]);
const LOOP_DECISIONS = {
  shadow: ['b1:tracked(1-2,1)#1', 'b2:tracked(3-4,2)#1', 'b3:tracked(5-7,3+)#1', 'b4:would_warn(8+,3+)#1', 'b5:would_stop(8+,3+)#1'],
  warn: ['b1:tracked(1-2,1)#1', 'b2:tracked(3-4,2)#1', 'b3:tracked(5-7,3+)#1', 'b4:warned(8+,3+)#1', 'b5:would_stop(8+,3+)#1'],
  enforce: ['b1:tracked(1-2,1)#1', 'b2:tracked(3-4,2)#1', 'b3:tracked(5-7,3+)#1', 'b4:warned(8+,3+)#1', 'b5:stopped(8+,3+)#1'],
};

/**
 * @typedef {{ name: string, args: Record<string, unknown> }} Call
 * @typedef {{
 *   name: string, description: string, mode: 'shadow' | 'warn' | 'enforce',
 *   api?: 'generateText' | 'streamText' | 'agent',
 *   prompts: Call[][][],
 *   decisions: string[],
 *   repetition?: string[],
 *   modelCalls: number[],
 *   reminderAtCall?: number,
 *   warningAtCall?: number,
 *   stoppedAfterStep?: number,
 * }} Scenario
 */

/** @type {Scenario[]} */
export const SCENARIOS = [
  {
    name: 'read-missing-loop-shadow',
    description: 'A typed failure loop (two missing-file reads a response, six responses): shadow decides, changes nothing.',
    mode: 'shadow',
    prompts: [LOOP],
    decisions: LOOP_DECISIONS.shadow,
    modelCalls: [7],
  },
  {
    name: 'read-missing-loop-warn',
    description: 'The same loop in warn: the reminder reaches the fifth model call once; the loop is never stopped.',
    mode: 'warn',
    prompts: [LOOP],
    decisions: LOOP_DECISIONS.warn,
    modelCalls: [7],
    reminderAtCall: 5,
  },
  {
    name: 'read-missing-loop-enforce',
    description: 'The same loop in enforce: reminder at the fifth model call, stop after the fifth batch (its results kept, no sixth model call).',
    mode: 'enforce',
    prompts: [LOOP],
    decisions: LOOP_DECISIONS.enforce,
    modelCalls: [5],
    reminderAtCall: 5,
    stoppedAfterStep: 5,
  },
  {
    name: 'read-missing-loop-enforce-stream',
    description: 'The enforce loop through streamText.',
    mode: 'enforce',
    api: 'streamText',
    prompts: [LOOP],
    decisions: LOOP_DECISIONS.enforce,
    modelCalls: [5],
    reminderAtCall: 5,
    stoppedAfterStep: 5,
  },
  {
    name: 'read-missing-loop-enforce-agent',
    description: 'The enforce loop through a ToolLoopAgent.',
    mode: 'enforce',
    api: 'agent',
    prompts: [LOOP],
    decisions: LOOP_DECISIONS.enforce,
    modelCalls: [5],
    reminderAtCall: 5,
    stoppedAfterStep: 5,
  },
  {
    name: 'parallel-mixed-shadow',
    description: 'Parallel calls: another tool succeeding beside the failures is ignored; two failure keys in one batch reset (mixed); the key then starts a new streak.',
    mode: 'shadow',
    prompts: [[[MISS, MISS2, LIST], [MISS, LIST, MISS2], [MISS, WRITE_DIR], [MISS, MISS2]]],
    decisions: ['b1:tracked(1-2,1)#1', 'b2:tracked(3-4,2)#1', 'b3:reset:mixed(3-4,2)#1', 'b4:tracked(1-2,1)#2'],
    modelCalls: [5],
  },
  {
    name: 'success-resets-shadow',
    description: 'A success of the failing tool resets the streak; the next failures start a new candidate.',
    mode: 'shadow',
    prompts: [[[MISS, MISS2], [MISS, MISS2], [MISS, MISS2], [READ_OK], [MISS, MISS2]]],
    decisions: ['b1:tracked(1-2,1)#1', 'b2:tracked(3-4,2)#1', 'b3:tracked(5-7,3+)#1', 'b4:reset:success(5-7,3+)#1', 'b5:tracked(1-2,1)#2'],
    modelCalls: [6],
  },
  {
    name: 'new-prompt-resets-warn',
    description: 'Two SDK calls with one guard: each is its own prompt, so six failures in each never reach the threshold.',
    mode: 'warn',
    api: 'agent',
    prompts: [
      [[MISS, MISS2], [MISS, MISS2], [MISS, MISS2]],
      [[MISS, MISS2], [MISS, MISS2], [MISS, MISS2]],
    ],
    decisions: [
      'b1:tracked(1-2,1)#1', 'b2:tracked(3-4,2)#1', 'b3:tracked(5-7,3+)#1',
      'p2/b1:tracked(1-2,1)#1', 'p2/b2:tracked(3-4,2)#1', 'p2/b3:tracked(5-7,3+)#1',
    ],
    modelCalls: [4, 4],
  },
  {
    name: 'warn-recovers',
    description: 'In warn, the model reads the reminder and changes approach: the read succeeds, the streak resets, the run ends by itself.',
    mode: 'warn',
    prompts: [[[MISS, MISS2], [MISS, MISS2], [MISS, MISS2], [MISS, MISS2], [READ_OK]]],
    decisions: ['b1:tracked(1-2,1)#1', 'b2:tracked(3-4,2)#1', 'b3:tracked(5-7,3+)#1', 'b4:warned(8+,3+)#1', 'b5:reset:success(8+,3+)#1'],
    modelCalls: [6],
    reminderAtCall: 5,
  },
  {
    name: 'identical-call-breaker-shadow',
    description: "The seed's case: a byte-identical succeeding call 30 times; shadow: would_warn at 3, would_abort at 5, all 30 run.",
    mode: 'shadow',
    prompts: [Array.from({ length: 30 }, () => [STATUS])],
    decisions: [],
    repetition: ['3:would_warn', '5:would_abort'],
    modelCalls: [31],
  },
  {
    name: 'identical-call-breaker-enforce',
    description: "The seed's case in enforce: the warning reaches the fourth model call, the fifth identical call ends the loop (no sixth model call).",
    mode: 'enforce',
    prompts: [Array.from({ length: 30 }, () => [STATUS])],
    decisions: [],
    repetition: ['3:warned', '5:aborted'],
    modelCalls: [5],
    warningAtCall: 4,
    stoppedAfterStep: 5,
  },
];
