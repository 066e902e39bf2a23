"""The service layer behind assistant.service.api: resolve names (models, GPUs, offers), then call the pure tools."""
