"""What the apps above ask of every worker, registered from their `AppConfig.ready`.

A *stale-work checker* recovers the work a stopped worker left (a run still "running", a
report still "computing", whose heartbeat went stale): `manage.py db_worker` calls every
checker as it starts and then every STALE_WORK_CHECK_SECONDS, and `recover_stale_work()` is
there for commands. A checker locks each row it recovers and checks it is still stale, so
two workers checking at once recover it once; it returns a sentence per row it recovered.

A *housekeeping job* (old runs pruned, say) runs in each long-lived worker as it starts and
then every `every_seconds()`; a `--batch` worker, which drains the queue and exits, runs none.

The registry is keyed by name, so registering again (a second `ready`, in tests) replaces.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class StaleWorkChecker:
    name: str
    recover: Callable[[], Iterable[str]]


@dataclass(frozen=True)
class HousekeepingJob:
    name: str
    run: Callable[[], object]
    every_seconds: Callable[[], float]


_checkers: dict[str, StaleWorkChecker] = {}
_housekeeping: dict[str, HousekeepingJob] = {}


def register_stale_work_checker(name: str, recover: Callable[[], Iterable[str]]) -> None:
    """`recover()` recovers the work of this kind a stopped worker left, and says what it did
    to each (one sentence each; nothing when there was nothing to recover)."""
    _checkers[name] = StaleWorkChecker(name=name, recover=recover)


def register_housekeeping(
    name: str, run: Callable[[], object], *, every_seconds: Callable[[], float]
) -> None:
    """`run()` every `every_seconds()` seconds in each long-lived worker."""
    _housekeeping[name] = HousekeepingJob(name=name, run=run, every_seconds=every_seconds)


def stale_work_checkers() -> list[StaleWorkChecker]:
    return list(_checkers.values())


def housekeeping_jobs() -> list[HousekeepingJob]:
    return list(_housekeeping.values())


def recover_stale_work() -> list[str]:
    """Run every registered checker; what each recovered, in order of registration."""
    return [line for checker in _checkers.values() for line in checker.recover()]
