"""`python -m compiler_tools`, and the `evidence-compiler` script (`main` here)."""

import gc
import sys

from compiler_tools._cli import main as run_command


def main() -> int:
    """Run one command in a process of its own and answer its exit code.

    The process ends after the command. A large compile builds millions of objects that stay
    alive until then and hold no reference cycles, so the cyclic collector would only rescan
    them; reference counting still frees everything. A library caller's process (the web
    server) keeps its collector: `compiler_tools.main` itself leaves it alone.
    """
    gc.disable()
    return run_command()


if __name__ == "__main__":
    sys.exit(main())
