"""The tools' JSON schemas: pi's structure key for key (types, required, additionalProperties, order).

The property descriptions are worded by us with the meaning of pi's.
"""

from __future__ import annotations

from typing import Any


def _string(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


def _number(description: str) -> dict[str, Any]:
    return {"type": "number", "description": description}


def _boolean(description: str) -> dict[str, Any]:
    return {"type": "boolean", "description": description}


def _object(properties: dict[str, Any], required: list[str], *, closed: bool = False) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object"}
    if required:
        schema["required"] = required
    schema["properties"] = properties
    if closed:
        schema["additionalProperties"] = False
    return schema


READ_PARAMETERS = _object(
    {
        "path": _string("File to read, absolute or relative to the working directory"),
        "offset": _number("First line to return, counting from 1"),
        "limit": _number("Most lines to return"),
    },
    ["path"],
)

BASH_PARAMETERS = _object(
    {
        "command": _string("The bash command line to run"),
        "timeout": _number("Seconds before the command is stopped (optional; none by default)"),
    },
    ["command"],
)

EDIT_PARAMETERS = _object(
    {
        "path": _string("File to change, absolute or relative to the working directory"),
        "edits": {
            "type": "array",
            "items": _object(
                {
                    "oldText": _string(
                        "The exact text this replacement targets. It has to occur exactly once in the "
                        "original file and must not overlap the oldText of any other entry in edits[]."
                    ),
                    "newText": _string("The text that takes its place."),
                },
                ["oldText", "newText"],
                closed=True,
            ),
            "description": (
                "The replacements, one or more. All of them are located in the original file (not one "
                "after another), so they must not overlap or nest; changes to the same block or to lines "
                "close together belong in a single entry."
            ),
        },
    },
    ["path", "edits"],
    closed=True,
)

WRITE_PARAMETERS = _object(
    {
        "path": _string("File to write, absolute or relative to the working directory"),
        "content": _string("The complete new contents of the file"),
    },
    ["path", "content"],
)

GREP_PARAMETERS = _object(
    {
        "pattern": _string("What to look for: a regular expression, or plain text with literal"),
        "path": _string("Folder or file to search (the working directory if left out)"),
        "glob": _string("Only search files matching this glob, such as '*.ts' or '**/*.spec.ts'"),
        "ignoreCase": _boolean("Match without regard to case (off by default)"),
        "literal": _boolean("Take pattern as plain text rather than a regular expression (off by default)"),
        "context": _number("Lines to show before and after every match (0 by default)"),
        "limit": _number("Most matches to return (100 by default)"),
    },
    ["pattern"],
)

FIND_PARAMETERS = _object(
    {
        "pattern": _string(
            "Glob the file paths must match, such as '*.ts', '**/*.json' or 'src/**/*.spec.ts'"
        ),
        "path": _string("Folder to search in (the working directory if left out)"),
        "limit": _number("Most paths to return (1000 by default)"),
    },
    ["pattern"],
)

LS_PARAMETERS = _object(
    {
        "path": _string("Folder to list (the working directory if left out)"),
        "limit": _number("Most entries to return (500 by default)"),
    },
    [],
)
