"""Text from the store or the input, made safe to print on a terminal.

Catalog names and values are data anyone with write access to OpenMetadata or DataHub chooses: an
escape sequence in a table name could clear the screen, recolour or retitle the terminal, or hide
rows, when printed raw (rv40 M1). Display paths show such characters as ``\\uXXXX``; data formats
(CSV, JSON, N-Triples, Turtle) keep the value as it is, escaped by their own rules.
"""

from __future__ import annotations

import re
import sys
from typing import Callable

# C0 and C1 controls, DEL, the line and paragraph separators (a log viewer or terminal breaks a one-line
# message there: ut46a #5), and the bidirectional controls that reorder what follows them
_INVISIBLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def visible(text: str) -> str:
    """``text`` with control and bidi-override characters written as ``\\uXXXX`` (tab and line feed
    are left to the caller, which knows whether a line may break).

    >>> visible("t\\x1b[2Jx\\u202eabc")
    't\\\\u001B[2Jx\\\\u202Eabc'
    >>> visible("one\\u2028line\\u2029")
    'one\\\\u2028line\\\\u2029'
    >>> visible("plain, ünïcode and\\ttab")
    'plain, ünïcode and\\ttab'
    """
    return _INVISIBLE.sub(lambda m: f"\\u{ord(m.group(0)):04X}", text)


def progress_lines(tag: str) -> Callable[[str], None]:
    """A command's progress: ``[tag] message`` on stderr, each line written in one piece (print writes
    the text and the newline apart, so lines said from two threads could glue: a load's groups, an
    export's stage reports)."""
    def say(message: str) -> None:
        sys.stderr.write(f"[{tag}] {visible(message)}\n")
        sys.stderr.flush()

    return say
