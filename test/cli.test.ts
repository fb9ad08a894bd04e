import { WIRE_PROFILES } from '../src/profiles/registry.js';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fixturePath } from './helpers/recorded.js';

// `npm test` builds first (pretest), so the CLI is tested as users run it.
const MAIN = new URL('../dist/bin/repeated-tool-failure-guard.js', import.meta.url).pathname;

function cli(...args: string[]) {
  return cliWithInput(undefined, ...args);
}

function cliWithInput(input: string | undefined, ...args: string[]) {
  const r = spawnSync(process.execPath, [MAIN, ...args], { encoding: 'utf8', timeout: 30_000, input });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const CASES = new URL('../fixtures/cases/turn2/', import.meta.url).pathname;
const jsonLines = (text: string) =>
  text
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('repeated-tool-failure-guard replay', () => {
  it('the main job: --compare on the embedded capture agrees 6/6 and every invariant holds', () => {
    const r = cli('replay', '--compare', 'fixtures/qwen-code-0.24.4/acp-shadow-drain.outfile.json');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('agreement: 6/6 batches');
    expect(r.stdout).toMatch(/batch {3}4 {2}would_warn/);
    expect(r.stdout).toContain('would_warn 1, would_stop 1');
    expect(r.stdout).not.toContain('VIOLATED');
    expect(r.stdout.match(/^ {2}held/gm)).toHaveLength(6);
  });

  it('--format json prints exactly the documented keys, one line per decision, none omitted', () => {
    const r = cli('replay', '--format', 'json', fixturePath('acp-enforce'));
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => l.decision)).toEqual(['tracked', 'tracked', 'tracked', 'warned', 'stopped']);
    for (const l of lines) {
      expect(Object.keys(l).sort()).toEqual(
        ['guard', 'batch', 'batchCountBucket', 'candidateOrdinal', 'decision', 'failureCountBucket', 'mode', 'phaseAfter', 'phaseBefore', 'promptId'].sort(),
      );
    }
    expect(lines[4]).toEqual({
      guard: 'repeated_tool_failure',
      promptId: '3f36da7a-197c-4a0b-bc66-93c34b4e5530########1',
      batch: 5,
      mode: 'enforce',
      decision: 'stopped',
      phaseBefore: 'warned',
      phaseAfter: 'latched',
      failureCountBucket: '8+',
      batchCountBucket: '3+',
      candidateOrdinal: 1,
    });
    expect(r.stderr).toContain('summary:');
  });

  it('--format json adds resetReason on resets only', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rtfg-cli-'));
    // the no-drain capture replayed in enforce with a same-tool success appended is not needed:
    // use the reducer path through a capture with a reset — build one from the shadow capture by
    // marking the 3rd batch's calls cancelled (a cancelled batch resets the candidate).
    const text = spawnSync('cat', [fixturePath('acp-shadow-drain')], { encoding: 'utf8' }).stdout.replace(
      /"call_id": "call_r3_0",([\s\S]*?)"status": "error"/,
      '"call_id": "call_r3_0",$1"status": "cancelled"',
    );
    const file = join(dir, 'reset.json');
    writeFileSync(file, text);
    const r = cli('replay', '--format', 'json', file);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const reset = lines.find((l) => l.decision === 'reset');
    expect(reset).toMatchObject({ batch: 3, resetReason: 'cancelled', phaseBefore: 'tracking', phaseAfter: 'idle' });
    expect(lines.filter((l) => 'resetReason' in l)).toHaveLength(1);
  });

  it('--compare exits 1 on a disagreement and says where', () => {
    const r = cli('replay', '--compare', fixturePath('acp-shadow-nodrain'));
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('agreement: 1/6 batches');
    expect(r.stdout).toContain('differs:');
  });

  it.each([
    { args: ['replay', 'no-such-file.json'], code: 2, err: /^error: no-such-file\.json: cannot read \(ENOENT\)/ },
    { args: ['replay', '--mode', 'loud', 'x.json'], code: 2, err: /expected shadow, warn or enforce/ },
    { args: ['replay'], code: 2, err: /missing required argument/ },
    { args: ['serve', '--port', 'abc'], code: 2, err: /expected a port number/ },
    { args: ['nonsense'], code: 2, err: /unknown command/ },
  ])('user error $args: clear message, no stack trace', ({ args, code, err }) => {
    const r = cli(...args);
    expect(r.code).toBe(code);
    expect(r.stderr).toMatch(err);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('a malformed file names the file and position', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rtfg-cli-'));
    const file = join(dir, 'broken.json');
    writeFileSync(file, '{\n  "name": "qwen-code.tool",\n  "attributes": {\n    "a": 1,\n');
    const r = cli('replay', file);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`^error: ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:1:1: truncated JSON object`));
  });

  it('a half-written last object: the objects before it are replayed, the cut is named, exit 3 (issue 34.7)', () => {
    const text = readFileSync(fixturePath('acp-enforce'), 'utf8');
    const lastStart = text.lastIndexOf('\n{') + 1;
    const dir = mkdtempSync(join(tmpdir(), 'rtfg-cli-'));
    const whole = join(dir, 'before-the-cut.json');
    const cut = join(dir, 'cut.json');
    writeFileSync(whole, text.slice(0, lastStart));
    writeFileSync(cut, text.slice(0, lastStart + Math.floor((text.length - lastStart) / 2)));
    const expected = cli('replay', '--format', 'json', whole);
    const r = cli('replay', '--format', 'json', cut);
    expect(expected.code).toBe(0);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe(expected.stdout);
    const line = text.slice(0, lastStart).split('\n').length;
    expect(r.stderr).toContain(`${cut}:${line}:1: the last object is cut short (`);
    expect(r.stderr).toContain('everything before it was replayed');
  });

  it('a device that never ends (/dev/zero) is refused at once: exit 2', () => {
    const r = cli('replay', '/dev/zero');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: \/dev\/zero: not a file or a pipe \(a device\); replay reads telemetry files/);
  });

  it('a pipe is read (bash process substitution: /dev/fd/N)', () => {
    const r = spawnSync('bash', ['-c', 'exec "$0" "$1" replay --format json <(cat "$2")', process.execPath, MAIN, fixturePath('acp-enforce')], { encoding: 'utf8', timeout: 30_000 });
    expect(r.status).toBe(0);
    expect(jsonLines(r.stdout).map((l) => l.decision)).toEqual(['tracked', 'tracked', 'tracked', 'warned', 'stopped']);
  });

  it.each([['--help'], ['replay', '--help'], ['serve', '--help']])('%s', (...args) => {
    const r = cli(...args);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Usage: repeated-tool-failure-guard/);
  });
});

describe('replay: cannot judge is never silent (issue 12, case 3)', () => {
  it('traces without the logs that settle each call: reason on stderr, unjudged records, exit 3', () => {
    const r = cli('replay', '--format', 'json', '--mode', 'shadow', `${CASES}t2-18a-split-traces-only.otlp.jsonl`);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/cannot judge 11 batch\(es\) of 1 prompt\(s\): no `qwen-code\.tool_call` log records/);
    expect(r.stderr).toContain('replay the logs file too');
    const lines = jsonLines(r.stdout);
    expect(lines).toHaveLength(11);
    for (const l of lines) expect(l).toMatchObject({ guard: 'repeated_tool_failure', judged: false, reason: 'no_terminal_records' });
    expect(lines.map((l) => l.batch)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
  });

  it('both halves of a split collector output, together, are judged: exit 0', () => {
    const r = cli('replay', '--format', 'json', '--mode', 'shadow', `${CASES}t2-18a-split-traces-only.otlp.jsonl`, `${CASES}t2-18b-split-logs-only.otlp.jsonl`);
    expect(r.code).toBe(0);
    const decisions = jsonLines(r.stdout).filter((l) => 'decision' in l);
    expect(decisions.map((l) => l.decision)).toEqual(['tracked', 'tracked', 'tracked', 'tracked', 'tracked', 'tracked', 'tracked', 'would_warn', 'would_stop']);
  });

  it('telemetry of the profile with no tool call says so instead of naming the profile in use', () => {
    const log = JSON.stringify({ _hrTime: [1_700_000_000, 0], attributes: { 'event.name': 'qwen-code.user_prompt', prompt_id: 's########1', 'session.id': 's' }, instrumentationScope: { name: 'qwen-code' } }, null, 2);
    const r = cliWithInput(`${log}\n`, 'replay', '-');
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/no tool batch found for profile qwen-code in 0 span\(s\) and 1 log record\(s\): it is qwen-code telemetry with no tool call in it\./);
    expect(r.stderr).not.toContain('Try --profile');
  });

  it('standard input given twice is a usage error: exit 2', () => {
    const r = cliWithInput('', 'replay', '-', '-');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/standard input \(-\) can be given only once/);
  });

  it('telemetry with no tool batch for the chosen profile says so and names the profile it looks like', () => {
    const r = cli('replay', '--profile', 'batch-span', fixturePath('acp-shadow-drain'));
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/no tool batch found for profile batch-span/);
    expect(r.stderr).toContain('Try --profile qwen-code');
  });
});

describe('replay: --compare with no in-tree events (issue 12, case 4)', () => {
  it('an ACP prompt whose in-tree guard was off is not compared: exit 0', () => {
    const r = cli('replay', '--compare', `${CASES}t2-02-mcp-identical-85.otlp.jsonl`);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/not compared: \S+ \(no in-tree guard event for this prompt/);
    expect(r.stdout).not.toContain('differs:');
  });
});

describe('replay: breaker records in --format json (issue 12, case 5)', () => {
  it.each([
    ['t2-06-poll-identical-success', ['would_warn', 'would_abort']],
    ['t2-16-parallel-identical-in-one-batch', ['would_warn', 'would_abort']],
  ])('%s: identical_call records carry the guard key and closed-vocabulary fields only', (name, decisions) => {
    const r = cli('replay', '--format', 'json', '--mode', 'shadow', `${CASES}${name}.otlp.jsonl`);
    const breaker = jsonLines(r.stdout).filter((l) => l.guard === 'identical_call');
    expect(breaker.map((l) => l.decision)).toEqual(decisions);
    for (const l of breaker) {
      expect(Object.keys(l).sort()).toEqual(['decision', 'guard', 'mode', 'phaseAfter', 'phaseBefore', 'promptId', 'runLengthBucket', 'source']);
    }
    expect(r.stdout).not.toContain('do-not-leak-4412');
  });
});

describe('replay: mixed timestamp precision and clock steps (issue 12, cases 1 and 2)', () => {
  const KEYS = ['decision', 'phaseBefore', 'phaseAfter', 'failureCountBucket', 'batchCountBucket', 'candidateOrdinal', 'resetReason'] as const;
  const project = (lines: Record<string, unknown>[]) =>
    lines.filter((l) => typeof l.decision === 'string' && l.decision !== 'none' && l.guard !== 'identical_call').map((l) => KEYS.map((k) => l[k]));
  it.each(['t2-19-otel-ms-start-ns-end-tight-gap', 't2-15-otel-negative-duration-tool-spans', 't2-18b-split-logs-only'])('%s gives its right value', (name) => {
    const r = cli('replay', '--format', 'json', '--mode', 'shadow', `${CASES}${name}.otlp.jsonl`);
    expect(r.code).toBe(0);
    const expected = jsonLines(readFileSync(`${CASES}${name}.expected.jsonl`, 'utf8'));
    expect(project(jsonLines(r.stdout))).toEqual(project(expected));
  });

  it('spans that end before they start are counted in the summary', () => {
    const r = cli('replay', '--mode', 'shadow', `${CASES}t2-15-otel-negative-duration-tool-spans.otlp.jsonl`);
    expect(r.stdout).toMatch(/\d+ span\(s\) end before they start \(a clock step\)/);
  });
});

describe('replay: slips (issue 12, case 8)', () => {
  it('- reads standard input', () => {
    const r = cliWithInput(readFileSync(fixturePath('acp-shadow-drain'), 'utf8'), 'replay', '--compare', '-');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('agreement: 6/6 batches');
  });

  it('--help lists the choices of --mode and --profile', () => {
    const r = cli('replay', '--help');
    expect(r.stdout.replace(/\s+/g, ' ')).toMatch(/--mode <mode> guard mode for every prompt: shadow, warn or enforce/);
    expect(r.stdout.replace(/\s+/g, ' ')).toContain('(choices: "ineligible", "key-by-tool", default: "ineligible")');
    // Every registry entry is a choice, after `auto`.
    expect(r.stdout.replace(/\s+/g, ' ')).toContain(`choices: ${['auto', ...Object.keys(WIRE_PROFILES)].map((p) => `"${p}"`).join(', ')}`);
  });

  it('a usage error prints one line and a hint, not the whole help', () => {
    const r = cli('replay', '--bogus', 'x');
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual(["error: unknown option '--bogus'", '(add --help for usage)']);
  });

  it('the profile is detected when not given', () => {
    const r = cli('replay', fixturePath('headless-yolo'));
    expect(r.stdout).toContain('profile: qwen-code (detected)');
  });
});


describe('serve under a wrapper (issue 12, case 8)', () => {
  it('stops by itself when the wrapper that started it (npx, a shell) is killed', async () => {
    const { spawn } = await import('node:child_process');
    // `; true` keeps the shell as a parent process, as npx's shell is.
    const wrapper = spawn('sh', ['-c', `"${process.execPath}" "${MAIN}" serve --port 0; true`], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    wrapper.stderr.setEncoding('utf8');
    const closed = new Promise<void>((resolve) => wrapper.stderr.on('close', () => resolve()));
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`serve did not start: ${stderr}`)), 15_000);
      wrapper.stderr.on('data', (chunk: string) => {
        stderr += chunk;
        if (stderr.includes('serve: receiving')) {
          clearTimeout(t);
          resolve();
        }
      });
    });
    wrapper.kill('SIGTERM');
    // The serve process holds the pipe until it exits: the pipe closes once it has stopped.
    const outcome = await Promise.race([closed.then(() => 'stopped'), new Promise((r) => setTimeout(() => r('still running'), 8_000))]);
    expect(outcome).toBe('stopped');
    expect(stderr).toContain('serve: the parent process is gone; stopping');
  }, 30_000);
});
