"""A scripted external agent program for saffron-mcp's tests (tests/external.rs).

It is what a user's agent CLI is to Saffron: a program started with the MCP endpoint and a
bearer token in its environment and the prompt on its standard input, which talks to Saffron's
tool gateway with the official Python `mcp` client over streamable HTTP. What it observes goes
back to the test as the arguments of its tool calls, which the test's fake gateway records.

    python3 agent.py record|stateless|exit|hang|loop
"""

import asyncio
import os
import signal
import subprocess
import sys
import time

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

URL = os.environ["SAFFRON_MCP_URL"]
TOKEN = os.environ["SAFFRON_MCP_TOKEN"]

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "0"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream"}


def token_in_any_argv():
    """Whether any process on this machine has the token in its command line."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                if TOKEN.encode() in cmdline.read():
                    return True
        except OSError:
            pass
    return False


async def probe(headers):
    """The HTTP status of an initialize request sent with `headers`."""
    async with httpx2.AsyncClient() as client:
        response = await client.post(URL, json=INITIALIZE, headers={**ACCEPT, **headers})
        return response.status_code


def text_of(result):
    return "\n".join(block.text for block in result.content if getattr(block, "text", None) is not None)


async def session(era="initialize"):
    client = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {TOKEN}"}, timeout=httpx2.Timeout(30.0, read=300.0)
    )
    async with client:
        async with streamable_http_client(URL, http_client=client) as (read, write):
            async with ClientSession(read, write) as mcp:
                if era == "initialize":
                    await mcp.initialize()
                else:
                    await mcp.discover()
                yield mcp


async def record():
    prompt = sys.stdin.read()
    observed = {
        "stdin": prompt,
        "env_prompt": os.environ.get("SAFFRON_AGENT_PROMPT"),
        "url": URL,
        "no_token": await probe({}),
        "wrong_token": await probe({"Authorization": "Bearer " + "0" * len(TOKEN)}),
        "token_in_argv": token_in_any_argv(),
        "secret_in_env": any(value == "hunter2-long" for value in os.environ.values()),
    }
    async for mcp in session():
        tools = await mcp.list_tools()
        observed["tools"] = [tool.name for tool in tools.tools]
        observed["fill_schema"] = next(t.input_schema for t in tools.tools if t.name == "fill")
        snapshot = await mcp.call_tool("snapshot", {})
        observed["snapshot"] = text_of(snapshot)
        filled = await mcp.call_tool("fill", {"ref": "e1", "value": "{env:PASSWORD}"})
        observed["fill"] = text_of(filled)
        observed["fill_is_error"] = filled.is_error
        unknown = await mcp.call_tool("open_shell", {"command": "ls"})
        observed["unknown"] = text_of(unknown)
        observed["unknown_is_error"] = unknown.is_error
        finished = await mcp.call_tool("finish", {"observed": observed})
        print("finished:", text_of(finished))


async def stateless():
    """The 2026-07-28 revision: no handshake, `server/discover`, each request carries its own
    protocol version."""
    sys.stdin.read()
    async for mcp in session("discover"):
        tools = await mcp.list_tools()
        snapshot = await mcp.call_tool("snapshot", {})
        await mcp.call_tool("finish", {"tools": [tool.name for tool in tools.tools], "snapshot": text_of(snapshot)})


async def loop():
    sys.stdin.read()
    async for mcp in session():
        for _ in range(10):
            await mcp.call_tool("snapshot", {})


async def hang():
    # A program that ignores SIGTERM and leaves a child of its own: the limit must end both.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    child = subprocess.Popen(["sleep", "300"])
    async for mcp in session():
        await mcp.call_tool("note", {"pids": [os.getpid(), child.pid], "url": URL})
    while True:
        time.sleep(1)


def exit_early():
    sys.stdin.read()
    for line in range(1, 31):
        print(f"noise line {line}", file=sys.stderr)
    print("fatal: the model refused the key hunter2-long", file=sys.stderr)
    sys.exit(3)


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "exit":
        exit_early()
    else:
        asyncio.run({"record": record, "stateless": stateless, "loop": loop, "hang": hang}[mode]())
