"""Process plumbing: settings, secrets, shared limits, LLM backends."""
