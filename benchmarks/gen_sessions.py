"""Deterministic generator of realistic pi session files for the benchmarks.

A generated session looks like a long, tool-heavy pi coding session: user prompts, assistant
messages with thinking + text + tool calls (read/edit/bash/write with realistic arguments), tool
results with their outputs, and now and then a model or thinking-level change, a label, a rename, a
custom entry, a branch (with or without a branch summary) and a compaction. Lines are written the
way pi writes them: pi's key order, compact ``JSON.stringify`` output and JS number formats.

Line sizes run from under 1 KB to 100 KB with a realistic skew: most lines are a few KB, a few
percent are big file reads or writes. The same seed always gives the same bytes.

    python benchmarks/gen_sessions.py                    # 10k + 100k entries, 1,000 list files
    python benchmarks/gen_sessions.py --entries 5000 --list-files 100 --out /tmp/bench

Files are cached: a file is regenerated only when its parameters (or this generator's version)
change. The 100k-entry file is about 240 MB, well under Node's ~512 MB string limit.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pi_lsp.session.jsonl import dumps_compact  # noqa: E402  (JSON.stringify-exact output)

GENERATOR_VERSION = 2
DEFAULT_OUT = ROOT / ".bench-data"
START_MS = 1_735_732_800_000  # 2025-01-01T12:00:00.000Z
CWD = "/home/dev/projects/acme-webapp"

# --------------------------------------------------------------------------- text material


def _words(text: str) -> list[str]:
    return text.split()


_WORDS = _words(
    "the a an and or but if then else when while for to of in on at by with from into over under "
    "function class method module package import export return value values type types error errors "
    "test tests failing passes build config configuration server client request response handler "
    "session sessions entry entries file files path paths line lines token tokens context cache "
    "index parse parser render component state props hook effect query mutation schema database "
    "migration table column row record records field fields key keys string number boolean array "
    "object map set list queue stream buffer chunk offset length size limit timeout retry backoff "
    "async await promise callback event listener emitter socket connection pool worker thread "
    "process signal exit code output input stdin stdout stderr log logs warning debug trace span "
    "metric latency throughput memory heap stack frame call calls caller callee refactor rename "
    "extract inline move split merge rebase commit branch diff patch hunk conflict resolve fix bug "
    "regression feature flag option options default defaults override environment variable secret "
    "should could would might must need needs want let me check look see now first next finally "
    "also still just only again instead because since so that this these those there here it its "
    "we you they I our your their is are was were be been being has have had do does did done make "
    "makes made use uses used update updates updated add adds added remove removes removed keep "
    "probably actually likely clearly simply correctly properly exactly carefully quickly"
)

_IDENTS = _words(
    "userId sessionId requestId handleRequest parseConfig loadSettings renderTree fetchUser "
    "createStore applyPatch computeDiff readFileSync writeFile appendEntry buildContext getTree "
    "validateInput normalizePath resolveModule toJSON fromJSON isValid hasChanges nextToken "
    "retryCount maxRetries timeoutMs bufferSize chunkSize offset cursor pageSize totalCount "
    "logger metrics tracer cache store router app server client db pool queue emitter"
)

_DIRS = (
    "src",
    "src/server",
    "src/client",
    "src/lib",
    "src/components",
    "src/hooks",
    "src/db",
    "tests",
    "tests/unit",
    "tests/e2e",
    "scripts",
    "packages/core/src",
    "packages/ui/src",
)
_EXTS = (".ts", ".ts", ".tsx", ".py", ".js", ".json", ".md", ".css", ".sql", ".yaml")
_UNICODE = ("→", "é", "ü", "—", "…", "✓", "✗", "λ", "中文", "🚀", "°", "µs")

_MODELS = (
    ("anthropic", "anthropic-messages", "claude-sonnet-4-5", 3.0, 15.0, 0.3, 3.75),
    ("anthropic", "anthropic-messages", "claude-opus-4-1", 15.0, 75.0, 1.5, 18.75),
    ("openai", "openai-responses", "gpt-5", 1.25, 10.0, 0.125, 0.0),
    ("google", "google-generative-ai", "gemini-2.5-pro", 1.25, 10.0, 0.31, 0.0),
)
_THINKING = ("off", "minimal", "low", "medium", "high")
_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_B62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class TextPool:
    """Pre-built prose paragraphs and source files, sliced to the sizes wanted (fast to sample).

    Built once per process from a fixed seed; each session samples it with its own ``rng``.
    """

    _shared: TextPool | None = None

    @classmethod
    def shared(cls, rng: random.Random) -> TextPool:
        if cls._shared is None:
            cls._shared = cls(random.Random(12345))
        cls._shared.rng = rng
        return cls._shared

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.paragraphs = [self._paragraph() for _ in range(1500)]
        self.sources = [self._source(rng.randint(4_000, 140_000)) for _ in range(120)]
        self.paths = [
            f"{rng.choice(_DIRS)}/{rng.choice(_IDENTS)}{rng.choice(('', 'Utils', 'Service', '.test'))}"
            f"{rng.choice(_EXTS)}"
            for _ in range(400)
        ]

    def _sentence(self) -> str:
        rng = self.rng
        words = rng.choices(_WORDS, k=rng.randint(6, 22))
        if rng.random() < 0.3:
            words.insert(rng.randrange(len(words)), f"`{rng.choice(_IDENTS)}`")
        if rng.random() < 0.05:
            words.append(rng.choice(_UNICODE))
        text = " ".join(words)
        return text[0].upper() + text[1:] + rng.choice((".", ".", ".", "?", ":"))

    def _paragraph(self) -> str:
        return " ".join(self._sentence() for _ in range(self.rng.randint(2, 7)))

    def _code_line(self, indent: int) -> str:
        rng = self.rng
        a, b, c = rng.choice(_IDENTS), rng.choice(_IDENTS), rng.choice(_IDENTS)
        form = rng.randrange(9)
        pad = "  " * indent
        if form == 0:
            d, timeout = rng.choice(_IDENTS), rng.randint(1, 999)
            return f"{pad}const {a} = await {b}.{c}({d}, {{ timeout: {timeout} }});"
        if form == 1:
            return f'{pad}if (!{a}) throw new Error("{b} is missing: " + {c});'
        if form == 2:
            return f"{pad}// {self._sentence()}"
        if form == 3:
            return f"{pad}export function {a}({b}: string, {c}?: number): Promise<void> {{"
        if form == 4:
            return f'{pad}return {{ ...{a}, {b}: {c}["{rng.choice(_WORDS)}"] ?? null }};'
        if form == 5:
            return f"{pad}for (const {a} of {b}) {{\t{c}.push({a}.{rng.choice(_IDENTS)});"
        if form == 6:
            return f"{pad}}}"
        if form == 7:
            return f"{pad}{a}.{b} = `${{{c}}}/{rng.choice(_WORDS)}\\n`;"
        return ""

    def _source(self, size: int) -> str:
        lines: list[str] = []
        total = 0
        indent = 0
        while total < size:
            line = self._code_line(indent)
            indent = max(0, min(4, indent + self.rng.choice((-1, 0, 0, 1))))
            lines.append(line)
            total += len(line) + 1
        return "\n".join(lines)

    def prose(self, size: int) -> str:
        rng = self.rng
        parts: list[str] = []
        total = 0
        while total < size:
            paragraph = rng.choice(self.paragraphs)
            parts.append(paragraph)
            total += len(paragraph) + 2
        return "\n\n".join(parts)[:size]

    def code(self, size: int) -> str:
        source = self.rng.choice([s for s in self.sources if len(s) >= size] or [max(self.sources, key=len)])
        start = source.find("\n", self.rng.randrange(max(1, len(source) - size))) + 1
        return source[start : start + size]

    def path(self) -> str:
        return self.rng.choice(self.paths)


def lognormal_size(rng: random.Random, median: float, sigma: float, low: int, high: int) -> int:
    return max(low, min(high, int(median * math.exp(rng.gauss(0.0, sigma)))))


# --------------------------------------------------------------------------- the session


@dataclass
class SessionGen:
    """Builds one session's entries in order; ``entries()`` yields exactly ``count`` entries."""

    seed: int
    count: int
    compactions: tuple[float, ...] = (0.15, 0.3)
    rng: random.Random = field(init=False)
    pool: TextPool = field(init=False)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.pool = TextPool.shared(random.Random(self.seed * 7919 + 1))
        self.used: set[str] = set()
        self.now = START_MS + self.rng.randrange(0, 200 * 86_400_000)
        self.leaf: str | None = None
        self.path: list[tuple[str, str]] = []  # (id, kind) on the current branch
        self.model = _MODELS[0]
        self.thinking = "medium"
        self.emitted = 0

    # ---- ids and time

    def _id(self) -> str:
        while True:
            value = f"{self.rng.getrandbits(32):08x}"
            if value not in self.used:
                self.used.add(value)
                return value

    def _tick(self, low: int, high: int) -> int:
        self.now += self.rng.randint(low, high)
        return self.now

    def session_id(self) -> str:
        rng = self.rng
        millis = self.now & ((1 << 48) - 1)
        value = (
            (millis << 80) | (0x7 << 76) | (rng.getrandbits(12) << 64) | (0b10 << 62) | rng.getrandbits(62)
        )
        text = f"{value:032x}"
        return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"

    def header(self) -> dict[str, Any]:
        return {
            "type": "session",
            "version": 3,
            "id": self.session_id(),
            "timestamp": _iso(self.now),
            "cwd": CWD,
        }

    def _entry(self, kind: str, **fields: Any) -> dict[str, Any]:
        entry_id = self._id()
        entry = {"type": kind, "id": entry_id, "parentId": self.leaf, "timestamp": _iso(self.now), **fields}
        self.leaf = entry_id
        self.path.append((entry_id, kind if kind != "message" else fields["message"]["role"]))
        return entry

    # ---- messages

    def _usage(self, input_tokens: int, output_tokens: int) -> dict[str, Any]:
        rng = self.rng
        _, _, _, p_in, p_out, p_read, p_write = self.model
        cache_read = rng.randint(0, 180_000) if rng.random() < 0.85 else 0
        cache_write = rng.randint(0, 4_000) if rng.random() < 0.4 else 0
        cost_in = p_in / 1_000_000 * input_tokens
        cost_out = p_out / 1_000_000 * output_tokens
        cost_read = p_read / 1_000_000 * cache_read
        cost_write = p_write / 1_000_000 * cache_write
        return {
            "input": input_tokens,
            "output": output_tokens,
            "cacheRead": cache_read,
            "cacheWrite": cache_write,
            "totalTokens": input_tokens + output_tokens + cache_read + cache_write,
            "cost": {
                "input": cost_in,
                "output": cost_out,
                "cacheRead": cost_read,
                "cacheWrite": cost_write,
                "total": cost_in + cost_out + cost_read + cost_write,
            },
        }

    def user(self) -> dict[str, Any]:
        rng = self.rng
        size = lognormal_size(rng, 650, 0.6, 120, 12_000)
        text = self.pool.prose(size)
        if rng.random() < 0.25:
            text += "\n\n```\n" + self.pool.code(lognormal_size(rng, 600, 0.7, 80, 6_000)) + "\n```"
        content: Any = text if rng.random() < 0.2 else [{"type": "text", "text": text}]
        message = {"role": "user", "content": content, "timestamp": self._tick(5_000, 240_000)}
        return self._entry("message", message=message)

    def _tool_call(self) -> dict[str, Any]:
        rng = self.rng
        name = rng.choices(("read", "bash", "edit", "write", "grep", "ls"), (40, 28, 18, 5, 6, 3))[0]
        arguments: dict[str, Any]
        if name == "read":
            arguments = {"path": self.pool.path()}
            if rng.random() < 0.25:
                arguments["offset"] = rng.randint(1, 900)
                arguments["limit"] = rng.choice((50, 100, 200, 400))
        elif name == "bash":
            command = rng.choice(
                (
                    "npm test -- --run",
                    "npx tsc --noEmit",
                    "git status --short",
                    "git diff --stat",
                    f"rg -n '{rng.choice(_IDENTS)}' src",
                    "pytest -q -x tests/unit",
                    "ls -la src",
                    "cat package.json | jq '.dependencies'",
                    "npm run lint -- --fix",
                    f"git log --oneline -n {rng.randint(5, 30)}",
                )
            )
            arguments = {"command": command}
            if rng.random() < 0.2:
                arguments["timeout"] = rng.choice((30, 60, 120, 300))
        elif name == "edit":
            edits = []
            for _ in range(rng.choice((1, 1, 1, 2, 3))):
                old = self.pool.code(lognormal_size(rng, 260, 0.7, 30, 4_000))
                edits.append(
                    {"oldText": old, "newText": self.pool.code(lognormal_size(rng, 300, 0.7, 30, 5_000))}
                )
            arguments = {"path": self.pool.path(), "edits": edits}
        elif name == "write":
            arguments = {
                "path": self.pool.path(),
                "content": self.pool.code(lognormal_size(rng, 2_500, 0.9, 200, 60_000)),
            }
        elif name == "grep":
            arguments = {"pattern": rng.choice(_IDENTS), "path": rng.choice(_DIRS)}
        else:
            arguments = {"path": rng.choice(_DIRS)}
        call_id = "toolu_01" + "".join(rng.choices(_B62, k=22))
        return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}

    def assistant(self, final: bool) -> dict[str, Any]:
        rng = self.rng
        content: list[dict[str, Any]] = []
        if self.thinking != "off" and rng.random() < 0.85:
            block: dict[str, Any] = {
                "type": "thinking",
                "thinking": self.pool.prose(lognormal_size(rng, 700, 0.7, 60, 12_000)),
            }
            if self.model[0] == "anthropic":
                block["thinkingSignature"] = "".join(rng.choices(_B64, k=rng.randint(200, 800)))
            content.append(block)
        if final or rng.random() < 0.6:
            content.append(
                {
                    "type": "text",
                    "text": self.pool.prose(lognormal_size(rng, 450 if not final else 900, 0.7, 20, 10_000)),
                }
            )
        if not final:
            content.extend(self._tool_call() for _ in range(rng.choices((1, 2, 3), (70, 22, 8))[0]))
        provider, api, model, *_ = self.model
        message = {
            "role": "assistant",
            "content": content,
            "api": api,
            "provider": provider,
            "model": model,
            "usage": self._usage(rng.randint(1, 9_000), rng.randint(20, 4_000)),
            "stopReason": "stop" if final else "toolUse",
            "timestamp": self._tick(2_000, 90_000),
        }
        return self._entry("message", message=message)

    def tool_result(self, call: dict[str, Any]) -> dict[str, Any]:
        rng = self.rng
        name = call["name"]
        details: Any = None
        is_error = rng.random() < 0.04
        if is_error:
            text = f"Error: {self.pool.prose(lognormal_size(rng, 200, 0.6, 40, 2_000))}"
        elif name == "read":
            # the big lines: file reads are usually a few KB, sometimes tens of KB
            text = self.pool.code(lognormal_size(rng, 2_600, 1.05, 200, 98_000))
        elif name == "bash":
            text = self.pool.prose(lognormal_size(rng, 900, 1.0, 20, 60_000))
            if rng.random() < 0.1:
                details = {
                    "truncation": {"truncated": True, "totalLines": rng.randint(2_000, 9_000)},
                    "fullOutputPath": f"/tmp/pi-bash-{rng.getrandbits(32):08x}.log",
                }
        elif name == "edit":
            count = len(call["arguments"]["edits"])
            text = f"Successfully replaced {count} block(s) in {call['arguments']['path']}."
            diff = "\n".join(
                f"{rng.choice('+- ')}{rng.randint(1, 900):>4} {line}"
                for line in self.pool.code(lognormal_size(rng, 900, 0.7, 100, 12_000)).split("\n")
            )
            details = {"diff": diff, "firstChangedLine": rng.randint(1, 900)}
        elif name == "write":
            text = (
                f"Successfully wrote {len(call['arguments']['content'])} bytes to {call['arguments']['path']}"
            )
        else:
            text = "\n".join(self.pool.path() for _ in range(rng.randint(3, 60)))
        message: dict[str, Any] = {
            "role": "toolResult",
            "toolCallId": call["id"],
            "toolName": name,
            "content": [{"type": "text", "text": text}],
        }
        if details is not None:
            message["details"] = details
        message["isError"] = is_error
        message["timestamp"] = self._tick(50, 30_000)
        return self._entry("message", message=message)

    # ---- non-message entries

    def model_change(self) -> dict[str, Any]:
        self.model = self.rng.choice([m for m in _MODELS if m != self.model])
        self._tick(500, 5_000)
        return self._entry("model_change", provider=self.model[0], modelId=self.model[2])

    def thinking_change(self) -> dict[str, Any]:
        self.thinking = self.rng.choice([t for t in _THINKING if t != self.thinking])
        self._tick(500, 5_000)
        return self._entry("thinking_level_change", thinkingLevel=self.thinking)

    def label(self) -> dict[str, Any]:
        target = self.rng.choice(self.path[-200:])[0]
        text = self.rng.choice(
            ("checkpoint", "before refactor", "tests green", "good state", "bug repro", "")
        )
        fields: dict[str, Any] = {"targetId": target}
        if text:
            fields["label"] = text  # no label = pi's "clear label"
        self._tick(500, 5_000)
        return self._entry("label", **fields)

    def session_info(self) -> dict[str, Any]:
        self._tick(100, 2_000)
        return self._entry(
            "session_info", name=" ".join(self.rng.choices(_WORDS, k=self.rng.randint(2, 6))).capitalize()
        )

    def custom(self) -> dict[str, Any]:
        self._tick(100, 2_000)
        entry_id = self._id()
        entry = {
            "type": "custom",
            "customType": "pi-lsp.ui-state",
            "data": {
                "expanded": [self._id() for _ in range(self.rng.randint(0, 5))],
                "scroll": self.rng.random(),
            },
            "id": entry_id,
            "parentId": self.leaf,
            "timestamp": _iso(self.now),
        }
        self.leaf = entry_id
        self.path.append((entry_id, "custom"))
        return entry

    def compaction(self) -> dict[str, Any]:
        users = [index for index, (_, kind) in enumerate(self.path) if kind == "user"]
        keep_from = users[-min(len(users), self.rng.randint(2, 4))] if users else len(self.path) - 1
        first_kept = self.path[keep_from][0]
        self._tick(10_000, 60_000)
        details = {
            "readFiles": [self.pool.path() for _ in range(self.rng.randint(3, 25))],
            "modifiedFiles": [self.pool.path() for _ in range(self.rng.randint(1, 10))],
        }
        return self._entry(
            "compaction",
            summary="## Goal\n" + self.pool.prose(lognormal_size(self.rng, 4_000, 0.4, 1_000, 16_000)),
            firstKeptEntryId=first_kept,
            tokensBefore=self.rng.randint(120_000, 195_000),
            details=details,
        )

    def branch(self) -> Iterator[dict[str, Any]]:
        """Go back to before one of the last few prompts (pi's /tree), maybe with a summary."""
        users = [index for index, (_, kind) in enumerate(self.path) if kind == "user"][-6:]
        if len(users) < 2:
            return
        index = self.rng.choice(users[:-1])
        abandoned_from = self.path[index][0]
        self.path = self.path[:index]
        self.leaf = self.path[-1][0] if self.path else None
        if self.rng.random() < 0.4:
            self._tick(5_000, 30_000)
            yield self._entry(
                "branch_summary",
                fromId=abandoned_from if self.rng.random() < 0.5 else (self.leaf or "root"),
                summary=self.pool.prose(lognormal_size(self.rng, 1_200, 0.5, 200, 8_000)),
                details={
                    "readFiles": [self.pool.path() for _ in range(self.rng.randint(0, 8))],
                    "modifiedFiles": [],
                },
            )

    # ---- the whole session

    def _turns(self) -> Iterator[dict[str, Any]]:
        rng = self.rng
        yield self.model_change()
        yield self.thinking_change()
        compact_at = sorted(int(fraction * self.count) for fraction in self.compactions if 0 < fraction < 1)
        named = False
        while True:
            if compact_at and self.emitted >= compact_at[0]:
                compact_at.pop(0)
                yield self.compaction()
            roll = rng.random()
            if roll < 0.015 and len(self.path) > 30:
                yield from self.branch()
            elif roll < 0.025:
                yield self.model_change()
            elif roll < 0.035:
                yield self.thinking_change()
            elif roll < 0.043 and self.path:
                yield self.label()
            elif roll < 0.048:
                yield self.custom()
            yield self.user()
            if not named and self.emitted > 2:
                named = True
                yield self.session_info()
            for _ in range(min(14, 1 + int(rng.expovariate(1 / 2.2)))):
                entry = self.assistant(final=False)
                yield entry
                for block in entry["message"]["content"]:
                    if block["type"] == "toolCall":
                        yield self.tool_result(block)
            yield self.assistant(final=True)
            if rng.random() < 0.003:
                yield self.session_info()

    def entries(self) -> Iterator[dict[str, Any]]:
        for entry in self._turns():
            if self.emitted >= self.count:
                return
            self.emitted += 1
            yield entry


def write_session(path: Path, seed: int, count: int, compactions: tuple[float, ...]) -> int:
    """Write one session file; returns its size in bytes."""
    generator = SessionGen(seed, count, compactions)
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_suffix(".tmp")
    size = 0
    with temp.open("wb") as handle:
        buffer: list[bytes] = [dumps_compact(generator.header()) + b"\n"]
        for entry in generator.entries():
            buffer.append(dumps_compact(entry) + b"\n")
            if len(buffer) >= 2_000:
                data = b"".join(buffer)
                size += len(data)
                handle.write(data)
                buffer.clear()
        data = b"".join(buffer)
        size += len(data)
        handle.write(data)
    temp.replace(path)
    return size


def _pi_file_name(generator_seed: int) -> str:
    generator = SessionGen(generator_seed, 0)
    iso = _iso(generator.now)
    return f"{iso.replace(':', '-').replace('.', '-')}_{generator.session_id()}.jsonl"


def _cached(meta_path: Path, params: dict[str, Any], targets: list[Path]) -> bool:
    try:
        return json.loads(meta_path.read_text()) == params and all(target.exists() for target in targets)
    except (OSError, ValueError):
        return False


def big_session(out: Path, count: int, seed: int = 1, compactions: tuple[float, ...] = (0.15, 0.3)) -> Path:
    """The path of the ``count``-entry session, generated unless already there."""
    path = out / f"session-{count}.jsonl"
    meta = out / f"session-{count}.meta.json"
    params = {"version": GENERATOR_VERSION, "seed": seed, "count": count, "compactions": list(compactions)}
    if not _cached(meta, params, [path]):
        size = write_session(path, seed, count, compactions)
        meta.write_text(json.dumps(params))
        print(f"generated {path} ({count} entries, {size / 1e6:.1f} MB)", file=sys.stderr)
    return path


def session_set(out: Path, files: int, count: int, seed: int = 5000) -> list[Path]:
    """``files`` big sessions of ``count`` entries each (distinct seeds, so distinct sessions)."""
    directory = out / f"set-{files}x{count}"
    meta = out / f"set-{files}x{count}.meta.json"
    paths = [directory / _pi_file_name(seed + index) for index in range(files)]
    params = {"version": GENERATOR_VERSION, "seed": seed, "files": files, "count": count}
    if _cached(meta, params, paths):
        return paths
    for index, path in enumerate(paths):
        size = write_session(path, seed + index, count, (0.15, 0.3))
        print(f"generated {path} ({count} entries, {size / 1e6:.1f} MB)", file=sys.stderr)
    meta.write_text(json.dumps(params))
    return paths


def list_sessions_dir(out: Path, files: int, seed: int = 1000) -> Path:
    """A folder of ``files`` sessions of varied length (median ~40 entries), generated unless there."""
    directory = out / f"list-{files}"
    meta = out / f"list-{files}.meta.json"
    params = {"version": GENERATOR_VERSION, "seed": seed, "files": files}
    if _cached(meta, params, [directory]) and sum(1 for _ in directory.glob("*.jsonl")) == files:
        return directory
    directory.mkdir(parents=True, exist_ok=True)
    for old in directory.glob("*.jsonl"):
        old.unlink()
    rng = random.Random(seed)
    total = 0
    for index in range(files):
        count = lognormal_size(rng, 40, 1.0, 3, 600)
        file_seed = seed + 1 + index
        total += write_session(
            directory / _pi_file_name(file_seed), file_seed, count, (0.5,) if count > 300 else ()
        )
    meta.write_text(json.dumps(params))
    print(f"generated {directory} ({files} files, {total / 1e6:.1f} MB)", file=sys.stderr)
    return directory


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder (default: .bench-data/)")
    parser.add_argument(
        "--entries", type=int, nargs="*", default=[10_000, 100_000], help="entries per big session"
    )
    parser.add_argument(
        "--list-files", type=int, default=1_000, help="session files for the list benchmark (0: none)"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--stats", action="store_true", help="print the line-size distribution of each big file"
    )
    args = parser.parse_args(argv)
    for count in args.entries:
        path = big_session(args.out, count, args.seed)
        if args.stats:
            print_stats(path)
    if args.list_files:
        list_sessions_dir(args.out, args.list_files)
    return 0


def print_stats(path: Path) -> None:
    sizes = sorted(len(line) for line in path.read_bytes().splitlines())
    count = len(sizes)

    def q(p: float) -> int:
        return sizes[min(count - 1, int(p * count))]

    print(
        f"{path.name}: {count} lines, {sum(sizes) / 1e6:.1f} MB, mean {sum(sizes) / count:.0f} B, "
        f"p10 {q(0.1)} p50 {q(0.5)} p90 {q(0.9)} p99 {q(0.99)} max {sizes[-1]}; "
        f">=10KB {sum(s >= 10_000 for s in sizes) / count:.1%}, "
        f"<1KB {sum(s < 1_000 for s in sizes) / count:.1%}"
    )


if __name__ == "__main__":
    raise SystemExit(main())
