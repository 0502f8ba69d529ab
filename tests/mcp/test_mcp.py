"""End-to-end tests of `saffron mcp` with a real MCP client.

The client is the Python `mcp` package from PyPI (pinned in requirements.txt); the server is the
real `saffron` binary over stdio, started in a temporary copy of the repository's example
project (features/ and .saffron/cache/). Run from the repository root:

    pip install -r tests/mcp/requirements.txt
    cargo build -p saffron-cli
    python3 -m pytest tests/mcp -q

SAFFRON_BIN names the binary (default: target/debug/saffron).
"""

import asyncio
import copy
import hashlib
import json
import os
import shutil
import subprocess
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import pytest
from mcp import ClientSession, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client

REPOSITORY = Path(__file__).resolve().parents[2]
SAFFRON_BIN = Path(os.environ.get("SAFFRON_BIN", REPOSITORY / "target" / "debug" / "saffron"))

READ_TOOLS = [
    "vocabulary",
    "find_steps",
    "check_feature",
    "list_scenarios",
    "status",
    "list_proposals",
    "show_proposal",
]

TOOLS = READ_TOOLS + ["run", "author_feature"]

EXPORT_RECORDING = ".saffron/cache/orders/export-the-orders.json"
EXPORT_PROPOSAL = ".saffron/proposals/orders/export-the-orders.json"


def run(coroutine):
    return asyncio.run(coroutine)


@pytest.fixture(scope="session", autouse=True)
def binary():
    if not SAFFRON_BIN.is_file():
        pytest.fail(f"no saffron binary at {SAFFRON_BIN}: run `cargo build -p saffron-cli` or set SAFFRON_BIN")
    return SAFFRON_BIN


@pytest.fixture
def project(tmp_path):
    """A copy of the example project: its feature files and committed recordings."""
    root = tmp_path / "project"
    shutil.copytree(REPOSITORY / "features", root / "features")
    shutil.copytree(REPOSITORY / ".saffron" / "cache", root / ".saffron" / "cache")
    # The @api scenario's pinned contract (its schema checks were recorded against it).
    shutil.copytree(REPOSITORY / "contracts", root / "contracts")
    return root


@asynccontextmanager
async def connect(root, mode="initialize", env=None):
    params = StdioServerParameters(command=str(SAFFRON_BIN), args=["mcp"], cwd=str(root), env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            if mode == "initialize":
                result = await session.initialize()
            else:
                result = await session.discover()
            yield session, result


def files_under(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


async def ok(session, tool, arguments=None):
    result = await session.call_tool(tool, arguments or {})
    assert not result.is_error, f"{tool} failed: {result.content[0].text}"
    assert result.structured_content is not None
    assert result.content and result.content[0].text.strip(), "a text rendering comes with the structured content"
    return result.structured_content, result.content[0].text


async def fails(session, tool, arguments):
    result = await session.call_tool(tool, arguments)
    assert result.is_error, f"{tool}({arguments}) should be an error result"
    text = result.content[0].text
    assert "What to do:" in text, text
    return text


# ---- digests, as docs/recording-format.md defines them ----------------------------------------


def canonical(value):
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def sha256(value):
    return hashlib.sha256(canonical(value).encode()).hexdigest()


def step_value(step):
    return [step["kind"], step["text"], step.get("table"), step.get("docString")]


def contract_digest(recording):
    steps = []
    for step in recording["steps"]:
        actions = copy.deepcopy(step["actions"])
        for action in actions:
            if isinstance(action.get("target"), dict):
                action["target"].pop("tier", None)
        steps.append(step_value(step) + [actions])
    return sha256(steps)


def write_export_proposal(root, *, steps_digest=None):
    """Files a proposal for "Export the orders": the export button was renamed."""
    committed = json.loads((root / EXPORT_RECORDING).read_text())
    proposed = copy.deepcopy(committed)
    step_index = next(i for i, s in enumerate(proposed["steps"]) if s["text"] == "I export the orders")
    before = copy.deepcopy(proposed["steps"][step_index]["actions"][0])
    proposed["steps"][step_index]["actions"][0]["target"]["name"] = "Export all orders"
    after = proposed["steps"][step_index]["actions"][0]
    proposal = {
        "version": 1,
        "scenario": {"feature": "features/orders.saffron", "name": "Export the orders", "cachePath": EXPORT_RECORDING},
        "recording": proposed,
        "diff": [
            {
                "kind": "action",
                "text": "I export the orders",
                "before": step_index,
                "after": step_index,
                "changes": [
                    {"change": "changed", "beforeIndex": 0, "afterIndex": 0, "before": before, "after": after}
                ],
            }
        ],
        "featureEdits": [],
        "narrative": "The export button was renamed to 'Export all orders'.",
        "adaptations": ["locator or label: button \"Export orders\" → \"Export all orders\""],
        "binding": {
            "stepsDigest": steps_digest or sha256([step_value(s) for s in committed["steps"]]),
            "contractDigest": contract_digest(committed),
            "contentDigest": sha256({"recording": proposed, "featureEdits": []}),
        },
    }
    path = root / EXPORT_PROPOSAL
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(proposal, ensure_ascii=False, indent=2) + "\n")
    return proposed


# ---- the tests ------------------------------------------------------------------------------------


def test_initialize_lists_tools_with_input_and_output_schemas(project):
    async def body():
        async with connect(project) as (session, init):
            assert init.protocol_version == "2025-11-25"
            assert init.server_info.name == "saffron"
            assert init.server_info.version
            assert "run replays scenarios" in (init.instructions or "")
            tools = (await session.list_tools()).tools
            assert [tool.name for tool in tools] == TOOLS, "accept/reject only when the project opts in"
            for tool in tools:
                assert tool.description, tool.name
                assert tool.input_schema.get("type") == "object", tool.name
                assert tool.output_schema and tool.output_schema.get("type") == "object", tool.name
                # author_feature writes nothing (it spends tokens, which open_world says).
                read_only = tool.name in READ_TOOLS or tool.name == "author_feature"
                assert tool.annotations and tool.annotations.read_only_hint is read_only, tool.name
            by_name = {tool.name: tool for tool in tools}
            assert "Verdicts come from the run tool" in by_name["list_scenarios"].description
            assert by_name["vocabulary"].input_schema.get("additionalProperties") is False
            assert "query" in by_name["find_steps"].input_schema.get("required", [])

    run(body())


def test_stateless_2026_07_28_discover_and_call(project):
    async def body():
        async with connect(project, mode="discover") as (session, discovered):
            assert "2026-07-28" in discovered.supported_versions
            assert "2025-11-25" in discovered.supported_versions
            tools = (await session.list_tools()).tools
            assert [tool.name for tool in tools] == TOOLS
            vocabulary, _ = await ok(session, "vocabulary", {"limit": 2})
            assert vocabulary["total"] > 2

    run(body())


def test_vocabulary_filters_pages_and_refuses_bad_arguments(project):
    async def body():
        async with connect(project) as (session, _):
            everything, text = await ok(session, "vocabulary", {"limit": 500})
            steps = everything["steps"]
            assert everything["total"] == len(steps) > 30
            statuses = [s["status"] for s in steps]
            assert statuses == sorted(statuses, key=["recorded", "divergent", "unrecorded"].index), "recorded first"
            seen = next(s for s in steps if s["text"] == "I see the orders page")
            assert seen["status"] == "recorded" and seen["count"] == 2
            assert seen["nearDuplicates"] == ["I should see the orders page"]
            assert {"file": "features/shared.steps.saffron", "line": 7, "block": "stepSet",
                    "blockName": "signed in as the demo user"} in seen["uses"]
            assert "✓ recorded  I see the orders page" in text
            # The @api scenario's steps are recorded as requests: marked so; page steps are not.
            api = {s["text"] for s in steps if s.get("api")}
            assert "the API client orders 2 \"Tea\" for \"Lin\"" in api, api
            assert all("API" in text for text in api) and "api" not in seen, api

            divergent, _ = await ok(session, "vocabulary", {"status": "divergent"})
            assert [s["text"] for s in divergent["steps"]] == ["I save the order"]
            searched, _ = await ok(session, "vocabulary", {"text": "GIFT WRAP"})
            assert {s["text"] for s in searched["steps"]} >= {"gift wrap is selected", "gift wrap is not selected"}
            in_file, _ = await ok(session, "vocabulary", {"file": "features/sign_in.feature"})
            assert "I sign in with the password \"not-the-password\"" in [s["text"] for s in in_file["steps"]]
            assert "I export the orders" not in [s["text"] for s in in_file["steps"]]

            first, _ = await ok(session, "vocabulary", {"limit": 5})
            second, _ = await ok(session, "vocabulary", {"limit": 5, "offset": first["nextOffset"]})
            assert first["nextOffset"] == 5 and second["offset"] == 5
            assert not {s["text"] for s in first["steps"]} & {s["text"] for s in second["steps"]}

            assert "unknown variant `bogus`" in await fails(session, "vocabulary", {"status": "bogus"})
            unknown_file = await fails(session, "vocabulary", {"file": "features/nope.feature"})
            assert "features/orders.saffron" in unknown_file, "the error lists the files that exist"
            assert "inside the project" in await fails(session, "vocabulary", {"file": "../../etc"})
            assert "between 1 and 500" in await fails(session, "vocabulary", {"limit": 0})
            assert "unknown field `colour`" in await fails(session, "vocabulary", {"colour": "red"})
            assert "invalid type" in await fails(session, "vocabulary", {"limit": "ten"})
            await ok(session, "status")

    run(body())


def test_find_steps_ranks_existing_wordings(project):
    async def body():
        async with connect(project) as (session, _):
            found, text = await ok(session, "find_steps", {"query": "sign in as the demo user"})
            first = found["matches"][0]
            assert first["text"] == "StepSet signed in as the demo user" and first["stepSet"] == "signed in as the demo user"
            assert first["status"] == "recorded"
            assert "I sign in with the demo account" in [m["text"] for m in found["matches"][:3]]
            assert "1. ✓ recorded  StepSet signed in as the demo user" in text

            exact, _ = await ok(session, "find_steps", {"query": "Then I see the orders page", "limit": 3})
            assert exact["query"] == "I see the orders page"
            assert exact["matches"][0]["kind"] == "exact"
            assert exact["matches"][1]["text"] == "I should see the orders page"
            assert exact["matches"][1]["kind"] == "nearDuplicate"

            pattern, _ = await ok(session, "find_steps", {"query": "When I search orders for \"Grace Hopper\""})
            assert pattern["matches"][0]["text"] == "I search orders for \"Ada Lovelace\""
            assert pattern["matches"][0]["kind"] == "samePattern"

            negative, _ = await ok(session, "find_steps", {"query": "gift wrap is not selected"})
            assert negative["matches"][0]["text"] == "gift wrap is not selected"

            assert "no words" in await fails(session, "find_steps", {"query": "  ?! "})
            assert "missing field `query`" in await fails(session, "find_steps", {})
            assert "between 1 and 50" in await fails(session, "find_steps", {"query": "x", "limit": 51})

    run(body())


DRAFT = """Feature: Order history
  Scenario: See the order history
    StepSet signed in as the demo user
    When I sign in with a demo account
    And I open the order history
    Then I see the orders page

  Scenario: Unknown set
    StepSet signed on as the demo user
    Then I see the orders page
"""


def test_check_feature_reports_problems_and_cost_without_writing(project):
    async def body():
        before = files_under(project)
        async with connect(project) as (session, _):
            checked, text = await ok(session, "check_feature", {"text": DRAFT})
            assert checked["path"] == "features/draft.saffron"
            assert checked["ok"] is False
            codes = {d["code"]: d for d in checked["diagnostics"]}
            unknown = codes["unknown-step-set"]
            assert unknown["line"] == 9 and "signed in as the demo user" in unknown["hint"]
            near = codes["near-duplicate"]
            assert near["line"] == 4 and near["severity"] == "warning"
            assert near["replacement"] == "I sign in with the demo account"
            costs = {s["text"]: s["cost"] for s in checked["steps"]}
            assert costs["I see the orders page"] == "free"
            assert costs["I open the order history"] == "needsRecording"
            assert costs["I sign in with a demo account"] == "needsRecording"
            first = checked["scenarios"][0]
            assert first["name"] == "See the order history" and first["steps"] == 6
            assert first["needsRecording"] == 2 and first["free"] == 3 and first["recording"] == "unrecorded"
            totals = checked["totals"]
            assert totals["errors"] == 1 and totals["warnings"] == 1 and totals["needsRecording"] == 2
            assert "write instead: I sign in with the demo account" in text

            # A set defined again is reported where the first definition lives, naming the draft.
            duplicate, _ = await ok(session, "check_feature", {
                "text": "Feature: X\n  StepSet: a new order form\n    Given I am on the orders page\n"})
            elsewhere = [d for d in duplicate["diagnostics"] if d.get("file")]
            assert elsewhere and elsewhere[0]["code"] == "duplicate-step-set"
            assert "remove the colon" in elsewhere[0]["hint"] and duplicate["ok"] is False

            # An existing file checked as itself: its fresh recordings replay, nothing to record.
            sign_in = (project / "features" / "sign_in.feature").read_text()
            itself, _ = await ok(session, "check_feature", {"text": sign_in, "path": "features/sign_in.feature"})
            assert itself["ok"] is True
            assert [s["recording"] for s in itself["scenarios"]] == ["fresh", "fresh"]
            assert all(s["needsRecording"] == 0 for s in itself["scenarios"])

            # A .feature that uses the dialect is told to become .saffron.
            plain, _ = await ok(session, "check_feature", {"text": DRAFT, "kind": "feature"})
            assert plain["path"] == "features/draft.feature"
            assert "dialect-in-feature-file" in {d["code"] for d in plain["diagnostics"]}

            broken, _ = await ok(session, "check_feature", {
                "text": "Feature: X\n  Scenario: A\n    Given a step\n  Scenari: typo\n"})
            assert broken["ok"] is False and broken["diagnostics"][0]["hint"]

            assert "empty" in await fails(session, "check_feature", {"text": "  \n"})
            assert "inside the project" in await fails(session, "check_feature", {"text": DRAFT, "path": "/etc/x.feature"})
            assert ".saffron" in await fails(session, "check_feature", {"text": DRAFT, "path": "features/x.txt"})
            assert "unknown variant" in await fails(session, "check_feature", {"text": DRAFT, "kind": "gherkin"})

            # The draft left no trace in the index either.
            vocabulary, _ = await ok(session, "vocabulary", {"text": "order history"})
            assert vocabulary["total"] == 0
        assert files_under(project) == before, "check_feature never writes a file"

    run(body())


class FakeOpenAi:
    """A chat-completions server on 127.0.0.1 that answers every request with `answer` and keeps
    the request bodies: the model behind `author_feature`."""

    def __init__(self, answer):
        import http.server
        import threading

        bodies = self.bodies = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                bodies.append(body)
                reply = json.dumps({
                    "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": body["model"],
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": answer}}],
                    "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
                }).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self):
        self.server.shutdown()


def test_author_feature_drafts_in_the_project_wording_without_writing(project):
    fake = FakeOpenAi("```gherkin\nFeature: Invoices\n  Background:\n    StepSet signed in as the demo user\n\n"
                      "  Scenario: Open one\n    When I open the invoice of \"#1001\"\n"
                      "    Then I see an invoice \"Invoice #1001\"\n```")
    (project / "saffron.toml").write_text(
        f'[agent]\nprovider = "openai"\nmodel = "fake-model"\nbase_url = "{fake.base_url}"\napi_key_env = ""\n')

    async def body():
        before = files_under(project)
        async with connect(project) as (session, _):
            drafted, text = await ok(session, "author_feature", {"prose": "open an invoice"})
            assert drafted["path"] == "features/draft.saffron"
            assert 'Then I see the invoice "Invoice #1001"' in drafted["text"], "rewritten to the project's wording"
            costs = {s["text"]: s["cost"] for s in drafted["steps"]}
            assert costs['I see the invoice "Invoice #1001"'] == "free"
            assert drafted["totals"]["free"] == drafted["totals"]["distinctSteps"] == 5
            assert drafted["agent"].startswith("openai fake-model: 100 tokens in, 20 out, 1 call")
            assert "rewritten from: I see an invoice" in text
            assert "empty" in await fails(session, "author_feature", {"prose": " "})
        assert files_under(project) == before, "author_feature never writes a file"
        task = fake.bodies[0]["messages"][-1]["content"]
        assert 'I open the invoice of "#1001"' in task and "open an invoice" in task

    try:
        run(body())
    finally:
        fake.close()


def test_list_scenarios_and_status_say_what_exists(project):
    async def body():
        async with connect(project) as (session, _):
            listed, text = await ok(session, "list_scenarios")
            assert listed["total"] == 18
            names = {s["name"]: s for s in listed["scenarios"]}
            assert names["Refund an order"]["recording"] == "unrecorded"
            assert names["Create an order for <customer>"]["rows"] == 2
            assert names["Search orders by customer"]["recordingPath"] == \
                ".saffron/cache/orders/search-orders-by-customer.json"
            unrecorded, _ = await ok(session, "list_scenarios", {"recording": "unrecorded"})
            assert [s["name"] for s in unrecorded["scenarios"]] == ["Refund an order"]
            sign_in, _ = await ok(session, "list_scenarios", {"file": "features/sign_in.feature"})
            assert sign_in["total"] == 2
            assert "fresh       features/sign_in.feature:5  Sign in with the demo account" in text
            assert "unknown variant" in await fails(session, "list_scenarios", {"recording": "green"})

            status, status_text = await ok(session, "status")
            assert status["scenarios"] == {"total": 18, "fresh": 17, "stale": 0, "unrecorded": 1, "unreadable": 0}
            assert status["featureFiles"] == 5 and status["acceptEnabled"] is False
            assert status["proposals"] == {"pending": 0, "stale": 0, "unreadable": 0}
            assert "no run yet" in status["verdicts"] and "Verdicts:" in status_text
            assert [s["name"] for s in status["attention"]] == ["Refund an order"]
            assert "unknown field" in await fails(session, "status", {"verbose": True})

    run(body())


def test_the_index_follows_edits_between_calls(project):
    async def body():
        async with connect(project) as (session, _):
            await ok(session, "vocabulary")
            sign_in = project / "features" / "sign_in.feature"
            sign_in.write_text(sign_in.read_text() + "\n  Scenario: Sign out\n    When I wave goodbye\n")
            found, _ = await ok(session, "vocabulary", {"text": "wave goodbye"})
            assert [s["status"] for s in found["steps"]] == ["unrecorded"]
            (project / EXPORT_RECORDING).write_text("{ not json")
            listed, _ = await ok(session, "list_scenarios", {"recording": "unreadable"})
            assert [s["name"] for s in listed["scenarios"]] == ["Export the orders"]
            assert "invalid JSON" in listed["scenarios"][0]["reason"]
            status, _ = await ok(session, "status")
            assert status["scenarios"]["total"] == 19
            assert any(p["path"] == EXPORT_RECORDING for p in status["problems"])

    run(body())


def test_proposals_are_listed_and_shown_but_not_accepted_by_default(project):
    proposed = write_export_proposal(project)

    async def body():
        async with connect(project) as (session, _):
            listed, text = await ok(session, "list_proposals")
            [summary] = listed["proposals"]
            assert summary["path"] == EXPORT_PROPOSAL
            assert summary["stale"] is False and summary["staleReasons"] == []
            assert summary["changedSteps"] == 1 and summary["actionChanges"] == 1 and summary["featureEdits"] == 0
            assert listed["acceptEnabled"] is False
            assert EXPORT_PROPOSAL in text

            shown, shown_text = await ok(session, "show_proposal", {"proposal": EXPORT_PROPOSAL})
            assert shown["replacesRecording"] is True
            change = shown["diff"][0]["changes"][0]
            assert change["change"] == "changed"
            assert change["after"]["target"]["name"] == "Export all orders"
            assert "~ [0→0]" in shown_text and "Export all orders" in shown_text

            scenarios, _ = await ok(session, "list_scenarios", {"file": "features/orders.saffron"})
            export = next(s for s in scenarios["scenarios"] if s["name"] == "Export the orders")
            assert export["pendingProposal"] == EXPORT_PROPOSAL

            assert "list_proposals" in await fails(session, "show_proposal", {"proposal": ".saffron/proposals/x.json"})
            assert "not a proposal path" in await fails(session, "show_proposal", {"proposal": "features/orders.saffron"})
            assert "not enabled" in await fails(session, "accept", {"proposal": EXPORT_PROPOSAL})
            assert "not enabled" in await fails(session, "reject", {"proposal": EXPORT_PROPOSAL})
        assert (project / EXPORT_PROPOSAL).exists()
        assert json.loads((project / EXPORT_RECORDING).read_text()) != proposed

    run(body())


def test_accept_and_reject_when_the_project_opts_in(project):
    (project / "saffron.toml").write_text("[mcp]\nallow_accept = true\n")
    proposed = write_export_proposal(project)

    async def body():
        async with connect(project) as (session, _):
            tools = [tool.name for tool in (await session.list_tools()).tools]
            assert tools == TOOLS + ["accept", "reject"]

            filed = (project / EXPORT_PROPOSAL).read_text()
            accepted, text = await ok(session, "accept", {"proposal": EXPORT_PROPOSAL})
            assert accepted["recording"] == EXPORT_RECORDING and "Commit the recording" in text
            assert json.loads((project / EXPORT_RECORDING).read_text()) == proposed
            assert not (project / EXPORT_PROPOSAL).exists()
            status, _ = await ok(session, "status")
            assert status["scenarios"]["fresh"] == 17 and status["proposals"]["pending"] == 0

            # The same proposal filed again was made against the old recording: refused by reason.
            (project / EXPORT_PROPOSAL).write_text(filed)
            before = (project / EXPORT_RECORDING).read_bytes()
            refused = await fails(session, "accept", {"proposal": EXPORT_PROPOSAL})
            assert "stale" in refused and "committed recording changed" in refused
            assert (project / EXPORT_RECORDING).read_bytes() == before

            rejected, _ = await ok(session, "reject", {"proposal": EXPORT_PROPOSAL})
            assert rejected["rejected"] == EXPORT_PROPOSAL and rejected["scenario"] == "Export the orders"
            assert not (project / EXPORT_PROPOSAL).exists()
            assert "no pending proposal" in await fails(session, "reject", {"proposal": EXPORT_PROPOSAL})
            assert "not a proposal path" in await fails(session, "reject", {"proposal": "../escape.json"})

            # An unreadable proposal can still be rejected.
            (project / EXPORT_PROPOSAL).write_text("{}")
            listed, _ = await ok(session, "list_proposals")
            assert [u["path"] for u in listed["unreadable"]] == [EXPORT_PROPOSAL]
            assert "cannot be read" in await fails(session, "accept", {"proposal": EXPORT_PROPOSAL})
            await ok(session, "reject", {"proposal": EXPORT_PROPOSAL})

    run(body())


def test_a_proposal_for_edited_steps_is_stale(project):
    (project / "saffron.toml").write_text("[mcp]\nallow_accept = true\n")
    write_export_proposal(project, steps_digest="0" * 64)

    async def body():
        async with connect(project) as (session, _):
            [summary] = (await ok(session, "list_proposals"))[0]["proposals"]
            assert summary["stale"] is True
            assert any("steps changed" in reason for reason in summary["staleReasons"])
            assert "stale" in await fails(session, "accept", {"proposal": EXPORT_PROPOSAL})

    run(body())


def test_resources_are_the_project_files(project):
    async def body():
        async with connect(project) as (session, _):
            resources = (await session.list_resources()).resources
            uris = {str(r.uri) for r in resources}
            assert "saffron://project/features/orders.saffron" in uris
            assert f"saffron://project/{EXPORT_RECORDING}" in uris
            templates = (await session.list_resource_templates()).resource_templates
            assert templates[0].uri_template == "saffron://project/{+path}"

            feature = await session.read_resource("saffron://project/features/orders.saffron")
            assert feature.contents[0].text == (project / "features" / "orders.saffron").read_text()
            assert feature.contents[0].mime_type == "text/x-gherkin"
            recording = await session.read_resource(f"saffron://project/{EXPORT_RECORDING}")
            assert json.loads(recording.contents[0].text)["scenario"] == "Export the orders"

            for bad in ["saffron://project/../secret", "file:///etc/passwd", "saffron://project/Cargo.toml"]:
                with pytest.raises(MCPError) as error:
                    await session.read_resource(bad)
                assert "resources/list" in str(error.value) or "inside the project" in str(error.value) \
                    or "saffron://project/" in str(error.value)
            await ok(session, "status")

    run(body())


def test_draft_feature_prompt_carries_the_vocabulary(project):
    async def body():
        async with connect(project) as (session, _):
            prompts = (await session.list_prompts()).prompts
            [draft] = prompts
            assert draft.name == "draft_feature"
            assert [(a.name, a.required) for a in draft.arguments] == [("description", True), ("path", False)]

            got = await session.get_prompt("draft_feature", {"description": "A customer cancels an order."})
            text = got.messages[0].content.text
            assert "A customer cancels an order." in text
            assert "- signed in as the demo user" in text, "StepSets are offered"
            recorded = text.index("✓ recorded I sign in with the demo account")
            unrecorded = text.index("○ unrecorded I sign out")
            assert recorded < unrecorded, "recorded steps come first"
            assert "{env:NAME}" in text and "StepSet: name" in text

            with pytest.raises(MCPError):
                await session.get_prompt("draft_feature", {})
            with pytest.raises(MCPError):
                await session.get_prompt("nope", {"description": "x"})
            await ok(session, "status")

    run(body())


def test_junk_never_kills_the_server(project):
    async def body():
        async with connect(project) as (session, _):
            junk = [
                ("vocabulary", {"limit": -1}),
                ("vocabulary", {"limit": 10 ** 12}),
                ("vocabulary", {"text": ["a"]}),
                ("find_steps", {"query": None}),
                ("find_steps", {"query": "x" * 5000}),
                ("check_feature", {"text": 42}),
                ("check_feature", {"text": "\u0000\ufffd" * 100}),
                ("show_proposal", {"proposal": ""}),
                ("list_scenarios", {"offset": 10 ** 6}),
            ]
            for tool, arguments in junk:
                result = await session.call_tool(tool, arguments)
                assert result.content, (tool, arguments)
            more_junk = [
                ("run", {"targets": "features"}),
                ("run", {"workers": "many"}),
                ("run", {"tags": "@a and"}),
                ("author_feature", {"prose": 42}),
                ("author_feature", {"prose": "open an invoice", "path": "../x.saffron"}),
                ("run", {"targets": ["no/such/file.feature"], "baseUrl": "http://127.0.0.1:9"}),
            ]
            for tool, arguments in more_junk:
                result = await session.call_tool(tool, arguments)
                assert result.is_error and "What to do:" in result.content[0].text, (tool, arguments)
            with pytest.raises(MCPError) as error:
                await session.call_tool("replay", {})
            assert "unknown tool" in str(error.value)
            status, _ = await ok(session, "status")
            assert status["scenarios"]["total"] == 18

    run(body())


def test_empty_and_outside_targets_are_refused_by_every_tool(project):
    async def body():
        async with connect(project) as (session, _):
            # Before a browser starts: a target that names nothing is not "the whole project".
            for targets in ([""], ["  "], ["features/sign_in.feature", ""]):
                text = await fails(session, "run", {"targets": targets, "baseUrl": "http://127.0.0.1:9"})
                assert "an empty target names no scenario" in text and "leave targets out" in text, text
            for target in ["../features/sign_in.feature", "/etc/passwd", "features/../../x.feature:3"]:
                text = await fails(session, "run", {"targets": [target], "baseUrl": "http://127.0.0.1:9"})
                assert "is not a path inside the project" in text, text
            # The other tools answer the same way.
            assert "is not a path inside the project" in await fails(session, "list_scenarios", {"file": ""})
            assert "is not a path inside the project" in await fails(session, "vocabulary", {"file": "../x"})
            assert not (project / ".saffron" / "reports").exists(), "nothing was run"

    run(body())


def test_draft_feature_refuses_a_path_outside_the_project(project):
    async def body():
        async with connect(project) as (session, _):
            for path in ["../../etc/passwd", "/etc/passwd", str(project.parent / "elsewhere.saffron"), "a/../../b"]:
                with pytest.raises(MCPError) as error:
                    await session.get_prompt("draft_feature", {"description": "Refunds.", "path": path})
                assert "not a path inside the project" in str(error.value), path
            got = await session.get_prompt("draft_feature", {"description": "Refunds.", "path": "./features//refunds.saffron"})
            assert "It will be saved as `features/refunds.saffron`." in got.messages[0].content.text
            await ok(session, "status")

    run(body())


def test_status_names_unknown_saffron_toml_keys_and_invalid_toml(project):
    (project / "saffron.toml").write_text('base_ur = "http://x"\n[mcp]\nallow_acept = true\n')

    async def body():
        async with connect(project) as (session, _):
            status, text = await ok(session, "status")
            problems = [p["problem"] for p in status["problems"] if p["path"] == "saffron.toml"]
            assert problems == [
                "1:1: unknown key `base_ur` in saffron.toml: nothing reads it; did you mean `base_url`?",
                "3:1: unknown key `mcp.allow_acept` in saffron.toml: nothing reads it; did you mean `allow_accept`?",
            ], status["problems"]
            assert status["acceptEnabled"] is False
            assert "did you mean `base_url`?" in text
            # Fixed while the server runs: the warning goes.
            (project / "saffron.toml").write_text('base_url = "http://x"\n[browser\n')
            status, _ = await ok(session, "status")
            problems = [p["problem"] for p in status["problems"] if p["path"] == "saffron.toml"]
            assert len(problems) == 1 and "2:9" in problems[0] and "not valid" in problems[0], problems

    run(body())


@contextmanager
def demo_app():
    """The demo shop served by the real binary (`saffron demo --serve`), fresh data; its URL."""
    server = subprocess.Popen(
        [str(SAFFRON_BIN), "demo", "--serve"],
        cwd=REPOSITORY,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        url = server.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), url
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_run_replays_scenarios_and_masks_the_password(project):
    async def green(url):
        async with connect(project, env=dict(os.environ, DEMO_PASSWORD="saffron-demo")) as (session, _):
            result, text = await ok(session, "run", {"targets": ["features/sign_in.feature"], "baseUrl": url})
            assert (result["green"], result["red"], result["blocked"]) == (2, 0, 0), text
            assert [s["verdict"] for s in result["scenarios"]] == ["green", "green"]
            assert "2 scenario(s)" in text and "green" in text
            assert (project / ".saffron" / "reports" / "latest.json").is_file()
            status, _ = await ok(session, "status")
            assert "2 green" in status["verdicts"]

    async def red(url):
        # A wrong password: the scenario that signs in is red, and the value never shows.
        async with connect(project, env=dict(os.environ, DEMO_PASSWORD="hunter2-wrong")) as (session, _):
            result, text = await ok(session, "run", {"targets": ["features/sign_in.feature:5"], "baseUrl": url})
            assert result["red"] == 1, text
            scenario = result["scenarios"][0]
            assert scenario["verdict"] == "red" and scenario["step"] >= 1
            assert "hunter2-wrong" not in json.dumps(result) + text, "the secret reached the client"

            unrecorded, _ = await ok(session, "run", {"tags": "@wip", "baseUrl": url})
            # Never recorded: blocked (no verdict about the app), and this tool never records.
            assert unrecorded["blocked"] == 1 and unrecorded["red"] == 0, unrecorded
            message = unrecorded["scenarios"][0]["message"]
            assert "needs recording" in message and "saffron run" in message, message

    # Each run changes the app's data: a fresh app for each.
    with demo_app() as url:
        run(green(url))
    with demo_app() as url:
        run(red(url))


def test_run_sends_api_scenarios_to_the_urls_it_is_given(project):
    async def body(url):
        async with connect(project, env=dict(os.environ, DEMO_PASSWORD="saffron-demo")) as (session, _):
            # The application's base URL answers nothing; apiUrls sends the @api scenario's
            # requests to the demo, which is all it needs.
            args = {"targets": ["features/orders_api.feature"], "baseUrl": "http://127.0.0.1:9", "apiUrls": {"app": url}}
            result, text = await ok(session, "run", args)
            assert (result["green"], result["red"], result["blocked"]) == (1, 0, 0), text
            text = await fails(session, "run", dict(args, apiUrls={"nope": url}))
            assert "nope" in text and "apiUrls names services" in text, text

    with demo_app() as url:
        run(body(url))


def test_run_emulates_the_device_it_is_given_and_refuses_an_unknown_one(project):
    async def body(url):
        async with connect(project, env=dict(os.environ, DEMO_PASSWORD="saffron-demo")) as (session, _):
            args = {"targets": ["features/sign_in.feature"], "baseUrl": url, "device": "Pixel 7"}
            result, text = await ok(session, "run", args)
            assert (result["green"], result["red"]) == (2, 0), text
            text = await fails(session, "run", dict(args, device="Nokia 3310"))
            assert 'there is no device "Nokia 3310"' in text and "Pixel 7" in text, text
            assert "pass device as one of the names" in text, text

    with demo_app() as url:
        run(body(url))


# ---- secrets in every spelling --------------------------------------------------------------------

# Every character some output escapes, around a core no escaping changes.
TRICKY = "pa\"ss\\Zq9hunter'<&>\t\u20ac /x"
TRICKY_CORE = "Zq9hunter"


def echo_project(root):
    """A project whose one scenario types {env:TRICKY} into the echo page, then fails an
    assertion that quotes everything the page shows."""
    (root / "features").mkdir(parents=True)
    (root / "features" / "echo.feature").write_text(
        "Feature: Echo\n  Scenario: Show the secret\n    Given I open the echo page\n"
        "    When I type the secret and show it\n    Then nothing is echoed\n"
    )
    (root / "saffron.toml").write_text("[timeouts]\nassertion_ms = 300\n")
    steps = [
        {"kind": "context", "text": "I open the echo page", "actions": [{"type": "goto", "url": "/lab/echo"}]},
        {
            "kind": "action",
            "text": "I type the secret and show it",
            "actions": [
                {"type": "fill", "target": {"label": "Secret"}, "value": "{env:TRICKY}"},
                {"type": "click", "target": {"role": "button", "name": "Show"}},
            ],
        },
        {
            "kind": "outcome",
            "text": "nothing is echoed",
            "actions": [{"type": "expectText", "target": {"testId": "echo"}, "text": "nothing"}],
        },
    ]
    recording = {
        "version": 1,
        "feature": "features/echo.feature",
        "scenario": "Show the secret",
        "steps": steps,
        "stepsDigest": sha256([step_value(s) for s in steps]),
    }
    path = root / ".saffron" / "cache" / "echo" / "show-the-secret.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(recording, indent=2) + "\n")


def test_run_masks_a_secret_in_every_spelling_the_page_gives_it(tmp_path):
    root = tmp_path / "echo"
    echo_project(root)

    async def body(url):
        async with connect(root, env=dict(os.environ, TRICKY=TRICKY)) as (session, _):
            result, text = await ok(session, "run", {"baseUrl": url})
            everything = json.dumps(result, ensure_ascii=False) + text
            assert result["red"] == 1, text
            assert "expected text" in result["scenarios"][0]["message"], text
            assert TRICKY_CORE not in everything, f"the secret reached the client: {everything}"
            # Each of the page's eight spellings was there, masked.
            assert result["scenarios"][0]["message"].count("{env:TRICKY}") >= 8, text
            for report in result["reports"]:
                assert TRICKY_CORE not in (root / report).read_text(), report

    with demo_app() as url:
        run(body(url))


def test_run_refuses_base_urls_that_are_not_web_pages(project):
    async def body():
        async with connect(project) as (session, _):
            for base_url in ["file:///etc/passwd", "javascript:alert(1)", "not a url", ""]:
                text = await fails(session, "run", {"targets": ["features/sign_in.feature"], "baseUrl": base_url})
                assert "invalid base URL" in text and "http://" in text, text

    run(body())
