"""Redactors: one module per rule family, looked up by versioned name."""
