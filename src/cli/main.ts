#!/usr/bin/env node
/**
 * The `repeated-tool-failure-guard` command line: `replay` and `serve`.
 */
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { parseGuardMode } from '../core/mode.js';
import type { GuardMode } from '../core/failure/types.js';
import { runReplay } from './commands/replay.js';
import { UserError } from './io.js';
import { runServe } from './commands/serve.js';
import { VERSION } from '../otel/version.js';
import { WIRE_PROFILES } from '../profiles/registry.js';
import type { WireProfileName } from '../profiles/registry.js';

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
    'Replay recorded telemetry (qwen-code telemetry outfiles or OTLP JSON lines, told apart by content) through the guard; print the decision timeline, a summary and the invariants. Exit 0 all judged; 1 a violated invariant or (with --compare) a disagreement; 2 a usage error; 3 batches that could not be judged (missing logs) or no tool batch found.',
  )
  .argument('<file...>', 'telemetry files to replay together; - reads standard input')
  .addOption(
    new Option('--mode <mode>', 'guard mode for every prompt: shadow, warn or enforce (default: the mode the in-tree guard recorded, else shadow)').argParser(
      modeArg,
    ),
  )
  .addOption(
    new Option('--profile <profile>', 'wire profile; auto picks the one the input looks like').choices(['auto', ...Object.keys(WIRE_PROFILES)]).default('auto'),
  )
  .addOption(new Option('--format <format>', 'text, or json: one JSON object per decision on stdout, report on stderr').choices(['text', 'json']).default('text'))
  .option('--compare', 'diff batch by batch with the in-tree qwen-code.repeated_tool_failure_guard events in the same input', false)
  .option('--report <file>', 'also write the HTML shadow report (summary, savings, timelines, policy what-if) to <file>; needs the optional package echarts')
  .action(async (files: string[], opts: { mode?: GuardMode; profile: WireProfileName | 'auto'; format: 'text' | 'json'; compare: boolean; report?: string }) => {
    process.exitCode = await runReplay(files, opts, io);
  });

program
  .command('serve')
  .description(
    'Receive OTLP/HTTP (JSON or protobuf, optionally gzip) from a running agent on /v1/traces and /v1/logs, run the guard in shadow, and export its counters, diagnostic logs and loop events over OTLP/HTTP (or print them).',
  )
  .addOption(new Option('--port <port>', 'port to listen on').argParser(portArg).default(4318))
  .option('--host <host>', 'address to bind', '127.0.0.1')
  .option('--export-endpoint <url>', 'OTLP/HTTP base URL to export the guard telemetry to (…/v1/logs, …/v1/metrics); printed to stdout when absent')
  .addOption(new Option('--grace-millis <ms>', 'how long records are held to reorder the span and log streams before a batch is judged').argParser(positiveInt).default(10_000))
  .addOption(new Option('--max-body-bytes <n>', 'largest accepted request body, after decompression (413 beyond)').argParser(positiveInt).default(16 * 1024 * 1024))
  .addOption(new Option('--mode <mode>', 'guard mode label for decisions: shadow, warn or enforce').argParser(modeArg).default('shadow'))
  .addOption(new Option('--profile <profile>', "the agent's wire profile").choices(Object.keys(WIRE_PROFILES)).default('qwen-code'))
  .option('--report <file>', 'write the HTML shadow report to <file> at exit and on SIGUSR2; needs the optional package echarts')
  .action(async (opts: { port: number; host: string; exportEndpoint?: string; graceMillis: number; maxBodyBytes: number; mode: GuardMode; profile: WireProfileName; report?: string }) => {
    await runServe(opts, io);
  });

program.parseAsync(process.argv).catch((err: unknown) => {
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
