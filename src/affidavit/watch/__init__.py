"""Following folders (issue 27 item 2): ``affidavit watch`` and the ``watch`` job.

:mod:`.ignore` says which files are sources, :mod:`.state` remembers what was seen across
restarts, :mod:`.changes` is what a change does (the one place source lineage plugs in), and
:mod:`.watcher` ties them to ``watchfiles``.
"""

from .changes import ingest_changed, origin_removed
from .ignore import IgnoreRules
from .state import Manifest
from .watcher import Watcher, WatchError

__all__ = ["IgnoreRules", "Manifest", "WatchError", "Watcher", "ingest_changed", "origin_removed"]
