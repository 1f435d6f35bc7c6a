"""The one way diskq writes to a terminal: every command's consoles come from :func:`console`
(:func:`diskq.cli.app.stderr_console`, :func:`~diskq.cli.app.stdout_console`) and every plain
line goes through :func:`say`.

Text from data (a hostname in a cluster output, a drive model in a fleet document or a
downloaded devices.db, a file name) reaches the terminal as text only:

* control characters are removed from every piece of text as it is written: escape sequences
  (clear screen, cursor moves, a clipboard write with OSC 52, a title change), carriage returns
  and backspaces that would overwrite a line already shown, C1 controls, and the bidirectional
  overrides that reorder what is shown; rich's own styling and cursor control are kept;
* rich markup is off unless a print asks for it (``markup=True``), and a print that asks for it
  escapes every value it interpolates (:func:`rich.markup.escape`); hyperlinks are never written,
  whatever asked for them.
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Iterable

#: C0 controls but tab and newline, DEL, C1 controls, and the bidirectional embeddings, overrides
#: and isolates (U+202A-U+202E, U+2066-U+2069) and marks (U+200E, U+200F, U+061C).
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")


def clean(text: str) -> str:
    """``text`` without the characters a terminal would act on rather than show.

    >>> clean("model\\x1b]52;c;cm0gLXJmIH4=\\x07 ok\\x1b[2J\\r")
    'model]52;c;cm0gLXJmIH4= ok[2J'
    >>> clean("line one\\n\\tline two")
    'line one\\n\\tline two'
    """
    return _CONTROL.sub("", text)


@functools.lru_cache(maxsize=1)
def _console_class():
    """:class:`rich.console.Console` made safe (built on first use: rich is not imported by the
    commands that print plain lines, such as ``diskq lookup``)."""
    from rich.console import Console
    from rich.segment import Segment

    class TerminalConsole(Console):
        """A rich console that writes text segments through :func:`clean`, drops hyperlinks, and
        interprets markup only where a print asks for it (``markup=True``)."""

        def __init__(self, *args, **kwargs):
            kwargs.setdefault("markup", False)
            super().__init__(*args, **kwargs)

        def _render_buffer(self, buffer: Iterable) -> str:  # the one place segments become output
            return super()._render_buffer(_clean_segments(buffer, Segment))

    return TerminalConsole


def console(**kwargs):
    """A :class:`rich.console.Console` whose text is cleaned (see the module's docstring);
    markup off unless ``markup=True``."""
    return _console_class()(**kwargs)


def _clean_segments(buffer: Iterable, segment_type) -> Iterable:
    for segment in buffer:
        text, style, control = segment
        if control:  # rich's own cursor and screen control, never text from data
            yield segment
            continue
        if style is not None and style.link:
            style = style.update_link(None)
        yield segment_type(clean(text), style, control)


def say(text: str, *, err: bool = True) -> None:
    """Write one plain line (no rich) to stderr, or stdout with ``err=False``, through :func:`clean`."""
    stream = sys.stderr if err else sys.stdout
    print(clean(str(text)), file=stream)


def json_text(text: str) -> str:
    """A JSON document with the characters :func:`clean` removes written as ``\\u`` escapes
    (``json.dumps`` escapes C0 controls itself; with ``ensure_ascii=False`` it leaves DEL, C1 and
    the bidirectional controls raw). Those characters only occur inside JSON strings, where the
    escape means the same character, so the document's meaning is unchanged."""
    return _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
