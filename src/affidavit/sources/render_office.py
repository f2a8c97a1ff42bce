"""Which words of a Word or OpenDocument text a reader sees, decided by rendering (W12, issue 27).

The rules of :mod:`.word` and :mod:`.opendocument` flag what they know hides text (``w:vanish``,
white or tiny runs, comments, tracked deletions, hidden sections). Then the document is laid out
by the program its reader opens it with — LibreOffice (Debian's ``libreoffice-writer-nogui``),
headless, exporting PDF — and that PDF goes through the PDF path (:mod:`.render_pdf`: PDFium
rasterises each page and judges each character by its ink); the renderer's characters are mapped
onto the extracted text (:mod:`.align`) and what it drew no readable ink for is flagged.

LibreOffice runs in a child process with its own empty profile in a private temporary folder,
with a time limit (:data:`TIMEOUT_SECONDS`) and no network use (a document's linked images and
fields are not updated: ``--convert-to`` keeps what the file holds). A missing LibreOffice is
:data:`~affidavit.sources.visibility.RULES` with the command that installs it; a conversion that
fails is :class:`~affidavit.sources.render_pdf.RenderFailed` (all of the text flagged).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from .render_pdf import RenderFailed

__all__ = ["INSTALL", "TIMEOUT_SECONDS", "engine", "office_pdf"]

TIMEOUT_SECONDS = 120
INSTALL = "apt install libreoffice-writer-nogui (scripts/apt_install.sh)"
_SUFFIX = {
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": ".docx",
    "application/vnd.oasis.opendocument.text": ".odt",
}


def engine() -> str | None:
    """The LibreOffice program to convert with, or None when it is not installed."""
    return shutil.which("soffice") or shutil.which("libreoffice")


def office_pdf(data: bytes, media_type: str, owner: tuple[int, int] | None = None) -> bytes:
    """``data`` (a ``.docx`` or ``.odt`` document) as LibreOffice exports it to PDF. Raises
    :class:`RenderFailed` (not installed, timed out, no PDF written)."""
    program = engine()
    if program is None:
        raise RenderFailed(f"LibreOffice is not installed: {INSTALL}")
    suffix = _SUFFIX.get(media_type)
    if suffix is None:
        raise RenderFailed(f"LibreOffice is not used for {media_type}")
    with tempfile.TemporaryDirectory(prefix="affidavit-office-") as work:
        folder = Path(work)
        source = folder / f"document{suffix}"
        source.write_bytes(data)
        if owner is not None and os.geteuid() == 0 and owner[0] != 0:
            os.chown(folder, owner[0], owner[1])
            os.chown(source, owner[0], owner[1])
        env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL")}
        env["HOME"] = str(folder)
        command = [
            program,
            "--headless",
            "--norestore",
            "--nolockcheck",
            "--nodefault",
            f"-env:UserInstallation={(folder / 'profile').as_uri()}",
            "--convert-to",
            "pdf",
            "--outdir",
            str(folder),
            str(source),
        ]
        try:
            subprocess.run(
                command,
                env=env,
                cwd=folder,
                capture_output=True,
                timeout=TIMEOUT_SECONDS,
                check=False,
                user=owner[0] if owner is not None and os.geteuid() == 0 else None,
                group=owner[1] if owner is not None and os.geteuid() == 0 else None,
            )
        except subprocess.TimeoutExpired as exc:
            raise RenderFailed(f"LibreOffice took over {TIMEOUT_SECONDS} s") from exc
        except OSError as exc:
            raise RenderFailed(f"LibreOffice could not start ({exc})") from exc
        pdf = folder / "document.pdf"
        if not pdf.is_file() or pdf.stat().st_size == 0:
            raise RenderFailed("LibreOffice wrote no PDF for the document")
        return pdf.read_bytes()
