#!/usr/bin/env python
"""Django's command-line utility for the Evidence Workbench.

Without DJANGO_SETTINGS_MODULE it uses the production profile, which refuses to start without
its environment and names what is missing: a deployment must never fall back to the
development settings (DEBUG, the built-in secret). The Makefile's targets set
`workbench.settings.dev`; by hand, export DJANGO_SETTINGS_MODULE=workbench.settings.dev.
"""

from __future__ import annotations

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "workbench.settings.production")
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        execute_from_command_line(sys.argv)
    except ImproperlyConfigured as error:
        # The message names what to fix; a traceback through Django's loader would bury it.
        sys.exit(str(error))


if __name__ == "__main__":
    main()
