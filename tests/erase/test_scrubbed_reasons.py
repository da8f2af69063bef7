"""A thread's failure and the stop it makes keep none of the store's secrets: a driver's error may
echo the DSN, and the reasons are scrubbed where every operation's steps are run
(changes/steps.scrubbed, called by run_threads and run_jobs), not by each step."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

SECRET = "pw-S3CRET-46"


def _failed(change):
    from symfonic_cli.changes.steps import scrubbed, thread_step
    from symfonic_cli.location import resolve_store
    from symfonic_cli.model.erase import ThreadErasePlan

    location = resolve_store(f"postgresql://support:{SECRET}@127.0.0.1:9/agents")
    plan = ThreadErasePlan("acme:_:s-1", {"checkpoints": 1}, None, None)
    return scrubbed(thread_step(plan, lambda: change(location.url), now=datetime.now(timezone.utc), grace=timedelta(0)),
                    location)


def test_a_failed_thread_says_why_without_the_password():
    from symfonic_cli.errors import StoreError

    def refused(url: str):
        raise StoreError(f"connection to {url} refused")

    outcome, stop = _failed(refused)
    assert outcome.status == "failed" and stop is None
    assert SECRET not in outcome.reason and "support:***@127.0.0.1:9/agents" in outcome.reason, outcome.reason


def test_an_unexpected_error_stops_the_run_without_the_password():
    def crashed(url: str):
        raise RuntimeError(f"lost {url} mid-transaction")

    outcome, stop = _failed(crashed)
    assert stop is not None and stop.reason.startswith("unexpected RuntimeError: lost postgresql://support:***@")
    assert SECRET not in stop.reason + outcome.reason, (stop.reason, outcome.reason)
