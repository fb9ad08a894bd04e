#!/usr/bin/env bash
# CPU time (user + system, /usr/bin/time -f %U+%S) of single CLI runs, the bundle (package.json bin)
# against the unbundled tsc output: 5 runs each, the median. Run `npm run build` first.
#   bash bench/cli-start.sh
# (docs/cli-bundle.md records a run.)
set -u
cd "$(dirname "$0")/.."
F=fixtures/qwen-code-0.24.4/acp-shadow-drain.outfile.json
S=$(mktemp -d)
PRE='{"session_id":"s1","transcript_path":"/home/u/.claude/projects/x/s1.jsonl","cwd":"/home/u/work","prompt_id":"p1","permission_mode":"bypassPermissions","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git status","description":"Inspect the repository"},"tool_use_id":"t1"}'
BATCH='{"session_id":"s1","transcript_path":"/home/u/.claude/projects/x/s1.jsonl","cwd":"/home/u/work","prompt_id":"p1","permission_mode":"bypassPermissions","hook_event_name":"PostToolBatch","tool_calls":[{"tool_name":"Bash","tool_input":{"command":"git status"},"tool_use_id":"t1","tool_response":"Exit code 128\nfatal: not a git repository"}]}'
med() { sort -n | sed -n 3p; }
one() { # label input cli args...
  local label=$1 input=$2; shift 2
  local out=()
  for i in 1 2 3 4 5; do
    printf '%s' "$input" | /usr/bin/time -o "$S/t" -f '%U %S' node "$@" >/dev/null 2>/dev/null
    t=$(tail -1 "$S/t" | awk '{printf "%.2f", $1+$2}')
    out+=("$t")
  done
  printf '%-40s %s  median %s\n' "$label" "${out[*]}" "$(printf '%s\n' "${out[@]}" | med)"
}
for cli in dist/bin/repeated-tool-failure-guard.js dist/cli/main.js; do
  echo "== $cli"
  one "--version" "" $cli --version
  one "replay acp-shadow-drain --format json" "" $cli replay $F --format json
  one "claude-code-hook PreToolUse" "$PRE" $cli claude-code-hook --state-dir $S --mode enforce
  one "claude-code-hook PostToolBatch" "$BATCH" $cli claude-code-hook --state-dir $S --mode enforce
done
# /usr/bin/time counts in 10 ms steps: the hook 20 times in a loop, per run, and a bare node start
printf '%s' "$PRE" > "$S/pre.json"
for cli in dist/bin/repeated-tool-failure-guard.js dist/cli/main.js 'node -e 0'; do
  if [ "$cli" = 'node -e 0' ]; then cmd='node -e 0'; else cmd="node $cli claude-code-hook --state-dir $S --mode enforce"; fi
  /usr/bin/time -o "$S/t" -f '%U %S' bash -c "for i in \$(seq 20); do $cmd < $S/pre.json >/dev/null; done"
  printf '%-40s %s s per run\n' "20x ${cli%% *}" "$(awk '{printf "%.4f", ($1+$2)/20}' "$S/t")"
done
rm -rf "$S"
