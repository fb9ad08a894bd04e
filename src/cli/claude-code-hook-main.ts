#!/usr/bin/env node
/**
 * The Claude Code hook's own entry (`dist/bin/claude-code-hook.cjs`, bundled alone, CommonJS so
 * Node's module loader starts no ES module machinery for it): what the
 * settings `--print-settings` prints run once per tool event. It is `repeated-tool-failure-guard
 * claude-code-hook` without the command-line framework and the other commands, so an event costs
 * little more than a Node start (bench H1). Same options, same output, always exit 0 (1 only for a
 * failed `--check`).
 */
import { runClaudeCodeHookCommand } from './commands/claude-code-hook.js';

void runClaudeCodeHookCommand(process.argv.slice(2), {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
}).then((code) => {
  process.exitCode = code;
  // A file-system call that never returns (a state directory under /proc) must not keep the hook
  // alive past its time limit: leave shortly after the answer, whatever is still pending.
  setTimeout(() => process.exit(), 100).unref();
});
