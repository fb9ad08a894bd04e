"""Scripted Strands Agents runs for the `genai` wire profile conformance.

Drives the real Strands agent loop (its event loop, concurrent tool executor and tracer) offline:
the model is a scripted `strands.models.Model` subclass, the SDK's extension point for custom
providers, so nothing leaves the machine. Strands' GenAI spans go over OTLP/HTTP (protobuf) to
`OTEL_EXPORTER_OTLP_ENDPOINT` (a loopback sink or `serve`). Each agent invocation is one agent run
(`invoke_agent` span), so one guard prompt. Usage:

    python strands_scenarios.py SCENARIO

`OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental` selects Strands' latest-experimental
GenAI names (`gen_ai.provider.name`); without it Strands emits the v1.36-and-earlier ones
(`gen_ai.system`).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import AsyncGenerator
from typing import Any

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from strands import Agent, tool
from strands.models import Model
from strands.telemetry import StrandsTelemetry

Call = tuple[str, dict[str, Any]]


class ScriptedModel(Model):
    """A model that answers each request with the next scripted round of tool calls, then text."""

    def __init__(self, rounds: list[list[Call]]) -> None:
        self.rounds = rounds
        self.index = 0
        self.config: dict[str, Any] = {'model_id': 'scripted'}

    def update_config(self, **model_config: Any) -> None:
        self.config.update(model_config)

    def get_config(self) -> Any:
        return self.config

    async def structured_output(self, output_model, prompt, system_prompt=None, **kwargs):  # type: ignore[override]
        raise NotImplementedError
        yield  # pragma: no cover

    async def stream(self, messages, tool_specs=None, system_prompt=None, **kwargs) -> AsyncGenerator[Any, None]:  # type: ignore[override]
        yield {'messageStart': {'role': 'assistant'}}
        if self.index < len(self.rounds):
            calls = self.rounds[self.index]
            self.index += 1
            for k, (name, args) in enumerate(calls):
                yield {'contentBlockStart': {'start': {'toolUse': {'toolUseId': f'call_{self.index}_{k}', 'name': name}}}}
                yield {'contentBlockDelta': {'delta': {'toolUse': {'input': json.dumps(args)}}}}
                yield {'contentBlockStop': {}}
            stop = 'tool_use'
        else:
            yield {'contentBlockDelta': {'delta': {'text': 'I could not finish the task.'}}}
            yield {'contentBlockStop': {}}
            stop = 'end_turn'
        yield {'messageStop': {'stopReason': stop}}
        yield {
            'metadata': {
                'usage': {'inputTokens': 10, 'outputTokens': 5, 'totalTokens': 15},
                'metrics': {'latencyMs': 1},
            }
        }


@tool
def read_file(path: str) -> str:
    """Read a file from the workspace.

    Args:
        path: The file to read.
    """
    if path.startswith('/ok/'):
        return 'contents'
    # A typed execution failure: Strands records it as span status ERROR plus an `exception`
    # event (exception.type = FileNotFoundError).
    raise FileNotFoundError('No such file or directory')


@tool
def list_dir(path: str) -> str:
    """List a directory.

    Args:
        path: The directory.
    """
    return 'a\nb'


@tool
def run_check(name: str) -> dict[str, Any]:
    """Run a named check; it reports failure through an error-status tool result, not an exception.

    Args:
        name: The check.
    """
    return {'status': 'error', 'content': [{'text': 'check failed'}]}


def read(path: str) -> Call:
    return ('read_file', {'path': path})


def scenarios() -> dict[str, list[list[list[Call]]]]:
    """Each scenario: a list of runs (prompts); each run: its rounds of tool calls."""
    missing = [read(f'/missing/{i}') for i in range(64)]
    return {
        'failure-loop': [[[missing[i]] for i in range(10)]],
        'success-reset': [
            [[missing[i]] for i in range(5)] + [[read('/ok/a')]] + [[missing[10 + i]] for i in range(10)]
        ],
        'parallel-batch': [
            [
                [missing[0], missing[1], missing[2]],
                [missing[3], ('list_dir', {'path': '.'}), missing[4], missing[5]],
                [missing[6], missing[7], missing[8]],
                [missing[9], missing[10], missing[11]],
            ]
        ],
        'new-run': [[[missing[i]] for i in range(6)], [[missing[20 + i]] for i in range(6)]],
        # A tool that fails through an error-status result (no exception): the span has error
        # status but no error type, so every round is `unknown` to the guard.
        'untyped-error-loop': [[[('run_check', {'name': 'lint'})] for _ in range(10)]],
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument('scenario', choices=sorted(scenarios()))
    args = parser.parse_args()

    # Strands' documented setup: a global tracer provider with its OTLP exporter (endpoint from
    # OTEL_EXPORTER_OTLP_ENDPOINT). BatchSpanProcessor, flushed before exit.
    telemetry = StrandsTelemetry()
    telemetry.tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    provider = telemetry.tracer_provider
    agent: Agent | None = None
    for rounds in scenarios()[args.scenario]:
        model = ScriptedModel(rounds)
        if agent is None:
            agent = Agent(
                model=model,
                name='conformance_agent',
                tools=[read_file, list_dir, run_check],
                callback_handler=None,
            )
        else:
            agent.model = model  # the next run continues the same conversation
        agent(f'Scenario {args.scenario}: read the files.')
    provider.force_flush()
    provider.shutdown()
    print(json.dumps({'framework': 'strands-agents', 'scenario': args.scenario}))
    return 0


if __name__ == '__main__':
    sys.exit(main())
