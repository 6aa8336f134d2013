"""Text that reaches a user: escape what a terminal would act on, decode files with one sentence."""

from __future__ import annotations

import difflib


def printable(text: str) -> str:
    """``text`` with control and other non-printable characters escaped (``\\x1b``, ``\\n``, ``\\u202e``).

    Error messages quote file contents (a PTX line, a trace label, a sweep value); a binary file
    or a crafted one must not move the cursor, recolour or retitle the user's terminal, nor split
    a one-sentence message over lines.
    """
    if text.isprintable():
        return text
    out = []
    for ch in text:
        if ch.isprintable():
            out.append(ch)
        elif ch in "\n\t\r":
            out.append({"\n": "\\n", "\t": "\\t", "\r": "\\r"}[ch])
        else:
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
    return "".join(out)


def decode_utf8(data: bytes, name: str, what: str = "a text file") -> str:
    """``data`` decoded as UTF-8; raises ValueError (one sentence naming the line) if it is not text."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise ValueError(f"{name}:{line}: byte 0x{data[e.start]:02x} is not UTF-8 text, so this is not {what}") from None


def did_you_mean(word: str, options) -> str:
    """``"; did you mean 'x'?"`` for the option closest to a mistyped ``word``, else ``""``."""
    close = difflib.get_close_matches(word, list(options), n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""
