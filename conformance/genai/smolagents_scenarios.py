"""Scripted smolagents runs, instrumented by OpenInference, for the `openinference` wire profile
conformance.

Drives the real smolagents `ToolCallingAgent` loop (its step loop and its thread pool for parallel
tool calls) against the scripted OpenAI-compatible server of fake_openai.py on 127.0.0.1, through
smolagents' own `OpenAIModel` client. `openinference-instrumentation-smolagents` writes the spans
(AGENT `{agent}.run`, CHAIN `Step N`, LLM `OpenAIModel.generate`, TOOL `{ToolClass}` with
`tool.name`); they go over OTLP/HTTP (protobuf) to `OTEL_EXPORTER_OTLP_ENDPOINT`. Each
`agent.run` is one agent run (one guard prompt); every run ends with the model calling smolagents'
`final_answer` tool, which is one more (successful) tool batch. Usage:

    python smolagents_scenarios.py SCENARIO
"""

from __future__ import annotations

import argparse
import json
import sys

from openinference.instrumentation.smolagents import SmolagentsInstrumentor
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from smolagents import OpenAIModel, ToolCallingAgent, tool

from fake_openai import FakeOpenAI
from scenarios import list_dir_impl, read_file_impl, run_check_impl, scenarios


@tool
def read_file(path: str) -> str:
    """Read a file from the workspace.

    Args:
        path: The file to read.
    """
    return read_file_impl(path)


@tool
def list_dir(path: str) -> str:
    """List a directory.

    Args:
        path: The directory.
    """
    return list_dir_impl(path)


@tool
def run_check(name: str) -> str:
    """Run a named check; it reports failure in its return value.

    Args:
        name: The check.
    """
    return run_check_impl(name)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument('scenario', choices=sorted(scenarios()))
    args = parser.parse_args()

    # OpenInference's documented setup: an SDK TracerProvider with an OTLP exporter, then the
    # instrumentor (endpoint from OTEL_EXPORTER_OTLP_ENDPOINT).
    provider = TracerProvider(resource=Resource.create({}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    SmolagentsInstrumentor().instrument(tracer_provider=provider)

    server = FakeOpenAI()
    model = OpenAIModel(model_id='scripted', api_base=server.base_url, api_key='offline')
    agent = ToolCallingAgent(tools=[read_file, list_dir, run_check], model=model, max_steps=40, name='conformance_agent', verbosity_level=0)
    for i, rounds in enumerate(scenarios()[args.scenario]):
        server.reset(rounds, final=('final_answer', {'answer': 'I could not finish the task.'}))
        # The second run continues the same agent and memory (reset=False), as a chat would.
        agent.run(f'Scenario {args.scenario}: read the files.', reset=i == 0)
    server.close()
    provider.force_flush()
    provider.shutdown()
    print(json.dumps({'framework': 'smolagents', 'scenario': args.scenario}))
    return 0


if __name__ == '__main__':
    sys.exit(main())
