"""Migration tests' one move: the database to some migrations, and the models as they are
there."""

from __future__ import annotations

from django.apps.registry import Apps
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

Target = tuple[str, str | None]  # (app label, migration name); None: none of the app's


def migrate_to(*targets: Target) -> Apps:
    """To each of `targets`, or every app to its latest migration with none; the historical
    models at the targets that name a migration (`apps.get_model`)."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    chosen = list(targets) or executor.loader.graph.leaf_nodes()
    executor.migrate(chosen)
    return executor.loader.project_state([t for t in chosen if t[1] is not None]).apps
