"""The README's Python quick start runs as written (in a fresh folder)."""

import os
import pathlib
import re

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def test_the_quick_start_runs(tmp_path, capsys):
    text = README.read_text()
    section = text[text.index("## Python\n") :]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        scope = {}
        exec(compile(code, "README.md", "exec"), scope)
    finally:
        os.chdir(cwd)
    assert "Kinesis" in capsys.readouterr().out
    assert scope["confidence"] == 0.9 and scope["name"] == "Kinesis" and scope["node"].properties["name"] == "AuthService"
    assert scope["day"] == "2024-05-07T07:08Z"  # a temporal value comes as its ISO 8601 text
    assert [r.stats["relationships_created"] for r in scope["tx"].results] == [0, 1]


def test_the_langgraph_example_runs():
    text = README.read_text()
    section = text[text.index("**LangGraph.**") :]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    lines = code.strip().splitlines()
    scope = {"engram": __import__("engram")}
    exec(compile("\n".join(lines[:-1]), "README.md", "exec"), scope)
    assert eval(lines[-1].split("#")[0], scope) == "m1"
