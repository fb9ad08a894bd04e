"""Scripted OpenAI Agents SDK runs for the genai conformance, instrumented one of several ways.

Drives the real OpenAI Agents SDK loop (`Runner.run_sync`: its turn loop, concurrent function-tool
execution and its own tracing) against the scripted OpenAI-compatible server of fake_openai.py on
127.0.0.1, through the SDK's `OpenAIChatCompletionsModel`. The SDK's own trace export to OpenAI is
replaced, so nothing leaves the machine. Spans go over OTLP/HTTP (protobuf) to
`OTEL_EXPORTER_OTLP_ENDPOINT`. Each `Runner.run_sync` is one agent run (one guard prompt).

    python openai_agents_scenarios.py SCENARIO --instrumentation openinference

`--instrumentation openinference`: `openinference-instrumentation-openai-agents` (an AGENT span per
SDK trace with the agent's AGENT span inside, LLM spans per model response, TOOL spans with
`tool.name`). A function tool that raises is reported to the model by the SDK's default failure
handler; the SDK marks the span with an error that carries no type, and the instrumentation turns
that into status ERROR with no exception event.
"""

from __future__ import annotations

import argparse
import json
import sys

from agents import Agent, OpenAIChatCompletionsModel, RunConfig, Runner, function_tool
from openai import AsyncOpenAI
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from fake_openai import FakeOpenAI
from scenarios import list_dir_impl, read_file_impl, run_check_impl, scenarios


@function_tool
def read_file(path: str) -> str:
    """Read a file from the workspace.

    Args:
        path: The file to read.
    """
    return read_file_impl(path)


@function_tool
def list_dir(path: str) -> str:
    """List a directory.

    Args:
        path: The directory.
    """
    return list_dir_impl(path)


@function_tool
def run_check(name: str) -> str:
    """Run a named check; it reports failure in its return value.

    Args:
        name: The check.
    """
    return run_check_impl(name)


def instrument(kind: str, provider: TracerProvider) -> None:
    if kind == 'openinference':
        from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

        # exclusive_processor (the default) replaces the SDK's exporter to OpenAI's backend.
        OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)
    else:
        raise SystemExit(f'unknown instrumentation {kind}')


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument('scenario', choices=sorted(scenarios()))
    parser.add_argument('--instrumentation', default='openinference')
    args = parser.parse_args()

    provider = TracerProvider(resource=Resource.create({}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    instrument(args.instrumentation, provider)

    server = FakeOpenAI()
    model = OpenAIChatCompletionsModel(model='scripted', openai_client=AsyncOpenAI(base_url=server.base_url, api_key='offline', max_retries=0))
    agent = Agent(name='conformance_agent', instructions='Read the files.', model=model, tools=[read_file, list_dir, run_check])
    history: list = []
    for rounds in scenarios()[args.scenario]:
        server.reset(rounds, final='I could not finish the task.')
        result = Runner.run_sync(agent, history + [{'role': 'user', 'content': f'Scenario {args.scenario}: read the files.'}], max_turns=40, run_config=RunConfig(tracing_disabled=False))
        history = result.to_input_list()  # the next run continues the same conversation
    server.close()
    provider.force_flush()
    provider.shutdown()
    print(json.dumps({'framework': 'openai-agents', 'scenario': args.scenario}))
    return 0


if __name__ == '__main__':
    sys.exit(main())
