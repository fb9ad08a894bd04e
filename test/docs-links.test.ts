/**
 * Every relative link in README.md and the documentation resolves: the file (or folder) exists in
 * the repository, and a `#fragment` names a heading of the target as GitHub renders its anchors
 * (github-slugger, the slugger GitHub's own renderer follows). Links inside code are not links.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import GithubSlugger from 'github-slugger';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** README.md, docs/, and the READMEs beside the code they describe (not installed packages). */
function markdownFiles(): string[] {
  const files = ['README.md', 'CHANGELOG.md'];
  for (const dir of ['docs', 'src', 'conformance', 'bench', 'collector-config', 'fixtures', 'examples']) walk(dir, files);
  return files.filter((f) => existsSync(join(ROOT, f)));
}

function walk(dir: string, into: string[]): void {
  const abs = join(ROOT, dir);
  if (!existsSync(abs)) return;
  for (const entry of readdirSync(abs, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const rel = join(dir, entry.name);
    if (entry.isDirectory()) walk(rel, into);
    else if (entry.name.endsWith('.md')) into.push(rel);
  }
}

/** The text outside fenced code blocks and inline code spans. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[\s\S]*?^\1/gm, '').replace(/`[^`\n]*`/g, '');
}

/** Link targets: `[text](target)` and `![alt](target)`, titles dropped. */
function linkTargets(markdown: string): string[] {
  const targets: string[] = [];
  for (const m of prose(markdown).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(m[1] as string);
  return targets;
}

/** The anchors GitHub gives a Markdown file's headings (ATX headings outside code). */
function anchors(markdown: string): Set<string> {
  const slugger = new GithubSlugger();
  const out = new Set<string>();
  for (const line of markdown.replace(/^(```|~~~)[\s\S]*?^\1/gm, '').split('\n')) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (m === null) continue;
    // GitHub slugs the heading's text: inline code keeps its content, link syntax keeps its text.
    const text = (m[1] as string).replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/`/g, '');
    out.add(slugger.slug(text));
  }
  return out;
}

const files = markdownFiles();

describe('relative links in README.md and the docs resolve', () => {
  it('covers README.md and docs/', () => {
    expect(files).toContain('README.md');
    expect(files).toContain(join('docs', 'reference.md'));
  });

  it.each(files)('%s', (file) => {
    const text = readFileSync(join(ROOT, file), 'utf8');
    const broken: string[] = [];
    for (const target of linkTargets(text)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:, …
      const [path = '', fragment] = target.split('#', 2);
      const resolved = path === '' ? join(ROOT, file) : join(ROOT, dirname(file), decodeURIComponent(path));
      if (!resolved.startsWith(ROOT) || !existsSync(resolved)) {
        broken.push(`${target}: no such file`);
        continue;
      }
      if (fragment === undefined || fragment === '') continue;
      if (statSync(resolved).isDirectory() || !resolved.endsWith('.md')) {
        broken.push(`${target}: a fragment on something that is not a Markdown file`);
        continue;
      }
      if (!anchors(readFileSync(resolved, 'utf8')).has(fragment)) broken.push(`${target}: no heading #${fragment} in ${relative(ROOT, resolved)}`);
    }
    expect(broken).toEqual([]);
  });

  it('finds a broken file, a broken anchor and ignores links inside code (the checker itself)', () => {
    const sample = '# Top\n\n## A `b` c\n\n[ok](#a-b-c) [bad](#nope) `[code](missing.md)`\n\n```\n[x](also-missing.md)\n```\n';
    expect(linkTargets(sample)).toEqual(['#a-b-c', '#nope']);
    expect([...anchors(sample)]).toEqual(['top', 'a-b-c']);
  });
});
