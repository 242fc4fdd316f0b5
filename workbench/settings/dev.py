"""Local development: `make run` serves this on 127.0.0.1:8000."""

from __future__ import annotations

from .base import *  # noqa: F403
from .base import env_flag

DEBUG = env_flag("DJANGO_DEBUG", default=True)
