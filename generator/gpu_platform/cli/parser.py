"""The command line as argparse sees it, built from the command registry.

``build(selected)`` gives every command its line in ``--help`` but builds the arguments only of
the commands asked for: ``main`` asks for the one being run, so ``--help`` and ``--version``
import no command module; the README writer and the tests ask for all of them.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable

from gpu_platform.cli import common, registry

DESCRIPTION = (
    "Generate, check and explain the gpu-platform umbrella chart: a shared, "
    "autoscaled, multi-tenant GPU platform on Kubernetes."
)
EPILOG = (
    "Logs go to stderr, data to stdout. Exit codes: 0 ok, 1 failure or drift, 2 usage. "
    "`gpu-platform COMMAND --help` describes a command and its options."
)


def version_text() -> str:
    """The tool's and chart's version, and every pinned subchart."""
    from gpu_platform.pipeline.emit import metadata
    from gpu_platform.pipeline.pins import lock

    lines = [f"gpu-platform {metadata.version()} (chart {metadata.NAME} {metadata.version()})"]
    lines += [f"  {chart.name} {chart.version} ({chart.repository})" for chart in lock().charts]
    return "\n".join(lines) + "\n"


class _Version(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None):  # type: ignore[no-untyped-def]
        sys.stdout.write(version_text())
        raise SystemExit(0)


def build(selected: Iterable[str] | None = None) -> argparse.ArgumentParser:
    """The whole command line; only the ``selected`` commands' arguments are built (None: all).
    A command's ``help`` is its line in ``--help``; its ``DESCRIPTION`` is what ``COMMAND
    --help`` and the README's CLI table say about it."""
    wanted = set(registry.NAMES if selected is None else selected)
    parser = common.Parser(
        prog="gpu-platform",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=common.formatter,
    )
    parser.add_argument(
        "--version",
        action=_Version,
        nargs=0,
        help="print the tool, chart and pinned subchart versions",
    )
    common.verbose_arg(parser, default=False)
    sub = parser.add_subparsers(
        dest="command",
        required=True,
        parser_class=common.Parser,
        metavar="COMMAND",
        title="commands",
    )
    for name, help_line in registry.COMMANDS:
        if name not in wanted:
            sub.add_parser(name, help=help_line, add_help=False)
            continue
        command = registry.module(name)
        p = sub.add_parser(
            name,
            help=help_line,
            description=command.DESCRIPTION,
            usage=getattr(command, "USAGE", None),
            usage_in_errors=getattr(command, "USAGE_IN_ERRORS", False),
            formatter_class=common.formatter,
        )
        common.verbose_arg(p, default=argparse.SUPPRESS)
        command.arguments(p)
        p.set_defaults(parser=p)
    return parser


def commands(
    parser: argparse.ArgumentParser | None = None,
) -> list[tuple[str, argparse.ArgumentParser, str]]:
    """Every command: its name, its parser and its one-line help, in --help's order."""
    parser = parser or build()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            return [(name, sub, helps[name]) for name, sub in action.choices.items()]
    raise AssertionError("the parser has no commands")


def _arg_text(action: argparse.Action) -> str:
    if isinstance(action.metavar, tuple):
        return " ".join(action.metavar)
    if action.metavar is not None:
        return action.metavar
    if action.choices is not None:
        return "|".join(str(c) for c in action.choices)
    return action.dest.upper()


def synopsis(parser: argparse.ArgumentParser) -> str:
    """A command's arguments in declaration order, as the README shows them: options in
    brackets unless required, repeatable ones with "...", -h and -v left out (every command
    has them)."""
    parts = [parser.prog]
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction) or action.dest == "verbose":
            continue
        if action.help == argparse.SUPPRESS:
            continue
        text = _arg_text(action)
        if action.option_strings:
            item = action.option_strings[0]
            if action.nargs != 0:
                item += " " + text
            if isinstance(action, argparse._AppendAction):
                item += " ..."
            parts.append(item if action.required else f"[{item}]")
        elif action.nargs == "?":
            parts.append(f"[{text}]")
        elif action.nargs == "*":
            parts.append(f"[{text}]" if " " in text else f"[{text} ...]")
        elif action.nargs == "+":
            parts.append(f"{text} ...")
        else:
            parts.append(text)
    return " ".join(parts)
