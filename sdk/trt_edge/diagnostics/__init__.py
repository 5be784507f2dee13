"""Showing manifest diagnostics to people: plain lines for logs and pipes, rich on a terminal."""
