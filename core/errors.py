"""The one exception hierarchy. Library code raises these; only the CLI turns them into exit codes."""


class ChangeprovError(Exception):
    """Base class of every error changeprov raises on purpose."""


class InputError(ChangeprovError, ValueError):
    """Input the user gave us (a file, a parameter, an event) is not what it must be."""


class ConfigError(ChangeprovError):
    """The environment or configuration cannot run the request (e.g. no Java, bad option)."""


class StoreError(ChangeprovError):
    """A triple store or SPARQL endpoint refused or failed an operation."""


class SparkError(ChangeprovError):
    """Spark could not start or a Spark job failed (the first line of Spark's own message)."""
