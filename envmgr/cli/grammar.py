"""The grammar every command shares: options mean the same wherever they stand on the line, and what
goes to another program (pip) stands after `--`. Also did-you-mean by real edit distance."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import click

from envmgr.errors import UsageError

# ctx.meta key: the words after `--` (pip's), kept apart from the words before it.
TAIL = "envmgr.tail"


class TailCommand(click.Command):
    """A command whose options are parsed anywhere before `--`; the words after it are kept, as given,
    in ctx.meta[TAIL] (click would otherwise mix them with the positional words before `--`)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if "--" in args:
            cut = args.index("--")
            ctx.meta[TAIL] = tuple(args[cut + 1 :])
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
    import difflib  # here: only a mistyped word needs it, and cli/main.py is on every start-up path

    bare = word.lstrip("-").lower()
    best: tuple[float, bool, str] | None = None
    for name in sorted(set(names)):  # sorted: a tie goes the same way every run
        score = difflib.SequenceMatcher(None, bare, name.lstrip("-").lower()).ratio()
        key = (score, name.startswith("--"), name)
        if score >= 0.6 and (best is None or key[:2] > best[:2]):
            best = key
    return best[2] if best else None


def option_names(command: click.Command) -> list[str]:
    """Every visible option name of `command` (hidden aliases are not suggested)."""
    return [
        o for p in command.params if isinstance(p, click.Option) and not p.hidden for o in (*p.opts, *p.secondary_opts)
    ]


def better_no_such_option(exc: click.NoSuchOption) -> click.NoSuchOption:
    """The same error, with a suggestion by edit distance instead of click's."""
    command = exc.ctx.command if exc.ctx is not None else None
    guess = suggest(exc.option_name, option_names(command)) if command is not None else None
    message = f"No such option {exc.option_name!r}." + (f" Did you mean {guess!r}?" if guess else "")
    return click.NoSuchOption(exc.option_name, message=message, ctx=exc.ctx)


def no_such_command(ctx: click.Context, name: str, names: Iterable[str]) -> click.UsageError:
    guess = suggest(name, names)
    return click.UsageError(f"No such command {name!r}." + (f" Did you mean {guess!r}?" if guess else ""), ctx)


# Old spellings -> (new name, the commands where the old one is still read; None: every command). One
# meaning per name: --python is the target interpreter (install, verify), so where it meant "also consider
# this Python's pip CUDA" it is --pip-cuda-python; CUDA architectures are --cuda-arch (--arch is MSVC's).
# The old spellings are no options at all: not in --help, never suggested; each use says its new name.
RENAMED: dict[str, tuple[str, frozenset[str] | None]] = {
    "--arch-list": ("--cuda-arch", None),
    "--python": ("--pip-cuda-python", frozenset({"export", "list", "record", "run", "shell"})),
}
# Commands whose first plain word starts another program's words (`envmgr run nvcc --python x`).
_STOP_AT_WORD = frozenset({"run"})


def renamed(command: click.Command, name: str, args: list[str]) -> tuple[list[str], list[str]]:
    """(args with old spellings given their new names, one note per old spelling used). Only envmgr's own
    words change: nothing after `--`, nor, for `run`, from the command it runs on."""
    takes_value = {
        o
        for p in command.params
        if isinstance(p, click.Option) and not p.is_flag and not p.count
        for o in (*p.opts, *p.secondary_opts)
    } | set(RENAMED)
    out, notes, i = list(args), [], 0
    while i < len(out):
        word = out[i]
        if word == "--" or (name in _STOP_AT_WORD and not word.startswith("-")):
            break
        old, eq, value = word.partition("=")
        new, where = RENAMED.get(old, ("", frozenset()))
        if new and (where is None or name in where):
            out[i] = new + eq + value
            notes.append(f"envmgr: note: {old} is now {new}")
        i += 2 if word in takes_value else 1
    return out, notes


def refuse_inapplicable(ctx: click.Context, names: Iterable[str], why: str, remedy: str) -> None:
    """Exit 2, one line, for the first option of `names` (parameter names) given on the command line where it
    cannot apply (`why`): a selector is never silently ignored. `remedy` may name the option as {flag}."""
    wanted = set(names)
    for param in ctx.command.params:
        if (
            isinstance(param, click.Option)
            and param.name in wanted
            and ctx.get_parameter_source(param.name) is click.core.ParameterSource.COMMANDLINE
        ):
            flag = max(param.opts, key=len)
            raise UsageError(f"{flag} does not apply {why}", remedy.format(flag=flag))


class AliasChoice(click.Choice):  # type: ignore[type-arg]   # click.Choice is generic from click 8.2
    """A Choice that also takes other spellings of its values (not listed in --help), e.g. a shell's
    name where a script format is asked: `--format pwsh` is `--format ps1`."""

    def __init__(self, choices: Iterable[str], aliases: dict[str, str]) -> None:
        super().__init__(tuple(choices))
        self.aliases = aliases

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and value.lower() in self.aliases:
            value = self.aliases[value.lower()]
        return super().convert(value, param, ctx)


# pip's own option names for `pip install` and `pip wheel` (pip 23.2's --help, and --group from 25.1): in
# the old `install` form (pip's options before `--`), an unknown option that is none of these but close to
# one of envmgr's is envmgr's, mistyped (`--dry-rn` would otherwise reach pip, after doctor and the routes).
PIP_OPTIONS = frozenset(
    (
        "--abi --break-system-packages --build-option --cache-dir --cert --check-build-dependencies --client-cert "
        "--compile --config-settings --constraint --debug --disable-pip-version-check --dry-run --editable "
        "--exists-action --extra-index-url --find-links --force-reinstall --global-option --group --hash --help "
        "--ignore-installed --ignore-requires-python --implementation --index-url --isolated --keyring-provider --log "
        "--no-binary --no-build-isolation --no-cache-dir --no-clean --no-color --no-compile --no-deps --no-index "
        "--no-input --no-python-version-warning --no-use-pep517 --no-verify --no-warn-conflicts "
        "--no-warn-script-location --only-binary --platform --pre --prefer-binary --prefix --progress-bar --proxy "
        "--python --python-version --quiet --report --require-hashes --require-virtualenv --requirement --retries "
        "--root --root-user-action --src --target --timeout --trusted-host --upgrade --upgrade-strategy "
        "--use-deprecated --use-feature --use-pep517 --user --verbose --version --wheel-dir "
        "-C -I -U -V -c -e -f -h -i -q -r -t -v -w"
    ).split()
)


def mistyped_option(words: Iterable[str], command: click.Command) -> click.UsageError | None:
    """The error for the first word that is no pip option but a near miss of one of `command`'s own."""
    own = option_names(command)
    for word in words:
        name = word.partition("=")[0]
        if name.startswith("--") and name not in PIP_OPTIONS and (guess := suggest(name, own)):
            return click.UsageError(
                f"No such option {name!r}. Did you mean {guess!r}? (pip's own options go after `--`)"
            )
    return None
