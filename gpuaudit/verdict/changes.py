"""How a finding changed between two scans: the one classification every comparison uses.

The baseline summary (gpuaudit.jobs.outcome), `gpuaudit diff` (gpuaudit.jobs.diff) and the
history's changes since the last scan (gpuaudit.jobs.history.track) all ask it, so that
they count alike. A waiver accepts a failure, it does not resolve it: a finding that
went from open to waived is "newly waived", never "resolved"; one waived before and
open now (its waiver expired or was removed) is "waiver expired", not "new".
"""

from __future__ import annotations

from typing import Literal

from gpuaudit.results import OPEN_STATUSES

Change = Literal["new", "resolved", "newly_waived", "waiver_expired", "unchanged"]
# In the order the outputs list them.
CHANGES: tuple[Change, ...] = ("new", "resolved", "newly_waived", "waiver_expired", "unchanged")
WAIVED = "waived"


def change(before: str | None, now: str | None) -> Change | None:
    """The change of a finding whose status was ``before`` and is ``now`` (a finding's
    status; None where the scan has no such finding). Open is failed or not proven:

    - open then and now: unchanged (still failing, or still not proven);
    - open then, waived now: newly waived; open then, passing or gone now: resolved;
    - waived then, open now: waiver expired; otherwise open now: new;
    - neither open then nor now: None, nothing to count.
    """
    was_open, is_open = before in OPEN_STATUSES, now in OPEN_STATUSES
    if was_open:
        if is_open:
            return "unchanged"
        return "newly_waived" if now == WAIVED else "resolved"
    if is_open:
        return "waiver_expired" if before == WAIVED else "new"
    return None
