"""A log as users paste it, made back into the tool's own text (issue 23 item 2).

Two stages, both over batches of lines and both skipped at the cost of a few substring searches when a
batch has none of their marks (a 200 MB log of ordinary lines pays nothing else):

`strip_batch` (line for line, before wrapped lines are joined): Markdown code fences become blank
lines, quote prefixes (`> `, `>> `) and the prefixes CI services and loggers put before every line
(ISO timestamps, `[12:00:01]`, Docker BuildKit's `#7 12.3 `, docker compose's `app-1  | `,
VS Code's `[build] `, the CRI format's `stderr F ` and GitLab runner's `00O ` after their timestamps, journald's
`May 01 12:00:00 host proc[pid]: `) are cut off (a prefixed line a console cut at its width is joined back,
`_stamped_lines`), and a line of Docker's json-file log (`{"log":"...\\n","stream":"stderr","time":"..."}`)
becomes the text it holds.

`repair` (per logical line, after joining): HTML entities decoded (`&lt;`, `&quot;`, `&#39;`); the
escapes of a Python bytes/str repr or a JSON string (`b'...\\r\\n...'`) turned back into lines, with
`\\xNN` byte runs decoded; the repr of a list of output lines (`['-- Found CUDA', 'CMake Error ...']`) one line
per item; mojibake (UTF-8 text shown through CP1252, CP1251, CP866 or GBK) undone
where the round trip gives valid UTF-8. Lines made from one physical line keep its line number.
"""

from __future__ import annotations

import html
import re

from envmgr.files.nested import loads_json

_FENCE = re.compile(r"^[ \t]*(?:```|~~~)[\w+-]*[ \t]*$", re.M)
_QUOTE = re.compile(r"^(?:[ \t]{0,3}>(?: |$|(?=>)))+", re.M)
_PREFIX = re.compile(
    r"^(?:\ufeff)?(?:"
    r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?(?:[ \t]+\|)?[ \t]"  # ISO / Actions
    r"|\[\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\][ \t]?"  # [2024-01-01 ...]
    r"|\[?\d\d:\d\d:\d\d(?:[.,]\d+)?\]?[ \t]"  # 12:00:01 / [..]
    r"|#\d+ \d+\.\d+ "  # BuildKit
    r"|\[(?:build|cmake|driver|proc|main|ctest)\] "  # VS Code
    r"|##\[(?:error|warning|debug|command|section|group|endgroup|info)\][ \t]?"  # Azure/Actions
    r"|[\w.-]+[-_]\d+[ \t]+\|[ \t]"  # docker compose
    r"|(?<=[Z\d] )(?:stdout|stderr) [FP] "  # CRI (kubectl, containerd): after its time
    r"|(?<=Z )[0-9a-f]{2}[OE][+ ]"  # GitLab runner 17+: stream and append flag after its time
    r"|[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d [\w.-]+ [\w./@-]+(?:\[\d+\])?: "  # journald / syslog
    r")+",
    re.M,
)
# Docker's json-file log driver: one JSON object per line, the line itself a JSON string
_DOCKER_JSON = re.compile(
    r'^\{\s*"log"\s*:\s*"((?:[^"\\]|\\.)*)"\s*,\s*"stream"\s*:\s*"\w+"'
    r'(?:\s*,\s*"\w+"\s*:\s*"[^"]*")*\s*\}\s*$'
)
SAMPLE = 64  # lines of a batch looked at for a line prefix: a logger puts it on every line

_ENTITY = re.compile(r"&(?:[A-Za-z]{2,8}|#\d{1,6}|#[xX][0-9A-Fa-f]{1,6});")
_ESCAPED_NL = re.compile(r"\\r\\n|\\n(?![a-z])|(?<=[.;,)\]'\"!?])\\n")
_REPR_ESC = re.compile(r"\\(?:x([0-9a-fA-F]{2})|([\\'\"])|t|r|u([0-9a-fA-F]{4}))")
_HEX_RUN = re.compile(r"(?:\\x[0-9a-fA-F]{2})+")
_NOT_ESCAPE = re.compile(r"\\[^nrt\"'\\/xubf0]|\\$")  # a backslash no JSON string or repr writes (C:\Program)
_NON_ASCII_RUN = re.compile(r"[^\x00-\x7f](?:[^\x00-\x20]*[^\x00-\x7f])?")  # within one word
_MOJIBAKE_CODECS = ("cp1252", "cp1251", "cp866", "gbk", "latin-1")
# Typographic quotes (a localised tool's, a web page's or an editor's) as the ASCII ones the tools print in
# English: the anchors quote an arch ('compute_120a'), a path or a DLL name either way.
_QUOTES = str.maketrans("\u2018\u2019\u201a\u201b\u2032\u201c\u201d\u201e\u201f\u2033", "'''''\"\"\"\"\"")
MEMO = 4096  # repaired lines remembered per log
Memo = dict[str, list[str]]  # a line -> its repaired lines
MAX_LINE = 1 << 20  # a longer line is left as it is (escapes, mojibake): bounded work per line


def strip_batch(lines: list[str]) -> list[str]:
    """The batch with fences blanked and line prefixes cut; always as many lines as given."""
    body = "\n".join(lines)
    changed = False
    # each mark's rarest character first: a search for one character runs at memchr's speed, for two or three
    # many times slower (a batch without backticks, tildes, ">" or quotes pays almost nothing for them)
    if ("`" in body and "```" in body) or ("~" in body and "~~~" in body):
        body, changed = _FENCE.sub("", body), True
    if body.startswith((">", " >")) or (">" in body and ("\n>" in body or "\n >" in body)):
        body, changed = _QUOTE.sub("", body), True
    if any(_PREFIX.match(line) for line in lines[:: max(1, len(lines) // SAMPLE)]):
        cut, n = _PREFIX.subn("", body)
        if n >= body.count("\n") + 1:  # every line had its prefix: nothing was cut by a console
            body, changed = cut, True
        else:
            return _stamped_lines(body.split("\n"))
    lines = body.split("\n") if changed else lines
    return list(map(_docker_line, lines)) if '"' in body and '"log"' in body else lines


WRAP_MIN = 40  # a console narrower than this is not taken for a wrapping one (logengine.MIN_WIDTH)


def _stamped_lines(lines: list[str]) -> list[str]:
    """Lines of a log whose logger prefixed every line, some without their prefix: a console (or an editor) that cut
    the prefixed lines at its width W put the rest of each on lines of their own, unprefixed. Such a piece follows a
    line of exactly W characters, the longest in the batch (with its prefix), when at least two lines have that length:
    it is joined back to its line as the console cut it, with nothing added, and its place left blank (line numbers
    keep counting the lines given). Unprefixed lines after a shorter line (a blank line, a traceback a logger wrote as
    one message) stay as they are."""
    lengths = list(map(len, lines))
    width = max(lengths)
    width = width if lengths.count(width) >= 2 else 0
    out: list[str] = []
    last, length = -1, 0  # the index in `out` of the line being joined, the length of its last piece
    for line in lines:
        m = _PREFIX.match(line)
        if m:
            out.append(line[m.end() :])
            last, length = len(out) - 1, len(line)
        elif last >= 0 and length == width >= WRAP_MIN and line:
            out[last] += line
            out.append("")
            length = len(line)
        else:
            out.append(line)
            last = -1
    return list(map(_docker_line, out)) if '"log"' in "".join(lines) else out


def _docker_line(line: str) -> str:
    """A line of Docker's json-file log: the text it holds (its line break and any inner one dropped)."""
    m = _DOCKER_JSON.match(line) if line.startswith("{") and len(line) < MAX_LINE else None
    if m is None:
        return line
    try:
        text = loads_json('"' + m.group(1) + '"')
    except ValueError:
        return line
    if not isinstance(text, str):
        return line
    return text.rstrip("\r\n").replace("\r", "").replace("\n", " ")


def repair(nums: list[int], texts: list[str], memo: Memo | None = None) -> tuple[list[int], list[str]]:
    """Entities, repr escapes and mojibake repaired; a repr's embedded line breaks become lines. Only lines
    that hold a mark are looked at; `memo` keeps the answers for lines seen before (a log that repeats)."""
    body = "\n".join(texts)
    entities = "&" in body and _ENTITY.search(body) is not None
    escapes = "\\" in body and ("\\n" in body or "\\x" in body)  # rarest character first (strip_batch)
    listed = ("'" in body and "', " in body) or ('"' in body and '", ' in body)
    if not (entities or escapes or listed or not body.isascii()):
        return nums, texts
    memo = {} if memo is None else memo
    out_nums: list[int] = []
    out_texts: list[str] = []
    for no, text in zip(nums, texts, strict=True):
        if text.isascii() and "&" not in text and "\\" not in text and not (listed and text.lstrip().startswith("[")):
            out_nums.append(no)
            out_texts.append(text)
            continue
        pieces = memo.get(text)
        if pieces is None:
            pieces = repair_line(text, entities)
            if len(memo) < MEMO and len(text) < 4096:
                memo[text] = pieces
        out_nums.extend([no] * len(pieces))
        out_texts.extend(pieces)
    return out_nums, out_texts


def repair_line(text: str, entities: bool = True) -> list[str]:
    if len(text) > MAX_LINE:
        return [text]
    if entities and "&" in text:
        text = _unescape(text)
    if "\\n" in text or "\\x" in text:
        pieces = _unrepr(text)
    else:
        pieces = _unlist(text) if text.lstrip()[:1] == "[" else [text]
    return [p if p.isascii() else unmojibake(p).translate(_QUOTES) for p in pieces]


_LITERAL = re.compile(r"'(?:[^'\\\n]|\\.)*'" + r'|"(?:[^"\\\n]|\\.)*"')
_LIST_SEP = re.compile(r"\s*,\s*")


def _unlist(text: str) -> list[str]:
    """A line that is the repr of a list of output lines (`['-- Found CUDA', 'CMake Error at ...', ...]`, what a
    program prints for captured output split into lines): one line per item. A command's argument list
    (`['cmake', '-DGGML_CUDA=on']`) stays: at most half of its non-blank items hold a space."""
    body = text.strip()
    if not (body.startswith("[") and body.endswith("]")):
        return [text]
    items: list[str] = []
    pos = 1
    for m in _LITERAL.finditer(body, 1, len(body) - 1):
        gap = body[pos : m.start()]
        if (items and not _LIST_SEP.fullmatch(gap)) or (not items and gap.strip()):
            return [text]
        items.append(m.group(0)[1:-1])
        pos = m.end()
    words = [i for i in items if i.strip()]
    if len(items) < 2 or body[pos:-1].strip(" ,") or 2 * sum(" " in i.strip() for i in words) <= len(words):
        return [text]
    return [_unescape_repr(i) if "\\" in i else i for i in items]


def _unescape(text: str) -> str:
    return html.unescape(text)


def _unrepr(text: str) -> list[str]:
    """A line holding a Python/JSON repr (escaped line breaks, doubled backslashes, \\xNN bytes): the
    text it stands for, split at its line breaks. A Windows path (`C:\\new\\nvcc`) is no line break:
    `\\n` counts only as `\\r\\n`, before a non-letter or after punctuation, or in text whose backslashes
    are doubled or are all escapes a string literal writes, with two such certain breaks (a JSON string or repr of
    prose: `...hours\\nbuild`)."""
    doubled = "\\\\" in text
    if not (doubled or "\\r\\n" in text or _ESCAPED_NL.search(text) or _HEX_RUN.search(text)):
        return [text]
    sure = _ESCAPED_NL.search(text)
    if doubled or (sure and _ESCAPED_NL.search(text, sure.end()) and not _NOT_ESCAPE.search(text)):
        parts = re.split(r"(?<!\\)\\r\\n|(?<!\\)\\n", text)
    else:
        parts = _ESCAPED_NL.split(text)
    # a repr or JSON string escapes its quotes (\' \") and, in JSON, non-ASCII text (\uXXXX)
    return [_unescape_repr(p) if doubled or "\\x" in p or "\\'" in p or '\\"' in p or "\\u" in p else p for p in parts]


def _unescape_repr(part: str) -> str:
    part = _HEX_RUN.sub(_hex_bytes, part)

    def one(m: re.Match[str]) -> str:
        if m.group(2):
            return m.group(2)
        if m.group(3):
            return _char(int(m.group(3), 16))
        return {"t": "\t", "r": ""}.get(m.group(0)[1], m.group(0))

    return _REPR_ESC.sub(one, part)


def _char(code: int) -> str:
    return "\ufffd" if 0xD800 <= code <= 0xDFFF else chr(code)  # half a surrogate pair: no character


def _hex_bytes(m: re.Match[str]) -> str:
    raw = bytes.fromhex(m.group(0).replace("\\x", ""))
    for codec in ("utf-8", "gbk", "cp1251", "cp1252"):
        try:
            return raw.decode(codec)
        except UnicodeDecodeError:
            continue
    return m.group(0)


def unmojibake(text: str) -> str:
    """The line's words that are UTF-8 shown through a legacy code page, decoded back. A code page is
    taken for the line when encoding its non-ASCII words in it gives UTF-8 of fewer characters, at least
    twice as many of them valid as lost (bytes the code page could not show were dropped or replaced);
    real text in any language decodes to almost nothing but losses. Words already right stay."""
    runs = [m for m in _NON_ASCII_RUN.finditer(text) if len(m.group(0)) >= 2]
    if not runs:
        return text
    for codec in _MOJIBAKE_CODECS:
        fixed = _decoded(runs, codec)
        if fixed is None:
            continue
        good = sum(len(f) - f.count("\ufffd") for _, f in fixed)
        lost = sum(f.count("\ufffd") for _, f in fixed)
        if good >= max(1, 2 * lost) and any(not f.isascii() and len(f) < len(m.group(0)) for m, f in fixed):
            out, pos = [], 0
            for m, f in fixed:
                if len(f) < len(m.group(0)) and len(f) > f.count("\ufffd"):
                    out += [text[pos : m.start()], f.replace("\ufffd", "")]
                    pos = m.end()
            return "".join(out) + text[pos:]
    return text


def _decoded(runs: list[re.Match[str]], codec: str) -> list[tuple[re.Match[str], str]] | None:
    try:
        return [(m, _encode(m.group(0), codec).decode("utf-8", errors="replace")) for m in runs]
    except UnicodeEncodeError:
        return None


def _encode(run: str, codec: str) -> bytes:
    """`run` in `codec`; a C1 control character (U+0080-U+009F) stands for its own byte, as Windows shows
    the bytes cp1251/cp1252 leave undefined (the second byte of UTF-8's И is 0x98)."""
    try:
        return run.encode(codec)
    except UnicodeEncodeError:
        if codec not in ("cp1251", "cp1252", "gbk"):
            raise
    return b"".join(
        bytes([ord(c)]) if "\x80" <= c <= "\x9f" else b"\xff" if c == "\ufffd" else c.encode(codec) for c in run
    )
