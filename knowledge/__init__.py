"""Reference data (models, GPUs, guides, prices) and the code that loads it."""
