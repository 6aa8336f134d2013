"""Typer wrappers of the library, one module per area; each exposes ``register(app)``.

The wrappers stay thin: parse options, call the library, print. Library errors that users can
act on (PTXError, TraceError, ConfigError, ...) are turned into one line on stderr, exit 2.
"""
