"""The `gpu-advisor` command line."""
