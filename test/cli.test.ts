import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fixturePath } from './helpers/recorded.js';

// `npm test` builds first (pretest), so the CLI is tested as users run it.
const MAIN = new URL('../dist/cli/main.js', import.meta.url).pathname;

function cli(...args: string[]) {
  const r = spawnSync(process.execPath, [MAIN, ...args], { encoding: 'utf8', timeout: 30_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

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
        ['batch', 'batchCountBucket', 'candidateOrdinal', 'decision', 'failureCountBucket', 'mode', 'phaseAfter', 'phaseBefore', 'promptId'].sort(),
      );
    }
    expect(lines[4]).toEqual({
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

  it.each([['--help'], ['replay', '--help'], ['serve', '--help']])('%s', (...args) => {
    const r = cli(...args);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Usage: repeated-tool-failure-guard/);
  });
});
