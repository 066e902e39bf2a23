"""The service layer behind assistant.api: resolve names (models, GPUs, offers), then call the pure tools."""
