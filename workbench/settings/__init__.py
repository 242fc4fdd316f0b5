"""Settings are split by purpose: `base` (everything), `dev` (runserver) and `test` (pytest)."""
