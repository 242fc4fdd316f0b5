import os
import sys

from compiler import cli

# A compile's objects (a large pool is millions of them) live until the process ends; freeing
# them one by one on the way out costs a fifth of a 100k compile. The process ends with them,
# after flushing what it wrote.
cli.RETAINED_UNTIL_EXIT = []
code = cli.main()
sys.stdout.flush()
sys.stderr.flush()
os._exit(code)
