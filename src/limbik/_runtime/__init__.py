"""limbik's own plumbing, used by every layer: argument validation, batch threads, atomic
file writes and reading the files a caller names. Nothing here is public API."""
