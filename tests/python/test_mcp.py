"""MCP, driven by the Python `mcp` SDK's client: `engram mcp DIR` over stdio and `/mcp` over
streamable HTTP on `engram serve --http-port`. Initialize, the tool list (each with a schema and a
description), every tool with valid and invalid arguments, memories found by recall, a principal
without `see_sensitive` that never receives a sensitive claim (a canary), and a session that cannot
reach another workspace."""

import asyncio
import base64
import contextlib
import json
import subprocess

import httpx2
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from conftest import ENGRAM, Server

TOOLS = {
    "add_memory", "search_memory", "get_memory", "update_memory", "delete_memory", "restore_memory", "forget_memory",
    "list_memories", "create_entities", "create_relations", "add_observations", "open_nodes", "search_nodes", "read_graph",
    "neighbors", "entity_context", "delete_entities", "query", "get_status",
}
CANARY = "CANARY-4471-QX"


def engram(*args, stdin=None):
    res = subprocess.run([ENGRAM, *args], input=stdin, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    return res.stdout


@contextlib.asynccontextmanager
async def stdio(folder, *extra):
    params = StdioServerParameters(command=ENGRAM, args=["mcp", str(folder), *extra])
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await asyncio.wait_for(s.initialize(), 30)
            yield s


@contextlib.asynccontextmanager
async def over_http(url, user=None, password=None, token=None):
    headers = {}
    if user:
        headers["Authorization"] = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
    if token:
        headers["Authorization"] = "Bearer " + token
    async with httpx2.AsyncClient(headers=headers, timeout=30) as client:
        async with streamable_http_client(url, http_client=client) as (r, w):
            async with ClientSession(r, w) as s:
                await asyncio.wait_for(s.initialize(), 30)
                yield s


async def tool(s, name, args):
    """Calls a tool: its structured result, and whether it is an error."""
    res = await asyncio.wait_for(s.call_tool(name, args), 30)
    data = res.structured_content
    assert data is not None and json.loads(res.content[0].text) == data
    return data, bool(res.is_error)


async def ok(s, name, args):
    data, err = await tool(s, name, args)
    assert not err, (name, data)
    return data


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 120))


def test_stdio_tools_are_listed_with_schemas(tmp_path):
    async def go():
        async with stdio(tmp_path / "db") as s:
            tools = (await s.list_tools()).tools
            assert {t.name for t in tools} == TOOLS
            for t in tools:
                assert t.input_schema["type"] == "object" and len(t.description) > 40, t.name

    run(go())


def test_memories_added_are_found_updated_and_forgotten(tmp_path):
    async def go():
        async with stdio(tmp_path / "db", "--workspace", "agent") as s:
            facts = ["Ann prefers green tea in the morning", "The payments service is written in Rust", "Bob is allergic to peanuts"]
            ids = []
            for text in facts:
                got = await ok(s, "add_memory", {"text": text, "user_id": "ann"})
                assert got["duplicate"] == [False]
                ids += got["ids"]
            # The same memory again stores nothing.
            assert (await ok(s, "add_memory", {"text": facts[0], "user_id": "ann"}))["duplicate"] == [True]
            for text, mid in [("what tea does Ann like", ids[0]), ("which language is payments written in", ids[1]), ("peanuts allergy", ids[2])]:
                found = await ok(s, "search_memory", {"query": text, "budget": 512})
                assert found["facts"][0]["claim_id"] == mid, (text, found["facts"][:2])
                assert found["context"] and found["facts"][0]["evidence"]
            assert len((await ok(s, "search_memory", {"query": "tea", "limit": 1}))["facts"]) == 1
            got = await ok(s, "get_memory", {"id": ids[0]})
            assert got["text"] == facts[0] and got["state"] == "ACCEPTED" and got["subject"]["name"] == "ann"
            # Update: the old one stays, deprecated and linked.
            new = await ok(s, "update_memory", {"id": ids[0], "text": "Ann now prefers coffee"})
            old = await ok(s, "get_memory", {"id": ids[0]})
            assert old["state"] == "DEPRECATED" and old["superseded_by"] is not None
            assert (await ok(s, "get_memory", {"id": new["id"]}))["text"] == "Ann now prefers coffee"
            listed = await ok(s, "list_memories", {"page": 1, "page_size": 2})
            assert listed["total"] == 3 and len(listed["items"]) == 2
            assert listed["items"][0]["ext_id"] == new["id"]
            # Soft delete and restore.
            await ok(s, "delete_memory", {"id": ids[2]})
            assert (await ok(s, "list_memories", {}))["total"] == 2
            await ok(s, "restore_memory", {"id": ids[2]})
            assert (await ok(s, "list_memories", {}))["total"] == 3
            # Erasure: gone from every read.
            await ok(s, "forget_memory", {"id": ids[2]})
            err, is_err = await tool(s, "get_memory", {"id": ids[2]})
            assert is_err and "no claim" in err["error"]["message"]
            found = await ok(s, "search_memory", {"query": "peanuts allergy"})
            assert "peanuts" not in json.dumps(found)
            # Chat messages: one memory per message, the assistant's under the agent.
            msgs = await ok(s, "add_memory", {"messages": [{"role": "user", "content": "I moved to Lisbon"}, {"role": "assistant", "content": "Noted: Lisbon"}], "user_id": "ann", "agent_id": "helper"})
            assert len(msgs["ids"]) == 2
            assert (await ok(s, "get_memory", {"id": msgs["ids"][1]}))["subject"]["name"] == "helper"
            status = await ok(s, "get_status", {})
            assert status["workspace"] == "agent" and status["write"] is True

    run(go())


def test_a_sub_scope_narrows_search_and_listing(tmp_path):
    async def go():
        async with stdio(tmp_path / "db") as s:
            await ok(s, "add_memory", {"text": "my favourite colour is blue", "user_id": "ann", "run_id": "r1"})
            await ok(s, "add_memory", {"text": "my favourite colour is red", "user_id": "bob", "run_id": "r2"})
            await ok(s, "add_memory", {"text": "my favourite colour is green", "user_id": "bob", "run_id": "r3"})
            both = await ok(s, "search_memory", {"query": "favourite colour"})
            assert len(both["facts"]) == 3
            bob = await ok(s, "search_memory", {"query": "favourite colour", "user_id": "bob"})
            texts = [f["text"] for f in bob["facts"]]
            assert len(texts) == 2 and all("blue" not in t for t in texts) and "blue" not in bob["context"]
            one = await ok(s, "search_memory", {"query": "favourite colour", "user_id": "bob", "run_id": "r3"})
            assert [f["text"] for f in one["facts"]] == ["my favourite colour is green"]
            assert (await ok(s, "list_memories", {"user_id": "ann"}))["total"] == 1
            assert (await ok(s, "list_memories", {"user_id": "bob"}))["total"] == 2
            assert (await ok(s, "list_memories", {"user_id": "carol"}))["total"] == 0

    run(go())


def test_invalid_arguments_are_errors_without_stack_traces(tmp_path):
    async def go():
        async with stdio(tmp_path / "db") as s:
            bad = [
                ("add_memory", {}),
                ("add_memory", {"text": "a", "messages": [{"role": "user", "content": "b"}]}),
                ("add_memory", {"doc": {"claims": [{"subject": "x"}]}}),
                ("get_memory", {"id": "nope"}),
                ("update_memory", {"id": "nope", "text": "x"}),
                ("delete_memory", {"id": "nope"}),
                ("restore_memory", {"id": "nope"}),
                ("forget_memory", {"id": "nope"}),
                ("create_relations", {"relations": [{"from": "Nobody", "to": "Nothing", "relationType": "knows"}]}),
                ("add_observations", {"observations": [{"entityName": "Nobody", "contents": ["x"]}]}),
                ("neighbors", {"name": "Nobody"}),
                ("delete_entities", {"entityNames": ["Nobody"]}),
                ("query", {"query": "MATCH (n RETURN n"}),
                ("search_memory", {"query": "x", "as_of": "yesterday"}),
            ]
            for name, args in bad:
                data, is_err = await tool(s, name, args)
                assert is_err and set(data) == {"error"} and data["error"]["message"], (name, data)
                assert "panicked" not in json.dumps(data) and "backtrace" not in json.dumps(data)
            # Arguments that do not match the schema: the same JSON error, naming the field.
            for name, args, field in [("get_memory", {}, "id"), ("search_memory", {"query": 5}, "string"), ("list_memories", {"page": "one"}, "u64")]:
                data, is_err = await tool(s, name, args)
                assert is_err and field in data["error"]["message"], data
            with pytest.raises(MCPError):
                await s.call_tool("no_such_tool", {})

    run(go())


def test_graph_tools_speak_the_reference_servers_shapes(tmp_path):
    async def go():
        async with stdio(tmp_path / "db") as s:
            made = await ok(s, "create_entities", {"entities": [
                {"name": "AuthService", "entityType": "service", "observations": ["issues JWTs"]},
                {"name": "UserDB", "entityType": "database"},
            ]})
            assert [e["name"] for e in made["entities"]] == ["AuthService", "UserDB"]
            await ok(s, "create_relations", {"relations": [{"from": "AuthService", "to": "UserDB", "relationType": "depends_on"}]})
            await ok(s, "add_observations", {"observations": [{"entityName": "AuthService", "contents": ["runs on port 8443"]}]})
            opened = await ok(s, "open_nodes", {"names": ["AuthService", "Ghost"]})
            auth = opened["entities"][0]
            assert auth["entityType"] == "service" and set(auth["observations"]) == {"issues JWTs", "runs on port 8443"}
            assert opened["relations"] == [{"from": "AuthService", "to": "UserDB", "relationType": "depends_on", "id": opened["relations"][0]["id"]}]
            assert opened["missing"] == ["Ghost"]
            found = await ok(s, "search_nodes", {"query": "auth"})
            assert [e["name"] for e in found["entities"]] == ["AuthService"]
            graph = await ok(s, "read_graph", {"page": 1, "page_size": 1})
            assert len(graph["entities"]) == 1 and graph["total_entities"] == 2
            n = await ok(s, "neighbors", {"name": "AuthService", "direction": "out"})
            assert any(i["predicate"] == "depends_on" for i in n["items"])
            about = await ok(s, "entity_context", {"name": "AuthService", "depth": 1, "budget": 300})
            assert about["paths_run"] == ["graph"] and "UserDB" in about["context"] and about["tokens_used"] <= 300, about
            port = await ok(s, "entity_context", {"name": "AuthService", "query": "which port"})
            assert port["facts"][0]["text"] == "runs on port 8443", port
            q = await ok(s, "query", {"query": "MATCH (a:service)-[:depends_on]->(b) RETURN b.name", "params": {}})
            assert q["rows"] == [["UserDB"]]
            assert (await ok(s, "query", {"query": "CREATE (:Note {t: $t})", "params": {"t": "x"}}))["stats"]["nodes_created"] == 1
            # What the query tool's description tells an agent to call to learn the graph's shape.
            shape = await ok(s, "query", {"query": "CALL db.schema.relTypeProperties() YIELD relType RETURN DISTINCT relType ORDER BY relType"})
            assert shape["rows"] == [[":`depends_on`"], [":`observation`"]]
            labels = await ok(s, "query", {"query": "CALL db.schema.nodeTypeProperties() YIELD nodeLabels, propertyName WHERE propertyName = 't' RETURN nodeLabels"})
            assert labels["rows"] == [[["Note"]]]
            procs = await ok(s, "query", {"query": "SHOW PROCEDURES YIELD name, mode WHERE name STARTS WITH 'engram.recall'"})
            assert procs["rows"] == [["engram.recall", "READ"]]
            await ok(s, "delete_entities", {"entityNames": ["UserDB"]})
            assert (await ok(s, "open_nodes", {"names": ["UserDB"]}))["missing"] == ["UserDB"]

    run(go())


@pytest.fixture(scope="module")
def secured(tmp_path_factory):
    """A database with a sensitive claim carrying the canary, and users: admin (all), reader
    (read on `w`, no see_sensitive), seer (read on `w` with see_sensitive)."""
    folder = tmp_path_factory.mktemp("mcpsec") / "db"
    doc = {
        "source": {"conversation_id": "hr", "message_id": "1"},
        "entities": [{"name": "Ann", "type": "person"}, {"name": "Clinic", "type": "place"}],
        "claims": [
            {"subject": "Ann", "predicate": "visited", "object": "Clinic", "confidence": 1.0, "text": f"Ann visited the clinic {CANARY}", "sensitive": True},
            {"subject": "Ann", "predicate": "works_at", "object": "Clinic", "confidence": 1.0, "text": "Ann works at the clinic"},
        ],
    }

    async def seed():
        async with stdio(folder, "--workspace", "w") as s:
            await ok(s, "add_memory", {"doc": doc})
            await ok(s, "add_memory", {"text": "Ann likes the clinic garden"})
        async with stdio(folder, "--workspace", "other") as s:
            await ok(s, "add_memory", {"text": "the other workspace's secret plan"})

    run(seed())
    for name in ["admin", "reader", "seer"]:
        engram("user", "add", str(folder), name, "--password-stdin", stdin=f"{name}-pw\n")
    engram("user", "grant", str(folder), "admin", "*", "admin", "--see-sensitive")
    engram("user", "grant", str(folder), "reader", "w", "read")
    engram("user", "grant", str(folder), "seer", "w", "read", "--see-sensitive")
    return folder


async def everything_visible(s):
    """What every read tool returns, concatenated."""
    out = []
    out.append(await tool(s, "search_memory", {"query": f"Ann clinic visit {CANARY}", "seeds": ["Ann"], "hops": 2}))
    out.append(await tool(s, "query", {"query": "MATCH (a)-[r]->(b) RETURN a, r, b"}))
    out.append(await tool(s, "query", {"query": "CALL db.schema.relTypeProperties()"}))
    out.append(await tool(s, "read_graph", {}))
    out.append(await tool(s, "open_nodes", {"names": ["Ann", "Clinic"]}))
    out.append(await tool(s, "search_nodes", {"query": "a"}))
    out.append(await tool(s, "neighbors", {"name": "Ann"}))
    out.append(await tool(s, "entity_context", {"name": "Ann", "depth": 3}))
    out.append(await tool(s, "entity_context", {"name": "Clinic", "query": f"visit {CANARY}"}))
    out.append(await tool(s, "list_memories", {}))
    out.append(await tool(s, "get_memory", {"id": "hr/1/0"}))
    out.append(await tool(s, "get_status", {}))
    return json.dumps(out)


def test_a_principal_without_see_sensitive_never_gets_the_sensitive_claim(secured):
    async def go():
        async with stdio(secured, "--workspace", "w", "--user", "reader") as s:
            seen = await everything_visible(s)
            assert CANARY not in seen and "visited" not in seen
            assert "works at the clinic" in seen
            # A read-only principal cannot write, by any tool.
            data, is_err = await tool(s, "add_memory", {"text": "x"})
            assert is_err and data["error"]["class"] == "denied"
            data, is_err = await tool(s, "query", {"query": "CREATE (:X)"})
            assert is_err
        async with stdio(secured, "--workspace", "w", "--user", "seer") as s:
            assert CANARY in await everything_visible(s)

    run(go())


def test_a_session_cannot_reach_another_workspace(secured):
    async def go():
        async with stdio(secured, "--workspace", "w", "--user", "admin") as s:
            # No tool takes a workspace; an extra argument naming one changes nothing.
            for name in ["search_memory", "query", "add_memory"]:
                tools = {t.name: t for t in (await s.list_tools()).tools}
                assert "workspace" not in tools[name].input_schema["properties"]
            found = await ok(s, "search_memory", {"query": "secret plan", "workspace": "other"})
            assert "secret plan" not in json.dumps(found)
            got = await ok(s, "query", {"query": "MATCH ()-[r]->() RETURN r.text", "workspace": "other"})
            assert "secret plan" not in json.dumps(got)
        async with stdio(secured, "--workspace", "other", "--user", "reader") as s:
            data, is_err = await tool(s, "search_memory", {"query": "secret plan"})
            assert is_err and "secret plan" not in json.dumps(data)

    run(go())


def test_stdio_refuses_a_folder_a_server_holds(tmp_path):
    s = Server(tmp_path / "db")
    try:
        res = subprocess.run([ENGRAM, "mcp", str(tmp_path / "db")], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
        assert res.returncode != 0 and "locked by a running server" in res.stderr
    finally:
        s.stop()


def test_mcp_over_http_authenticates_and_scopes(secured):
    s = Server(secured, "--http-port", "0")
    try:
        url = s.http + "/mcp?workspace=w"

        async def go():
            async with over_http(url, "reader", "reader-pw") as m:
                assert {t.name for t in (await m.list_tools()).tools} == TOOLS
                seen = await everything_visible(m)
                assert CANARY not in seen and "works at the clinic" in seen
                status = await ok(m, "get_status", {})
                assert status["user"] == "reader" and status["workspace"] == "w" and status["write"] is False
            async with over_http(url, "seer", "seer-pw") as m:
                assert CANARY in await everything_visible(m)
            async with over_http(s.http + "/mcp?workspace=other", "reader", "reader-pw") as m:
                data, is_err = await tool(m, "search_memory", {"query": "secret plan"})
                assert is_err and "secret plan" not in json.dumps(data)
            token = engram_token(s)
            async with over_http(s.http + "/mcp?workspace=w", token=token) as m:
                assert (await ok(m, "get_status", {}))["user"] == "reader"
            with pytest.raises(BaseException):
                async with over_http(url, "reader", "wrong") as m:
                    pass

        run(go())
    finally:
        s.stop()


def engram_token(s):
    import redis

    r = redis.Redis(host=s.host, port=s.port, username="admin", password="admin-pw", socket_timeout=10, decode_responses=True)
    return r.execute_command("ENGRAM.USER", "TOKEN", "reader")


def test_stdio_in_front_of_a_running_server(secured, tmp_path):
    """`engram mcp DIR --connect redis://…` speaks to the server holding DIR, as the URL's user;
    the server enforces that user's grants."""
    s = Server(secured)
    try:
        url = f"redis://reader:reader-pw@{s.host}:{s.port}"

        async def go():
            async with stdio(secured, "--workspace", "w", "--connect", url) as m:
                assert {t.name for t in (await m.list_tools()).tools} == TOOLS
                seen = await everything_visible(m)
                assert CANARY not in seen and "works at the clinic" in seen
                status = await ok(m, "get_status", {})
                assert status["user"] == "reader" and status["write"] is False
                data, is_err = await tool(m, "add_memory", {"text": "x"})
                assert is_err and data["error"]["class"] == "denied"
            async with stdio(secured, "--workspace", "w", "--connect", f"redis://seer:seer-pw@{s.host}:{s.port}") as m:
                assert CANARY in await everything_visible(m)

        run(go())
        res = subprocess.run([ENGRAM, "mcp", str(secured), "--connect", f"redis://reader:wrong@{s.host}:{s.port}"],
                             capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
        assert res.returncode != 0 and "invalid username-password" in res.stderr, res.stderr
    finally:
        s.stop()
    # A server without users: memories added through the client are found.
    open_server = Server(tmp_path / "open")
    try:
        async def go2():
            async with stdio(tmp_path / "unused", "--connect", f"redis://{open_server.host}:{open_server.port}") as m:
                added = await ok(m, "add_memory", {"text": "the build server is called hermes", "user_id": "ops"})
                found = await ok(m, "search_memory", {"query": "build server name"})
                assert found["facts"][0]["claim_id"] == added["ids"][0]

        run(go2())
    finally:
        open_server.stop()
