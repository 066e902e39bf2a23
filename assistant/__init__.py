"""Everything that talks to a user or a language model: CLI, API, router, front-end glue."""
