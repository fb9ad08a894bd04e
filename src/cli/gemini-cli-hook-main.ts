#!/usr/bin/env node
/**
 * The gemini-cli hook's own entry (`dist/bin/gemini-cli-hook.cjs`, bundled alone, CommonJS so
 * Node's module loader starts no ES module machinery for it): what the settings `--print-settings`
 * prints run once per hook event. It is `repeated-tool-failure-guard gemini-cli-hook` without the
 * command-line framework and the other commands, so an event costs little more than a Node start
 * (bench H1). Same options, same output, always exit 0.
 */
import { runGeminiCliHookCommand } from './commands/gemini-cli-hook.js';

void runGeminiCliHookCommand(process.argv.slice(2), {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
}).then((code) => {
  process.exitCode = code;
  // A file-system call that never returns must not keep the hook alive past its time limit.
  setTimeout(() => process.exit(), 100).unref();
});
