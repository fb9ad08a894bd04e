#!/usr/bin/env node
/* global process, console, URL */
// A fleet's week (issue 35, part 4): `replay --report` over a directory of rotated, gzip-compressed
// OTLP JSON lines files as the Collector's file exporter writes them, against `replay` alone on
// the same input, at two input sizes. Printed: time and peak RSS of each run, and three rows with
// PASS/FAIL: the input is at least --min-gib GiB uncompressed; report time ≤ 1.3× replay time on
// the large input; report peak RSS at the large input ≤ 1.25× at the small one (independent of
// input size).
//
//   npm run build && node bench/report-fleet.mjs                 (1 GiB and 1/4 GiB; needs time and memory)
//   node bench/report-fleet.mjs --gib 0.25 --min-gib 0           (a quick look)
//
// The input: qwen-code 0.24.4 telemetry (wire reference §2: user_prompt, api_request,
// api_response with token counts, tool_call), one prompt in five a loop of failing read_file
// batches (would_warn, would_stop), the others succeed; 64 MiB files, gzip level 1; owners, cohorts
// and environments on the Resource. Generated once per size under --dir (kept between runs).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const args = process.argv.slice(2);
const arg = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? fallback : args[i + 1];
};
const GIB = Number(arg('gib', '1'));
const MIN_GIB = Number(arg('min-gib', '1'));
const DIR = arg('dir', '/tmp/rtfg-report-fleet');
const CLI = fileURLToPath(new URL('../dist/bin/repeated-tool-failure-guard.js', import.meta.url));
const FILE_BYTES = 64 * 1024 * 1024;
const T0 = Date.UTC(2026, 10, 23);

const attr = (key, v) => ({ key, value: typeof v === 'number' ? { intValue: v } : { stringValue: String(v) } });
const nanos = (ms) => `${BigInt(ms) * 1_000_000n}`;

/** One OTLP logs request holding one prompt of one owner. */
function promptLine(i) {
  const owner = i % 400;
  const env = owner % 2 === 0 ? 'internal' : 'public';
  const mode = owner % 20 === 0 ? 'enforce' : owner % 4 === 0 ? 'warn' : 'shadow';
  const session = `s-${owner}-${Math.floor(i / 4000)}`;
  const promptId = `${session}########${i}`;
  const start = T0 + i * 1500;
  const loop = i % 5 === 0;
  const logs = [];
  const log = (t, name, extra) =>
    logs.push({ timeUnixNano: nanos(t), observedTimeUnixNano: nanos(t), body: { stringValue: name }, attributes: [attr('event.name', name), attr('session.id', session), attr('prompt_id', promptId), ...extra] });
  log(start, 'qwen-code.user_prompt', [attr('prompt_length', 20)]);
  const rounds = loop ? 7 : 3;
  for (let r = 0; r <= rounds; r++) {
    const t = start + 10 + r * 100;
    log(t, 'qwen-code.api_request', [attr('model', 'fake-model')]);
    log(t + 30, 'qwen-code.api_response', [attr('model', 'fake-model'), attr('duration_ms', 30), attr('input_token_count', 1000 * (r + 1)), attr('output_token_count', 100), attr('status_code', 200)]);
    if (r === rounds) break;
    for (let c = 0; c < 2; c++) {
      const ok = !loop;
      log(t + 40 + c, 'qwen-code.tool_call', [
        attr('call_id', `c-${i}-${r}-${c}`),
        attr('function_name', 'read_file'),
        attr('function_args', JSON.stringify({ file_path: `/w/f-${i}-${r}-${c}.txt` })),
        attr('duration_ms', 3),
        attr('status', ok ? 'success' : 'error'),
        attr('execution_status', ok ? 'success' : 'error'),
        attr('tool_type', 'native'),
        ...(ok ? [] : [attr('error_type', 'file_not_found'), attr('error.type', 'file_not_found')]),
      ]);
    }
  }
  const resource = { attributes: [attr('service.name', 'qwen-code'), attr('service.version', '0.24.4'), attr('deployment.environment', env), attr('user.id', `owner-${owner}`), attr('repeated_tool_failure_guard.mode', mode)] };
  return `${JSON.stringify({ resourceLogs: [{ resource, scopeLogs: [{ scope: { name: 'qwen-code' }, logRecords: logs }] }] })}\n`;
}

/** The directory of `bytes` of telemetry (uncompressed), generated unless already there. */
function fleet(bytes) {
  const dir = join(DIR, `${Math.round(bytes / 1024 / 1024)}mib`);
  if (existsSync(join(dir, 'done'))) return dir;
  mkdirSync(dir, { recursive: true });
  let written = 0;
  let file = 0;
  let i = 0;
  while (written < bytes) {
    const parts = [];
    let size = 0;
    while (size < FILE_BYTES && written + size < bytes) {
      const line = promptLine(i++);
      parts.push(line);
      size += line.length;
    }
    writeFileSync(join(dir, `logs-2026-11-23T${String(file++).padStart(6, '0')}.json.gz`), gzipSync(parts.join(''), { level: 1 }));
    written += size;
  }
  writeFileSync(join(dir, 'done'), `${written}\n`);
  return dir;
}

/** Run the CLI under /usr/bin/time: seconds and peak RSS (MiB). */
function run(label, cliArgs) {
  const r = spawnSync('/usr/bin/time', ['-f', '%e %M', process.execPath, CLI, ...cliArgs], { encoding: 'utf8', maxBuffer: 1 << 30 });
  const last = r.stderr.trim().split('\n').pop() ?? '';
  const [secs, kib] = last.split(' ').map(Number);
  if (!Number.isFinite(secs) || !Number.isFinite(kib)) {
    console.log(`${label}: failed (exit ${r.status}): ${r.stderr.trim().split('\n').slice(-3).join(' | ')}`);
    return undefined;
  }
  console.log(`${label}: ${secs.toFixed(1)} s, peak RSS ${(kib / 1024).toFixed(0)} MiB (exit ${r.status})`);
  return { secs, rssMib: kib / 1024 };
}

const large = Math.round(GIB * 1024 * 1024 * 1024);
const small = Math.round(large / 4);
const dirs = [fleet(small), fleet(large)];
const sizeOf = (dir) => readdirSync(dir).filter((f) => f.endsWith('.gz')).reduce((s, f) => s + statSync(join(dir, f)).size, 0);
for (const [d, b] of [
  [dirs[0], small],
  [dirs[1], large],
]) console.log(`input ${d}: ${(b / 1024 ** 3).toFixed(2)} GiB uncompressed, ${(sizeOf(d) / 1024 ** 2).toFixed(0)} MiB gzip`);

const smallReport = run('report, small input', ['replay', '--format', 'json', '--report', join(DIR, 'small.html'), dirs[0]]);
const largeReplay = run('replay alone, large input', ['replay', '--format', 'json', dirs[1]]);
const largeReport = run('report, large input', ['replay', '--format', 'json', '--report', join(DIR, 'large.html'), dirs[1]]);

const row = (id, what, value, goal, pass) => console.log(`${id.padEnd(4)} ${what.padEnd(58)} ${value.padEnd(22)} ${goal.padEnd(10)} ${pass === undefined ? 'FAIL (no figure)' : pass ? 'PASS' : 'FAIL'}`);
console.log('');
row('F1', 'input size (uncompressed)', `${(large / 1024 ** 3).toFixed(2)} GiB`, `≥ ${MIN_GIB} GiB`, large >= MIN_GIB * 1024 ** 3);
const ratio = largeReport && largeReplay ? largeReport.secs / largeReplay.secs : undefined;
row('F2', 'report time / replay time, large input', ratio === undefined ? '-' : `${ratio.toFixed(2)}×`, '≤ 1.30×', ratio === undefined ? undefined : ratio <= 1.3);
const rss = largeReport && smallReport ? largeReport.rssMib / smallReport.rssMib : undefined;
row('F3', 'report peak RSS, large / small input (4× the input)', rss === undefined ? '-' : `${rss.toFixed(2)}×`, '≤ 1.25×', rss === undefined ? undefined : rss <= 1.25);
