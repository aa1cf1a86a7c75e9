"""Prompt templates and ``/skill:`` commands: discovery, listing and expansion, against pi itself.

pi's own agent (``tests/pi/agent_run.mjs``) is given the same workspace and the same typed texts;
the user message it sends to the (fake) model is the expanded text, and its RPC command list is
compared with ``pi/getCommands``' list.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_lsp.prompt.commands import load_slash_commands
from pi_lsp.prompt.templates import (
    expand_prompt_template,
    load_template_file,
    parse_command_args,
    substitute_args,
)
from tests.llm.fake_anthropic import FakeAnthropic, Reply, Text, assistant_stream
from tests.llm.pi_agent import run_pi_agent
from tests.oracle import require_oracle

LONG_LINE = "Fix the failing tests in the module given as the first argument — carefully, ünïcode 😀 too"

TYPED = [
    "/fix one 'two three' four",
    "/fix",
    '/args a "b c" d e',
    "/review src/app.py",
    "/nested-one x",
    "/dup",
    "/skill:demo please do it",
    "/skill:demo",
    "/skill:missing x",
    "/unknown x",
    "plain text /fix",
    "/ignored-one",
    "/hidden",
]


def _workspace(root: Path) -> tuple[Path, Path]:
    cwd, agent = root / "work", root / "agent"
    (cwd / ".pi" / "prompts").mkdir(parents=True)
    (agent / "prompts").mkdir(parents=True)
    project = cwd / ".pi" / "prompts"
    (project / "fix.md").write_text(f"\n\n{LONG_LINE}\nArgs: $1 | $2 | $3 | $9 | all: $@\n")
    (project / "args.md").write_text(
        "---\ndescription: slices\nargument-hint: <a> <b>\n---\nfrom 2: ${@:2}; two from 1: ${@:1:2}; "
        "zero: ${@:0}; $ARGUMENTS; $1$2 literal $$1\n"
    )
    (project / "dup.md").write_text("project dup wins\n")
    (project / "ignored-one.md").write_text("should be ignored\n")
    (project / ".gitignore").write_text("ignored-one.md\n")
    (project / ".hidden.md").write_text("dot files are skipped\n")
    (project / "notes.txt").write_text("not a template\n")
    (project / "broken.md").write_text("---\ndescription: [unclosed\n---\nbody\n")
    (agent / "prompts" / "review.md").write_text(
        "---\ndescription: Review a file\n---\nPlease review $1 thoroughly.\n"
    )
    (agent / "prompts" / "dup.md").write_text("user dup loses\n")
    extra = root / "extra" / "deep"
    extra.mkdir(parents=True)
    (extra / "nested-one.md").write_text("nested $1\n")
    (root / "extra" / "hidden.md").write_text("excluded by a settings pattern\n")
    skill = cwd / ".pi" / "skills" / "demo"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: demo\ndescription: A demo skill\n---\n\n# Demo\nRun ./scripts/go.sh\n\n"
    )
    return cwd, agent


USER_SETTINGS = {"prompts": ["../extra", "!hidden.md"]}


def test_argument_parsing_and_substitution() -> None:
    assert parse_command_args("a  'b c'\t\"d 'e'\" f\"g h\"") == ["a", "b c", "d 'e'", "fg h"]
    assert parse_command_args("'unterminated arg") == ["unterminated arg"]
    assert substitute_args("$1-$2-$3", ["x", "$2"]) == "x-$2-"  # values are not re-expanded
    assert substitute_args("${@:2:1}|${@:3}|$@|$ARGUMENTS", ["a", "b", "c"]) == "b|c|a b c|a b c"
    assert substitute_args("$10 and $0", [str(i) for i in range(1, 11)]) == "10 and "


def test_template_file_description_rules(tmp_path: Path) -> None:
    path = tmp_path / "t.md"
    path.write_text("x" * 60 + "\n")
    template = load_template_file(str(path))
    assert template is not None and template.description == "x" * 60
    path.write_text("😀" * 31 + "\n")  # 62 UTF-16 units: cut at 60, then "..."
    template = load_template_file(str(path))
    assert template is not None and template.description == "😀" * 30 + "..."
    assert expand_prompt_template("/t", [template]) == "😀" * 31 + "\n"  # no frontmatter: body as is
    path.write_text("---\nbad: [\n---\n")
    assert load_template_file(str(path)) is None


@pytest.mark.oracle
async def test_commands_and_expansion_equal_pis(tmp_path: Path) -> None:
    require_oracle()
    cwd, agent = _workspace(tmp_path)
    replies = [Reply(events=assistant_stream(Text("ok")))]
    async with FakeAnthropic(replies) as fake:
        run = await run_pi_agent(
            fake, tmp_path, model_id="claude-haiku-4-5", thinking_level="off",
            prompts=[{"text": text} for text in TYPED], settings=USER_SETTINGS,
        )  # fmt: skip
    (agent / "settings.json").write_text('{"prompts": ["../extra", "!hidden.md"]}')
    ours = load_slash_commands(str(cwd), str(agent), home=str(tmp_path))
    assert ours.to_wire() == run.commands
    names = [command["name"] for command in run.commands]
    assert "dup" in names and "ignored-one" not in names and "hidden" not in names
    pi_texts = [context[-1]["content"][0]["text"] for context in run.contexts]
    assert len(pi_texts) == len(TYPED)
    assert [ours.expand(text) for text in TYPED] == pi_texts
