"""The front ends: each package talks to users and imports the service and the engine, never another front end."""
