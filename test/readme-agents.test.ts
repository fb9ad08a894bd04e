/**
 * README's "Which path for which agent" table against what the code supports: one row per profile
 * of the registry and no row for an agent the registry lacks, except the in-process-only entries
 * listed here (each an export of package.json); every package entry the table names is exported;
 * every hook command the CLI has is in the table and every hook the table names is a command; replay
 * and serve only observe (the design: out of process the guard never acts).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { WIRE_PROFILES } from '../src/profiles/registry.js';

const README = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const PACKAGE = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  name: string;
  exports: Record<string, unknown>;
};
const CLI = new URL('../dist/bin/repeated-tool-failure-guard.js', import.meta.url).pathname;

/**
 * Agents the guard serves only in process, through a package entry of their own (no telemetry
 * profile: the agent writes no OpenTelemetry the guard reads). Row name → package.json export.
 */
const IN_PROCESS_ONLY: Readonly<Record<string, string>> = { './pi': './pi', './claude-agent-sdk': './claude-agent-sdk' };

const COLUMNS = ['agent (profile)', 'checked with', 'in process', 'replay', 'serve', 'hook', 'what to install'] as const;
type Row = Readonly<Record<(typeof COLUMNS)[number], string>> & { readonly name: string };

/** The table's rows, under the section's heading, split into cells by column name. */
function tableRows(): Row[] {
  const at = README.indexOf('\n## Which path for which agent\n');
  expect(at).toBeGreaterThan(-1);
  const section = README.slice(at + 1, README.indexOf('\n## ', at + 1));
  const lines = section.split('\n').filter((l) => l.startsWith('|'));
  const cells = (line: string): string[] => line.slice(1, line.trimEnd().length - 1).split('|').map((c) => c.trim());
  expect(cells(lines[0] as string)).toEqual([...COLUMNS]);
  return lines.slice(2).map((line) => {
    const values = cells(line);
    expect(values).toHaveLength(COLUMNS.length);
    const row = Object.fromEntries(COLUMNS.map((c, i) => [c, values[i] as string])) as Record<(typeof COLUMNS)[number], string>;
    // The row's name: the first backticked word of its first cell.
    const name = /`([^`]+)`/.exec(row['agent (profile)'])?.[1];
    expect(name, `a row without a backticked name: ${line}`).toBeDefined();
    return { ...row, name: name as string };
  });
}

/** The modes a path cell gives: `—` (none) or a `·`-separated list before its first colon or parenthesis. */
function modes(cell: string): string[] {
  if (cell.startsWith('—')) return [];
  const head = cell.split(/[:(,]/, 1)[0] as string;
  return head.split('·').map((m) => m.trim());
}

/** The hook commands of the built CLI, from its own help. */
function cliHookCommands(): string[] {
  const help = spawnSync(process.execPath, [CLI, '--help'], { encoding: 'utf8', timeout: 20_000 });
  expect(help.status).toBe(0);
  return [...help.stdout.matchAll(/^ {2}([a-z][a-z0-9-]*-hook)\b/gm)].map((m) => m[1] as string);
}

const rows = tableRows();
const names = rows.map((r) => r.name);

describe('README "Which path for which agent" matches the registry, package.json and the CLI', () => {
  it('names each agent once', () => {
    expect(new Set(names).size).toBe(names.length);
  });

  it.each(Object.keys(WIRE_PROFILES))('the registry profile %s has a row', (profile) => {
    expect(names).toContain(profile);
  });

  it('names no agent the registry lacks, except the in-process-only entries', () => {
    const unknown = names.filter((n) => !(n in WIRE_PROFILES) && !(n in IN_PROCESS_ONLY));
    expect(unknown).toEqual([]);
  });

  it.each(Object.entries(IN_PROCESS_ONLY))('in-process-only %s is a package export, used in process only', (name, entry) => {
    expect(Object.keys(PACKAGE.exports)).toContain(entry);
    const row = rows.find((r) => r.name === name);
    expect(row, `no row for ${name}`).toBeDefined();
    expect(row?.['in process']).toContain(`${PACKAGE.name}/${entry.slice(2)}`);
    for (const path of ['replay', 'serve', 'hook'] as const) expect(modes(row?.[path] ?? '')).toEqual([]);
  });

  it('every package entry the table names is in package.json "exports"', () => {
    const named = rows.flatMap((r) => [...r['in process'].matchAll(new RegExp(`\`${PACKAGE.name}/([a-z0-9-]+)\``, 'g'))].map((m) => `./${m[1] as string}`));
    expect(named.length).toBeGreaterThan(0);
    for (const entry of named) expect(Object.keys(PACKAGE.exports)).toContain(entry);
  });

  it('every path cell gives modes of the design, and replay and serve only observe', () => {
    for (const row of rows) {
      for (const path of ['in process', 'replay', 'serve', 'hook'] as const) {
        for (const mode of modes(row[path])) expect(['shadow', 'warn', 'enforce'], `${row.name} ${path}: ${row[path]}`).toContain(mode);
      }
      for (const path of ['replay', 'serve'] as const) expect(modes(row[path]), `${row.name} ${path}`).not.toContain('warn');
      for (const path of ['replay', 'serve'] as const) expect(modes(row[path]), `${row.name} ${path}`).not.toContain('enforce');
      // A telemetry profile is read by replay and serve; an in-process-only entry is not.
      const observed = row.name in WIRE_PROFILES;
      expect(modes(row.replay), `${row.name} replay`).toEqual(observed ? ['shadow'] : []);
      expect(modes(row.serve), `${row.name} serve`).toEqual(observed ? ['shadow'] : []);
    }
  });

  it("lists every hook command of the CLI in its agent's row, and names no hook the CLI lacks", () => {
    const commands = cliHookCommands();
    expect(commands).toEqual(expect.arrayContaining(['claude-code-hook', 'gemini-cli-hook']));
    const named = rows.flatMap((r) => [...r.hook.matchAll(/`([a-z0-9-]+-hook)`/g)].map((m) => ({ row: r.name, command: m[1] as string })));
    expect(named.map((n) => n.command).sort()).toEqual([...commands].sort());
    for (const { row, command } of named) {
      expect(command).toBe(`${row}-hook`);
      expect(modes(rows.find((r) => r.name === row)?.hook ?? '')).toEqual(['shadow', 'warn', 'enforce']);
    }
  });
});
