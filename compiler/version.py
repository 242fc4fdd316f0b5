"""The compiler's version, stamped into every output, plan id and bundle manifest."""

COMPILER_VERSION = "0.1.0"
