"""The six passes of a compile, one module each; `compiler._pipeline` runs them in order."""
