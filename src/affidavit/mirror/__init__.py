"""Markdown and git as a mirror of a vault on PostgreSQL (issue 26 item 4): ``affidavit mirror``
renders each batch above the mirror's last ``Affidavit-Batch`` trailer with the renderer SQLite
vaults use, and commits it (:func:`mirror`); :func:`check` proves mirror = database."""

from __future__ import annotations

from .run import CheckReport, HandEdit, MirrorReport, check, mirror

__all__ = ["CheckReport", "HandEdit", "MirrorReport", "check", "mirror"]
