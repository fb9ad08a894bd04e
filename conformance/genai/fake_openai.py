"""A scripted OpenAI-compatible Chat Completions server on 127.0.0.1, for frameworks whose model
client speaks that API (smolagents' `OpenAIModel`, OpenAI Agents' `OpenAIChatCompletionsModel`).

Each `POST …/chat/completions` answers with the next scripted round: a list of tool calls (the
assistant message's `tool_calls`, `finish_reason: tool_calls`), or, once the rounds are used up, the
scenario's final answer (`final` — a tool call such as smolagents' `final_answer`, or plain text).
Nothing leaves the machine; the server lives in a daemon thread of the driver's own process.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Call = tuple[str, dict[str, Any]]


class FakeOpenAI:
    """Serves `rounds` in order; `reset(rounds, final)` starts the next agent run's script."""

    def __init__(self) -> None:
        self.rounds: list[list[Call]] = []
        self.final: Call | str = 'done'
        self.index = 0
        self.requests = 0
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get('content-length') or 0)
                self.rfile.read(length)
                body = json.dumps(owner.next_completion()).encode()
                self.send_response(200)
                self.send_header('content-type', 'application/json')
                self.send_header('content-length', str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._server = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        return f'http://127.0.0.1:{self._server.server_address[1]}/v1'

    def reset(self, rounds: list[list[Call]], final: Call | str = 'done') -> None:
        with self._lock:
            self.rounds = rounds
            self.final = final
            self.index = 0

    def next_completion(self) -> dict[str, Any]:
        with self._lock:
            self.requests += 1
            n = self.requests
            if self.index < len(self.rounds):
                calls: list[Call] | None = self.rounds[self.index]
                self.index += 1
            elif isinstance(self.final, tuple):
                calls = [self.final]
                self.index += 1
            else:
                calls = None
        if calls is None:
            message: dict[str, Any] = {'role': 'assistant', 'content': self.final}
            finish = 'stop'
        else:
            message = {
                'role': 'assistant',
                'content': None,
                'tool_calls': [
                    {'id': f'call_{n}_{k}', 'type': 'function', 'function': {'name': name, 'arguments': json.dumps(args)}}
                    for k, (name, args) in enumerate(calls)
                ],
            }
            finish = 'tool_calls'
        return {
            'id': f'chatcmpl-{n}',
            'object': 'chat.completion',
            'created': 0,
            'model': 'scripted',
            'choices': [{'index': 0, 'message': message, 'finish_reason': finish}],
            'usage': {'prompt_tokens': 10, 'completion_tokens': 5, 'total_tokens': 15},
        }

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
