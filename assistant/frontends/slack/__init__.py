"""The team Slack bot."""
