"""Bytes that are not text whatever their name says: executables, archives, images, NUL bytes,
too many control characters (the source store refuses them with the reason)."""

from __future__ import annotations

__all__ = ["MAX_CONTROL_RATIO", "binary_reason"]

_MAGIC = (
    (b"\x7fELF", "an ELF executable or library"),
    (b"MZ", "a Windows (PE) executable"),
    (b"\xfe\xed\xfa\xce", "a Mach-O executable"),
    (b"\xfe\xed\xfa\xcf", "a Mach-O executable"),
    (b"\xce\xfa\xed\xfe", "a Mach-O executable"),
    (b"\xcf\xfa\xed\xfe", "a Mach-O executable"),
    (b"\xca\xfe\xba\xbe", "a Mach-O universal binary or Java class"),
    (b"PK\x03\x04", "a zip archive (also .docx, .xlsx, .jar, .epub)"),
    (b"PK\x05\x06", "an empty zip archive"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-zip archive"),
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"SQLite format 3\x00", "an SQLite database"),
)
_TEXT_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")
_CONTROL = frozenset(range(0x20)) - {0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x1B} | {0x7F}
_SNIFF_BYTES = 65_536
MAX_CONTROL_RATIO = 0.05
"""Share of control bytes (other than tab, newlines, form feed, escape) past which bytes are binary."""


def binary_reason(data: bytes) -> str | None:
    """Why ``data`` is not text whatever its name says (an executable, an archive, NUL bytes, too
    many control characters), or None. UTF-16 text with a byte-order mark is text."""
    if data.startswith(_TEXT_BOMS):
        return None  # decoded by its BOM (UTF-16 holds NUL bytes by design)
    for magic, what in _MAGIC:
        if data.startswith(magic) and (magic != b"MZ" or b"\x00" in data[:1024]):
            return f"it is {what}"
    head = data[:_SNIFF_BYTES]
    if b"\x00" in head:
        return f"it holds NUL bytes (the first at byte {head.index(0)})"
    control = sum(1 for byte in head if byte in _CONTROL)
    if head and control / len(head) > MAX_CONTROL_RATIO:
        return f"{control / len(head):.0%} of its first {len(head):,} bytes are control characters"
    return None
