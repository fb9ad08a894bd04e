"""Scripted Google ADK runs for the genai conformance (their own environment: ADK 2.13.0 requires
opentelemetry-sdk<=1.44, see requirements-adk.txt).

Drives the real ADK loop (`InMemoryRunner`, `LlmAgent`, its parallel function calling and its
built-in GenAI tracing) offline: the model is a scripted `BaseLlm` subclass (ADK's extension point
for model providers), so nothing leaves the machine. A raising tool would end an ADK run, so the
runs use ADK's own way of letting the model retry one, `ReflectAndRetryToolPlugin`; with
`ADK_EXPERIMENTAL_TELEMETRY=true` ADK marks the retried call with
`adk.experimental.response.source=on_tool_error_callback`. Spans go over OTLP/HTTP (protobuf) to
`OTEL_EXPORTER_OTLP_ENDPOINT`. Usage:

    python adk_scenarios.py SCENARIO
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import AsyncGenerator
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.reflect_retry_tool_plugin import ReflectAndRetryToolPlugin
from google.adk.runners import InMemoryRunner
from google.genai import types
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from scenarios import list_dir_impl, read_file_impl, run_check_impl, scenarios

ROUNDS: list[list[tuple[str, dict[str, Any]]]] = []
STATE = {'index': 0, 'calls': 0}


class ScriptedLlm(BaseLlm):
    """Answers each request with the next scripted round of function calls, then text."""

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        if STATE['index'] < len(ROUNDS):
            calls = ROUNDS[STATE['index']]
            STATE['index'] += 1
            parts = []
            for name, args in calls:
                STATE['calls'] += 1
                parts.append(types.Part(function_call=types.FunctionCall(id=f"call_{STATE['calls']}", name=name, args=args)))
        else:
            parts = [types.Part(text='I could not finish the task.')]
        yield LlmResponse(content=types.Content(role='model', parts=parts))


def read_file(path: str) -> str:
    """Read a file from the workspace.

    Args:
        path: The file to read.
    """
    return read_file_impl(path)


def list_dir(path: str) -> str:
    """List a directory.

    Args:
        path: The directory.
    """
    return list_dir_impl(path)


def run_check(name: str) -> str:
    """Run a named check; it reports failure in its return value.

    Args:
        name: The check.
    """
    return run_check_impl(name)


async def run(scenario: str) -> None:
    agent = LlmAgent(name='conformance_agent', model=ScriptedLlm(model='scripted'), instruction='Read the files.', tools=[read_file, list_dir, run_check])
    plugin = ReflectAndRetryToolPlugin(max_retries=1000, throw_exception_if_retry_exceeded=False)
    runner = InMemoryRunner(agent=agent, app_name='conformance', plugins=[plugin])
    session = await runner.session_service.create_session(app_name='conformance', user_id='u')
    for rounds in scenarios()[scenario]:
        ROUNDS[:] = rounds
        STATE['index'] = 0
        message = types.Content(role='user', parts=[types.Part(text=f'Scenario {scenario}: read the files.')])
        async for _ in runner.run_async(user_id='u', session_id=session.id, new_message=message):
            pass


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument('scenario', choices=sorted(scenarios()))
    args = parser.parse_args()
    provider = TracerProvider(resource=Resource.create({}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    asyncio.run(run(args.scenario))
    provider.force_flush()
    provider.shutdown()
    print(json.dumps({'framework': 'google-adk', 'scenario': args.scenario}))
    return 0


if __name__ == '__main__':
    sys.exit(main())
