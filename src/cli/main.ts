#!/usr/bin/env node
/**
 * The `repeated-tool-failure-guard` command line: `replay`, `serve` and the agents' hooks.
 */
import { UNTYPED_FAILURE_POLICIES } from '../core/failure/reducer.js';
import type { UntypedFailurePolicy } from '../core/failure/reducer.js';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { parseGuardMode } from '../core/mode.js';
import type { GuardMode } from '../core/failure/types.js';
import { UserError } from './io.js';
import { VERSION } from '../otel/version.js';
import { WIRE_PROFILES } from '../profiles/registry.js';
import type { WireProfileName } from '../profiles/registry.js';

/** `--print-settings` is for people: its usage errors are said as such, with exit 2. */
function isPrintSettings(): boolean {
  return process.argv.some((a) => a.startsWith('--print-settings'));
}

function modeArg(value: string): GuardMode {
  const mode = parseGuardMode(value);
  if (mode === undefined || mode === 'off') throw new InvalidArgumentError('expected shadow, warn or enforce');
  return mode;
}

function portArg(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('expected a port number 0-65535');
  return n;
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a positive integer');
  return n;
}

// A closed pipe (`replay ... | head`) ends the command quietly.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw err;
  });
}

const io = {
  out: (line: string) => process.stdout.write(`${line}\n`),
  err: (line: string) => process.stderr.write(`${line}\n`),
  progress: process.stderr.isTTY ? (text: string) => process.stderr.write(`\r${text}`) : undefined,
};

const program = new Command()
  .name('repeated-tool-failure-guard')
  .description('Detect AI coding agents looping on the same failing tool call, from OpenTelemetry telemetry.')
  .version(VERSION)
  .showHelpAfterError('(add --help for usage)')
  .exitOverride();

program
  .command('replay')
  .description(
    'Replay recorded telemetry (qwen-code telemetry outfiles or OTLP JSON lines, told apart by content) through the guard; print the decision timeline, a summary and the invariants. Exit 0 all judged; 1 a violated invariant or (with --compare) a disagreement; 2 a user error (usage, unreadable or malformed input); 3 batches that could not be judged (missing logs) or no tool batch found; 70 an internal error.',
  )
  .argument('<file...>', 'telemetry files to replay together (- reads standard input)')
  .addOption(
    new Option('--mode <mode>', 'guard mode for every prompt: shadow, warn or enforce (default: the mode the in-tree guard recorded, else shadow)').argParser(
      modeArg,
    ),
  )
  .addOption(
    new Option('--profile <profile>', "wire profile; auto reads each producer's records (per Resource) with its own agent's profile, a name reads every record with that one").choices(['auto', ...Object.keys(WIRE_PROFILES)]).default('auto'),
  )
  .addOption(new Option('--format <format>', 'text, or json: one JSON object per decision on stdout, report on stderr').choices(['text', 'json']).default('text'))
  .option('--compare', 'diff batch by batch with the in-tree qwen-code.repeated_tool_failure_guard events in the same input', false)
  .option('--report <file>', 'also write the HTML report (verdict, savings and cost per agent, rollout gate, timelines, policy what-if) to <file>; needs the optional package echarts')
  .option('--prices <file>', 'with --report: JSON price table, US dollars per million tokens by model, for requests whose telemetry states no cost (docs/report.md)')
  .option('--owner-attribute <key>', "with --report: the attribute naming a prompt's owner, the rollout gate's resampling unit", 'user.id')
  .option('--cohort-attribute <key>', 'with --report: the record or Resource attribute stating the mode a prompt ran under', 'repeated_tool_failure_guard.mode')
  .addOption(
    new Option('--untyped-failures <policy>', 'a failed call with no type (no error.type, no exception type): ineligible, the design\'s rule (unknown: never counted, counted in the summary), or key-by-tool (keyed by the tool alone; the report\'s what-if shows its effect first)')
      .choices([...UNTYPED_FAILURE_POLICIES])
      .default('ineligible'),
  )
  .action(
    async (
      files: string[],
      opts: {
        mode?: GuardMode;
        profile: WireProfileName | 'auto';
        format: 'text' | 'json';
        compare: boolean;
        report?: string;
        prices?: string;
        ownerAttribute: string;
        cohortAttribute: string;
        untypedFailures: UntypedFailurePolicy;
      },
    ) => {
    // Commands load lazily: the Claude Code hook runs once per tool event and must start fast.
      const { runReplay } = await import('./commands/replay.js');
      process.exitCode = await runReplay(files, opts, io);
    },
  );

program
  .command('serve')
  .description(
    'Receive OTLP/HTTP (JSON or protobuf; identity, gzip or deflate) from a running agent on /v1/traces and /v1/logs (and OTLP/gRPC with --grpc-port), run the guard in shadow, and export its counters, diagnostic logs and loop events over OTLP/HTTP (or print them).',
  )
  .addOption(new Option('--port <port>', 'port to listen on').argParser(portArg).default(4318))
  .option('--host <host>', 'address to bind; any but a loopback address needs --bearer-token-file or --tls-client-ca-file (or --allow-unauthenticated)', '127.0.0.1')
  .option('--bearer-token-file <file>', 'every request must carry "Authorization: Bearer <the token in this file>" (gRPC: authorization metadata); 401 / UNAUTHENTICATED otherwise')
  .option('--tls-cert-file <file>', 'serve HTTPS and gRPC over TLS with this PEM certificate chain (with --tls-key-file)')
  .option('--tls-key-file <file>', 'the PEM private key of --tls-cert-file')
  .option('--tls-client-ca-file <file>', 'require client certificates signed by these PEM CAs (mutual TLS; needs --tls-cert-file)')
  .option('--allow-unauthenticated', 'listen on a non-loopback address without a token or client certificates (the network in front authenticates)', false)
  .option('--export-endpoint <url>', 'OTLP/HTTP base URL to export the guard telemetry to (…/v1/logs, …/v1/metrics); printed to stdout when absent')
  .addOption(new Option('--grace-millis <ms>', 'how long records are held to reorder the span and log streams before a batch is judged').argParser(positiveInt).default(10_000))
  .addOption(new Option('--max-body-bytes <n>', 'largest accepted request body, after decompression (413 beyond)').argParser(positiveInt).default(16 * 1024 * 1024))
  .addOption(
    new Option('--max-records-per-request <n>', 'most spans or log records one request may hold (413 / RESOURCE_EXHAUSTED beyond); bounds the work of decoding one request')
      .argParser(positiveInt)
      .default(65_536),
  )
  .addOption(new Option('--max-prompts <n>', 'most prompts judged at once; beyond it prompts that never opened a batch are dropped first, then the oldest').argParser(positiveInt).default(10_000))
  .addOption(new Option('--max-connections <n>', 'most OTLP/HTTP connections open at once; new ones are closed beyond it (said once); idle ones close after 10 s').argParser(positiveInt).default(4096))
  .addOption(
    new Option('--ingest-budget-bytes <n>', 'memory budget for held telemetry plus bodies being read; 503/429 with Retry-After beyond')
      .argParser(positiveInt)
      .default(256 * 1024 * 1024),
  )
  .addOption(new Option('--mode <mode>', 'guard mode label for decisions: shadow, warn or enforce').argParser(modeArg).default('shadow'))
  .addOption(
    new Option('--profile <profile>', "wire profile; auto reads each producer's records (per Resource) with its own agent's profile, a name reads every record with that one")
      .choices(['auto', ...Object.keys(WIRE_PROFILES)])
      .default('auto'),
  )
  .option('--report <file>', 'write the HTML shadow report to <file> at exit and on SIGUSR2; needs the optional package echarts')
  .addOption(new Option('--grpc-port <port>', 'also receive OTLP/gRPC on this port (4317 by convention; what the Collector load_balancing exporter sends)').argParser(portArg))
  .option('--instance-id <id>', 'service.instance.id of the guard telemetry (default: a random UUID per start)')
  .addOption(
    new Option('--claude-code-hook-port <port>', "also answer Claude Code's HTTP hooks (type \"http\") on this port at /hooks/claude-code, in --mode, sessions in memory; needs --bearer-token-file").argParser(portArg),
  )
  .option('--new-prompts-only', 'judge only prompts whose start record (qwen-code.user_prompt) arrives with a time after this process started (replicas: a restart never judges a prompt seen only in part)', false)
  .addOption(
    new Option('--untyped-failures <policy>', 'a failed call with no type (no error.type, no exception type): ineligible, the design\'s rule (unknown: never counted, counted in the summary), or key-by-tool (keyed by the tool alone; the report\'s what-if shows its effect first)')
      .choices([...UNTYPED_FAILURE_POLICIES])
      .default('ineligible'),
  )
  .action(
    async (opts: {
      port: number;
      host: string;
      exportEndpoint?: string;
      graceMillis: number;
      maxBodyBytes: number;
      maxRecordsPerRequest: number;
      maxConnections: number;
      maxPrompts: number;
      ingestBudgetBytes: number;
      mode: GuardMode;
      profile: WireProfileName | 'auto';
      untypedFailures: UntypedFailurePolicy;
      report?: string;
      grpcPort?: number;
      instanceId?: string;
      newPromptsOnly: boolean;
      bearerTokenFile?: string;
      tlsCertFile?: string;
      tlsKeyFile?: string;
      tlsClientCaFile?: string;
      allowUnauthenticated: boolean;
      claudeCodeHookPort?: number;
    }) => {
      const { runServe } = await import('./commands/serve.js');
      await runServe(opts, io);
    },
  );

program
  .command('claude-code-hook')
  .description(
    'Claude Code command hook (PreToolUse, PostToolUse, PostToolUseFailure, PostToolBatch): reads the hook input on stdin, keeps the per-prompt guard state in a small file per session, and prints the reminder (warn, enforce) or the stop (enforce) as hook output; shadow prints nothing. Always exits 0. The settings run its own small entry (see --print-settings).',
  )
  .option('--mode <mode>', 'off, shadow, warn or enforce (default: REPEATED_TOOL_FAILURE_GUARD_MODE or QWEN_CODE_ACP_REPEATED_TOOL_FAILURE_GUARD, else shadow); an invalid value is ignored')
  .option('--state-dir <dir>', 'state directory (default: $RTFG_CLAUDE_CODE_STATE_DIR, else $XDG_STATE_HOME or ~/.local/state, /repeated-tool-failure-guard/claude-code)')
  .option('--decisions-file <file>', 'append each decision as a JSON line (default: $RTFG_CLAUDE_CODE_DECISIONS)')
  .option('--otlp-endpoint <url>', "OTLP/HTTP base URL for the guard's counters and diagnostic logs (default: $RTFG_CLAUDE_CODE_OTLP_ENDPOINT; Claude Code gives hooks no OTEL_* variables)")
  .option('--print-settings', 'print the Claude Code settings.json hooks fragment that registers this hook (an absolute command that runs from any directory), say which settings file takes it, and exit')
  .option('--http <url>', "with --print-settings: print the HTTP form instead (type \"http\" hooks posted to serve --claude-code-hook-port at <url>, the token from $RTFG_CLAUDE_CODE_HOOK_TOKEN)")
  .option('--check', 'send a synthetic event of each type through exactly what the settings register (command or HTTP), say whether the guard answered, and exit (1 when not)')
  .option('--settings <file>', 'with --check: the settings file to read (default: the user, project and managed settings files)')
  .allowUnknownOption()
  .action(async () => {
    const { runClaudeCodeHookCommand } = await import('./commands/claude-code-hook.js');
    process.exitCode = await runClaudeCodeHookCommand(process.argv.slice(process.argv.indexOf('claude-code-hook') + 1), io);
    // A file-system call that never returns (a state directory under /proc) must not keep the
    // hook alive past its time limit: leave shortly after the answer, whatever is still pending.
    setTimeout(() => process.exit(), 100).unref();
  });

program
  .command('gemini-cli-hook')
  .description(
    'gemini-cli command hook (BeforeAgent, BeforeTool, AfterTool, BeforeModel, AfterAgent): reads the hook input on stdin, keeps the per-prompt guard state in a small file per session, and prints the reminder (warn, enforce; on the batch\'s last AfterTool) or the stop (enforce; on the next BeforeModel) as hook output, `{}` otherwise. Always exits 0.',
  )
  .option('--mode <mode>', 'off, shadow, warn or enforce (default: REPEATED_TOOL_FAILURE_GUARD_MODE, else shadow); an invalid value is ignored')
  .option('--state-dir <dir>', 'state directory (default: $RTFG_GEMINI_CLI_STATE_DIR, else $XDG_STATE_HOME or ~/.local/state, /repeated-tool-failure-guard/gemini-cli)')
  .option('--decisions-file <file>', 'append each decision as a JSON line (default: $RTFG_GEMINI_CLI_DECISIONS)')
  .option('--print-settings', "print the gemini-cli settings.json hooks fragment that registers the hook's own entry (dist/bin/gemini-cli-hook.cjs) by absolute paths (it works from any directory), and exit")
  .allowUnknownOption()
  .action(async () => {
    const { runGeminiCliHookCommand } = await import('./commands/gemini-cli-hook.js');
    process.exitCode = await runGeminiCliHookCommand(process.argv.slice(process.argv.indexOf('gemini-cli-hook') + 1), io);
    // A file-system call that never returns must not keep the hook alive past its time limit.
    setTimeout(() => process.exit(), 100).unref();
  });

program
  .command('codex-hook')
  .description(
    'Codex CLI command hook (UserPromptSubmit, PreToolUse, PostToolUse, Stop): reads the hook input on stdin and the structured fields of the session transcript it names, keeps the per-prompt guard state in a small file per session, and prints the reminder (warn, enforce) or the stop (enforce; then every later call of the turn is denied) as hook output; shadow prints nothing. Always exits 0.',
  )
  .option('--mode <mode>', 'off, shadow, warn or enforce (default: REPEATED_TOOL_FAILURE_GUARD_MODE or QWEN_CODE_ACP_REPEATED_TOOL_FAILURE_GUARD, else shadow); an invalid value is ignored')
  .option('--state-dir <dir>', 'state directory (default: $RTFG_CODEX_STATE_DIR, else $XDG_STATE_HOME or ~/.local/state, /repeated-tool-failure-guard/codex)')
  .option('--decisions-file <file>', 'append each decision as a JSON line (default: $RTFG_CODEX_DECISIONS)')
  .option('--otlp-endpoint <url>', "OTLP/HTTP base URL for the guard's counters and diagnostic logs (default: $RTFG_CODEX_OTLP_ENDPOINT)")
  .option('--print-settings [format]', 'print what registers this command by absolute paths (it works from any directory): toml (default) for ~/.codex/config.toml, json for ~/.codex/hooks.json; and exit')
  .allowUnknownOption()
  .action(async (opts: { mode?: string; stateDir?: string; decisionsFile?: string; otlpEndpoint?: string; printSettings?: boolean | string }) => {
    const { codexHookSettingsText, runCodexHook } = await import('./commands/codex-hook.js');
    const mode = parseGuardMode(opts.mode);
    if (opts.printSettings !== undefined && opts.printSettings !== false) {
      if (opts.printSettings !== true && opts.printSettings !== 'toml' && opts.printSettings !== 'json') throw new UserError('--print-settings takes toml or json');
      io.out(codexHookSettingsText(opts.printSettings === 'json' ? 'json' : 'toml', mode));
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    const endpoint = opts.otlpEndpoint;
    process.exitCode = await runCodexHook(Buffer.concat(chunks).toString('utf8'), { mode, stateDir: opts.stateDir, decisionsFile: opts.decisionsFile, otlpEndpoint: endpoint === '' ? undefined : endpoint }, io);
    // A file-system call that never returns must not keep the hook alive past its time limit.
    setTimeout(() => process.exit(0), 100).unref();
  });

program.parseAsync(process.argv).catch((err: unknown) => {
  if (process.argv[2] === 'gemini-cli-hook' && !(err instanceof CommanderError && err.exitCode === 0)) {
    // gemini-cli reads a failing hook's text as its answer (a denial from exit code 2 on): answer nothing.
    process.stdout.write('{}\n');
    process.stderr.write('repeated-tool-failure-guard gemini-cli-hook: usage error; no decision\n');
    process.exitCode = 0;
    return;
  }
  if ((process.argv[2] === 'claude-code-hook' || process.argv[2] === 'codex-hook') && !(err instanceof CommanderError && err.exitCode === 0) && !isPrintSettings()) {
    // Claude Code and Codex treat exit code 2 as a blocking error: a hook never blocks by failing.
    process.stderr.write(`repeated-tool-failure-guard ${process.argv[2]}: usage error; no decision\n`);
    process.exitCode = 0;
    return;
  }
  if (err instanceof CommanderError) {
    // --help and --version exit 0; every usage error is a user error (2). Commander printed the message.
    process.exitCode = err.exitCode === 0 ? 0 : 2;
    return;
  }
  if (err instanceof UserError) {
    process.stderr.write(`error: ${err.message}\n`);
    process.exitCode = 2;
    return;
  }
  process.stderr.write(`internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 70;
});
