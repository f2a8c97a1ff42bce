"""The gate: admission checks that run at the one door, in SPEC order (W4)."""

from .admission import CHECK_ORDER, Admission, ClaimResult, OpResult, admit

__all__ = ["CHECK_ORDER", "Admission", "ClaimResult", "OpResult", "admit"]
