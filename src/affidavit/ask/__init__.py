"""Ask: answers whose every sentence is a checked citation (SPEC W8)."""

from .answer import Answer, Asker, check_reply, render_answer

__all__ = ["Answer", "Asker", "check_reply", "render_answer"]
