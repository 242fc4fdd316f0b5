"""Every write to fixtures, scenarios and runs. Views, commands, the task and tests call these.

Like `contracts.services`: keyword-only arguments, the actor's permission on the decision type
checked first, one audit event per change (through the contracts audit service), one
transaction. Editing corpora and scenarios needs the owner's `change_decisiontype`; starting a
run needs that or the reviewer's `review_decisiontype` (a reviewer runs the suite to judge a
version). Problems a person can fix are raised as `ValidationError` with the messages below.

Optimistic locking, as in the contract editor: a scenario and a candidate each carry a
`lock_version`; an edit passes the value its form was opened with (`expected_lock_version`),
the row is locked (`select_for_update`), a stale value raises `contracts.services.EditConflict`
and changes nothing, otherwise the change is applied and the counter incremented.
`expected_lock_version=None` skips the comparison (commands and code that hold no form) but
still increments the counter, so every open form goes stale.

One module per concern, re-exported here (callers write `from scenarios import services`):
`base` (permissions, the lock check), `archive` (archiving and restoring scenarios, corpora
and candidates instead of deleting them; cloning a scenario), `corpora` (the corpus loader,
import), `candidates` (one candidate's edit), `warnings` (values the workbench does not
know), `scenarios` (scenarios and their expectations), `retention` (pruning old runs), `runs`
(start, requeue; the compiling is `scenarios.runner`'s) and `strength` (suite-strength runs and
adding the scenario a surviving mutant asks for; the computing is
`scenarios.strength_runner`'s).
"""

from __future__ import annotations

from django.core.exceptions import ValidationError

from contracts.services import EditConflict
from scenarios.audit import Action
from scenarios.models import SLOT_STATES
from scenarios.runner import RunSuperseded, run_execute

from .archive import (
    CORPUS_ARCHIVED,
    CORPUS_IN_USE,
    candidate_archive,
    candidate_restore,
    corpus_archive,
    corpus_restore,
    scenario_archive,
    scenario_clone,
    scenario_restore,
)
from .base import NOT_ALLOWED, can_edit, can_run
from .candidates import (
    CANDIDATE_IN_USE,
    CONSISTENCY_FIELDS,
    DUPLICATE_CANDIDATE,
    STALE_CANDIDATE,
    candidate_save,
)
from .corpora import (
    CANDIDATE_ID_LIMIT,
    CONTROL_CHARACTER,
    DUPLICATE_CORPUS,
    ID_TOO_LONG,
    corpus_import,
    corpus_read,
    has_control_character,
)
from .retention import PruneReport, runs_prune, runs_to_prune
from .runs import (
    CONTRACT_INVALID,
    MAX_REQUEUES,
    NO_SCENARIOS,
    RUN_STOPPED,
    WRONG_VERSION,
    catalogue_tiers,
    run_requeue_if_stale,
    run_start,
    runs_requeue_stale,
    weak_classes,
)
from .scenarios import (
    DUPLICATE_SCENARIO,
    SCENARIO_FIELDS,
    SCENARIO_REQUEST_FIELDS,
    STALE_SCENARIO,
    UNKNOWN_STATE,
    WRONG_CORPUS,
    scenario_create,
    scenario_take_expected,
    scenario_update,
)
from .strength import (
    ALREADY_ADDED,
    NO_PROPOSAL,
    NO_SUCH_MUTANT,
    NOT_FINISHED,
    NOT_SURVIVING,
    STRENGTH_ALREADY_ACTIVE,
    STRENGTH_STOPPED,
    mutation_run_fail_if_stale,
    mutation_run_start,
    mutation_runs_fail_stale,
    proposal_add,
)
from .warnings import (
    RETIRED_CLASS,
    UNKNOWN_CLASS,
    UNKNOWN_ID,
    UNKNOWN_PROPOSITION,
    candidate_warnings,
    scenario_warnings,
)

__all__ = [
    "CORPUS_ARCHIVED",
    "CORPUS_IN_USE",
    "candidate_archive",
    "candidate_restore",
    "corpus_archive",
    "corpus_restore",
    "scenario_archive",
    "scenario_clone",
    "scenario_restore",
    "ALREADY_ADDED",
    "NO_PROPOSAL",
    "NO_SUCH_MUTANT",
    "NOT_FINISHED",
    "NOT_SURVIVING",
    "STRENGTH_ALREADY_ACTIVE",
    "STRENGTH_STOPPED",
    "mutation_run_fail_if_stale",
    "mutation_runs_fail_stale",
    "mutation_run_start",
    "proposal_add",
    "CANDIDATE_ID_LIMIT",
    "CANDIDATE_IN_USE",
    "CONSISTENCY_FIELDS",
    "CONTRACT_INVALID",
    "CONTROL_CHARACTER",
    "DUPLICATE_CANDIDATE",
    "DUPLICATE_CORPUS",
    "DUPLICATE_SCENARIO",
    "ID_TOO_LONG",
    "MAX_REQUEUES",
    "NOT_ALLOWED",
    "NO_SCENARIOS",
    "RETIRED_CLASS",
    "RUN_STOPPED",
    "SCENARIO_FIELDS",
    "SCENARIO_REQUEST_FIELDS",
    "SLOT_STATES",
    "STALE_CANDIDATE",
    "STALE_SCENARIO",
    "UNKNOWN_CLASS",
    "UNKNOWN_ID",
    "UNKNOWN_PROPOSITION",
    "UNKNOWN_STATE",
    "WRONG_CORPUS",
    "WRONG_VERSION",
    "Action",
    "EditConflict",
    "ValidationError",
    "RunSuperseded",
    "can_edit",
    "can_run",
    "candidate_save",
    "candidate_warnings",
    "corpus_import",
    "corpus_read",
    "has_control_character",
    "run_execute",
    "run_requeue_if_stale",
    "run_start",
    "runs_requeue_stale",
    "PruneReport",
    "runs_prune",
    "runs_to_prune",
    "scenario_create",
    "scenario_take_expected",
    "scenario_update",
    "scenario_warnings",
    "weak_classes",
    "catalogue_tiers",
]
