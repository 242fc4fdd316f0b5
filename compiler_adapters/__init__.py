"""Adapters between the context compiler and the retrieval libraries Python services use:
each compiles what a retriever found against a verified bundle's contract and passes on only
what the packet admits, in its order.

    from compiler_adapters.langchain import EvidenceRetriever        # evidence-compiler[langchain]
    from compiler_adapters.llamaindex import EvidencePostprocessor   # evidence-compiler[llamaindex]

Each adapter module imports its library, so it is installed as an extra; this package's own
names (the problems a retrieved document can have) need neither. The adapters sit above the
compiler's other packages, which never import them (import-linter keeps it so).
"""

from __future__ import annotations

from compiler_adapters._candidates import DocumentProblem, FieldSource, UnusableDocuments

__all__ = ["DocumentProblem", "FieldSource", "UnusableDocuments"]
