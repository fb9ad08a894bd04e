"""Scripted pydantic-ai runs for the `genai` wire profile conformance.

Drives the real pydantic-ai agent loop offline with its own `FunctionModel` (no provider, no
network) and exports the agent's OpenTelemetry GenAI spans over OTLP/HTTP (protobuf) to
`OTEL_EXPORTER_OTLP_ENDPOINT` (a loopback sink or `serve`). Every scenario is one agent run, so
one guard prompt. Usage:

    python pydantic_ai_scenarios.py SCENARIO [--version N]

`--version` is pydantic-ai's instrumentation data format (5 is its default; 2 is the legacy
pre-GenAI span names). Prints one JSON line with the run's conversation id.
"""

from __future__ import annotations

import argparse
import json
import sys

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from pydantic_ai import Agent, ModelRetry
from pydantic_ai.capabilities.instrumentation import Instrumentation
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.instrumented import InstrumentationSettings


class Script:
    """What the fake model answers, round by round: a list of tool-call batches, then text."""

    def __init__(self, rounds: list[list[tuple[str, dict]]]) -> None:
        self.rounds = rounds
        self.index = 0

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if self.index >= len(self.rounds):
            return ModelResponse(parts=[TextPart('I could not finish the task.')])
        calls = self.rounds[self.index]
        self.index += 1
        return ModelResponse(
            parts=[
                ToolCallPart(tool_name=name, args=args, tool_call_id=f'call_{self.index}_{k}')
                for k, (name, args) in enumerate(calls)
            ]
        )


def read(path: str) -> tuple[str, dict]:
    return ('read_file', {'path': path})


def build_agent(script: Script, settings: InstrumentationSettings) -> Agent:
    agent = Agent(
        FunctionModel(script, model_name='scripted'),
        name='conformance_agent',
        capabilities=[Instrumentation(settings=settings)],
        retries=50,
    )

    @agent.tool_plain
    def read_file(path: str) -> str:
        """Read a file from the workspace."""
        if path.startswith('/ok/'):
            return 'contents'
        # A typed, execution-time failure the model is told about: pydantic-ai records it as
        # span status ERROR plus an `exception` event of type ToolRetryError.
        raise ModelRetry('No such file or directory')

    @agent.tool_plain
    def list_dir(path: str) -> str:
        """List a directory."""
        return 'a\nb'

    return agent


def scenarios() -> dict[str, list[list[list[tuple[str, dict]]]]]:
    """Each scenario: a list of runs (prompts); each run: its rounds of tool calls."""
    missing = [read(f'/missing/{i}') for i in range(64)]
    return {
        # 10 rounds, one failing call each: tracked, then would_warn at round 8, would_stop at 9.
        'failure-loop': [[[missing[i]] for i in range(10)]],
        # 5 failing rounds, then the same tool succeeds (reset: success), then 10 failing rounds.
        'success-reset': [
            [[missing[i]] for i in range(5)]
            + [[read('/ok/a')]]
            + [[missing[10 + i]] for i in range(10)]
        ],
        # 4 rounds of 3 parallel failing calls (one model response each), one with an
        # other-tool success beside them.
        'parallel-batch': [
            [
                [missing[0], missing[1], missing[2]],
                [missing[3], ('list_dir', {'path': '.'}), missing[4], missing[5]],
                [missing[6], missing[7], missing[8]],
                [missing[9], missing[10], missing[11]],
            ]
        ],
        # Two runs of the same conversation (the second continues the first's history), 6 failing
        # rounds each: a new run is a new prompt, so neither reaches the threshold.
        'new-run': [[[missing[i]] for i in range(6)], [[missing[20 + i]] for i in range(6)]],
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument('scenario', choices=sorted(scenarios()))
    parser.add_argument('--version', type=int, default=5)
    args = parser.parse_args()

    provider = TracerProvider(resource=Resource.create({'service.name': 'pydantic-ai-conformance'}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    settings = InstrumentationSettings(
        tracer_provider=provider,
        include_content=False,
        version=args.version,  # type: ignore[arg-type]
    )
    history: list[ModelMessage] | None = None
    conversation_id: str | None = None
    for rounds in scenarios()[args.scenario]:
        agent = build_agent(Script(rounds), settings)
        result = agent.run_sync(f'Scenario {args.scenario}: read the files.', message_history=history)
        history = result.all_messages()
        conversation_id = conversation_id or getattr(result, 'conversation_id', None)
    provider.force_flush()
    provider.shutdown()
    print(json.dumps({'framework': 'pydantic-ai', 'scenario': args.scenario, 'version': args.version}))
    return 0


if __name__ == '__main__':
    sys.exit(main())
