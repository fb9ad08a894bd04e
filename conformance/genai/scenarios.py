"""The scripted scenarios shared by the genai conformance drivers written after pydantic-ai and
Strands (smolagents, OpenAI Agents, ...): each scenario is a list of agent runs (prompts), each run
a list of model rounds, each round the tool calls the scripted model asks for at once.

The tools behave the same in every framework:

- `read_file(path)`: `/ok/…` returns text; `/locked/…` raises `PermissionError`; anything else
  raises `FileNotFoundError` (a typed execution failure).
- `list_dir(path)`: always succeeds (another tool succeeding in between).
- `run_check(name)`: returns an error text without raising (a failure the framework cannot see).

The decisions the design requires for each scenario are in expected.json.
"""

from __future__ import annotations

from typing import Any

Call = tuple[str, dict[str, Any]]


def read(path: str) -> Call:
    return ('read_file', {'path': path})


LIST: Call = ('list_dir', {'path': '.'})
CHECK: Call = ('run_check', {'name': 'lint'})


def read_file_impl(path: str) -> str:
    if path.startswith('/ok/'):
        return 'contents'
    if path.startswith('/locked/'):
        raise PermissionError('Permission denied')
    raise FileNotFoundError('No such file or directory')


def list_dir_impl(path: str) -> str:
    return 'a\nb'


def run_check_impl(name: str) -> str:
    return 'Error: check failed'


def scenarios() -> dict[str, list[list[list[Call]]]]:
    missing = [read(f'/missing/{i}') for i in range(64)]
    locked = [read(f'/locked/{i}') for i in range(64)]
    return {
        'failure-loop': [[[missing[i]] for i in range(10)]],
        'success-reset': [[[missing[i]] for i in range(5)] + [[read('/ok/a')]] + [[missing[10 + i]] for i in range(10)]],
        'parallel-batch': [
            [
                [missing[0], missing[1], missing[2]],
                [missing[3], LIST, missing[4], missing[5]],
                [missing[6], missing[7], missing[8]],
                [missing[9], missing[10], missing[11]],
            ]
        ],
        'new-run': [[[missing[i]] for i in range(6)], [[missing[20 + i]] for i in range(6)]],
        # Rounds of only another tool succeeding between the failing ones leave the streak as it is.
        'other-tools-between': [
            [[missing[0]], [missing[1]], [LIST], [missing[2]], [missing[3]], [LIST], [missing[4]], [missing[5]], [LIST], [missing[6]], [missing[7]], [missing[8]]]
        ],
        # Two failure types of one tool, alternating: every batch starts a new streak.
        'alternating-types': [[[missing[i]] if i % 2 == 0 else [locked[i]] for i in range(10)]],
        # A tool reporting failure in its return value: the span says success.
        'returned-error-loop': [[[CHECK] for _ in range(10)]],
    }
