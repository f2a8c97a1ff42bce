"""Issue 24 item 5: topic pages are things. Reproduced first on a document of our own whose
interface words, e-mail header fields and generic nouns recur as often as its one real subject."""

from __future__ import annotations

from affidavit.extractive.analysis import _units
from affidavit.extractive.topics import find_topics
from affidavit.providers.base import IngestTask

MAIL = """# Mail

Date: Fri, 5 Nov 2021 10:00:00 +0100 was set by the sender of the patch.
The header said Date: Fri, 12 Nov 2021 and the body was a patch of the working tree.
Another header said Date: Fri, 19 Nov 2021 for the next patch of the working tree.
Click Edit to change the entry, then Edit again to save it in the working tree.
Press Edit when the list shows an Empty list or a Boolean value for the working tree.
An Empty list is shown when no Boolean value is set in the working tree.
Every Empty list and Boolean value stays in the working tree until Edit is pressed.
The Linux Foundation hosts the project, and the Linux Foundation pays for the servers.
Each year the Linux Foundation publishes a report on the working tree.
Members of the Linux Foundation vote on its budget every spring.
"""


def test_interface_words_header_fields_and_generic_nouns_are_no_topics() -> None:
    task = IngestTask("n" * 16, "0" * 64, "mail.md", MAIL, 0, 0, 1)
    units, _ = _units(task)
    titles = [t.title for t in find_topics(units, {}, 10, text=MAIL)]
    for noise in ("Fri", "Nov", "Date", "Edit", "Empty list", "Boolean value"):
        assert noise not in titles, titles
    assert "Linux Foundation" in titles and "Working tree" in titles, titles
