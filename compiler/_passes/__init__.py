"""compiler/_passes."""
