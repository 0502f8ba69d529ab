"""An external agent program for `saffron run`: a scripted MCP client that records the example
project's "Sign in with the demo account" through the gateway Saffron serves over streamable
HTTP. Like a model, it reads each snapshot it is sent to find the refs it acts on.

Saffron starts it with SAFFRON_MCP_URL and SAFFRON_MCP_TOKEN in its environment and the task on
its standard input.
"""

import asyncio
import os
import re
import sys

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

URL = os.environ["SAFFRON_MCP_URL"]
TOKEN = os.environ["SAFFRON_MCP_TOKEN"]


def ref(snapshot, text):
    """The ref of the first element line of `snapshot` that holds `text`."""
    for line in snapshot.splitlines():
        if text in line and "[ref=" in line:
            return re.search(r"\[ref=([^\]]+)\]", line).group(1)
    sys.exit(f"no element line with {text!r} in the snapshot:\n{snapshot}")


async def main():
    task = sys.stdin.read()
    if "Perform steps 1 to 4." not in task:
        sys.exit(f"unexpected task:\n{task}")
    snapshot = task
    client = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {TOKEN}"}, timeout=httpx2.Timeout(30.0, read=300.0)
    )
    async with client:
        async with streamable_http_client(URL, http_client=client) as (read, write):
            async with ClientSession(read, write) as mcp:
                await mcp.initialize()
                names = {tool.name for tool in (await mcp.list_tools()).tools}
                if not {"browser_click", "saffron_step", "saffron_done"} <= names:
                    sys.exit(f"the gateway's tools: {sorted(names)}")

                async def call(name, arguments):
                    nonlocal snapshot
                    result = await mcp.call_tool(name, arguments)
                    text = "\n".join(getattr(block, "text", "") for block in result.content)
                    if result.is_error:
                        sys.exit(f"{name} {arguments} was refused: {text}")
                    if "[ref=" in text:
                        snapshot = text

                await call("saffron_step", {"step": 1})
                await call("browser_goto", {"url": "/login"})
                await call("saffron_assert", {"check": "visible", "ref": ref(snapshot, "h1")})
                await call("saffron_step", {"step": 2})
                await call("browser_fill", {"ref": ref(snapshot, 'textbox "Email"'), "value": "demo@saffron.test"})
                await call("browser_fill", {"ref": ref(snapshot, 'textbox "Password"'), "value": "{env:DEMO_PASSWORD}"})
                await call("browser_click", {"ref": ref(snapshot, 'button "Sign in"')})
                await call("saffron_wait_response", {"url_pattern": "^/api/session$", "method": "POST", "status": "2xx"})
                await call("saffron_step", {"step": 3})
                await call("saffron_assert", {"check": "url", "url": "/orders"})
                await call("saffron_assert", {"check": "visible", "ref": ref(snapshot, "h1")})
                await call("saffron_step", {"step": 4})
                await call("saffron_assert", {"check": "noConsoleErrors"})
                await call("saffron_done", {"success": True, "narrative": "Signed in; every check held."})


asyncio.run(main())
