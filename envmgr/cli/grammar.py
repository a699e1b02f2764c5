"""The grammar every command shares: options mean the same wherever they stand on the line, and what
goes to another program (pip) stands after `--`. Also did-you-mean by real edit distance."""
from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

import click

# ctx.meta key: the words after `--` (pip's), kept apart from the words before it.
TAIL = "envmgr.tail"


class TailCommand(click.Command):
    """A command whose options are parsed anywhere before `--`; the words after it are kept, as given,
    in ctx.meta[TAIL] (click would otherwise mix them with the positional words before `--`)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if "--" in args:
            cut = args.index("--")
            ctx.meta[TAIL] = tuple(args[cut + 1:])
            args = args[:cut]
        else:
            ctx.meta[TAIL] = ()
        return super().parse_args(ctx, args)


def tail(ctx: click.Context) -> tuple[str, ...]:
    return tuple(ctx.meta.get(TAIL, ()))


def suggest(word: str, names: Iterable[str]) -> str | None:
    """The closest name by edit distance (difflib's ratio of the words without their dashes, at least
    0.6), a long option before a short one on a tie. click's own guess for a mistyped `--json` on a
    command without it was `--vs` (a ratio of 0.6 counting the dashes), which no one meant."""
    bare = word.lstrip("-").lower()
    best: tuple[float, bool, str] | None = None
    for name in set(names):
        score = difflib.SequenceMatcher(None, bare, name.lstrip("-").lower()).ratio()
        key = (score, name.startswith("--"), name)
        if score >= 0.6 and (best is None or key[:2] > best[:2]):
            best = key
    return best[2] if best else None


def option_names(command: click.Command) -> list[str]:
    """Every visible option name of `command` (hidden aliases are not suggested)."""
    return [o for p in command.params if isinstance(p, click.Option) and not p.hidden
            for o in (*p.opts, *p.secondary_opts)]


def better_no_such_option(exc: click.NoSuchOption) -> click.NoSuchOption:
    """The same error, with a suggestion by edit distance instead of click's."""
    command = exc.ctx.command if exc.ctx is not None else None
    guess = suggest(exc.option_name, option_names(command)) if command is not None else None
    message = f"No such option {exc.option_name!r}." + (f" Did you mean {guess!r}?" if guess else "")
    return click.NoSuchOption(exc.option_name, message=message, ctx=exc.ctx)


def no_such_command(ctx: click.Context, name: str, names: Iterable[str]) -> click.UsageError:
    guess = suggest(name, names)
    return click.UsageError(f"No such command {name!r}." + (f" Did you mean {guess!r}?" if guess else ""), ctx)
