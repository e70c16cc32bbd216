"""changeprov: metadata change events (OpenMetadata, DataHub) as a PROV-O knowledge graph."""

from importlib.metadata import PackageNotFoundError, version as _version

try:
    __version__ = _version("changeprov")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.0.0+unknown"

from changeprov.errors import ChangeprovError, InputError, ConfigError, SparkError, StoreError  # noqa: E402

__all__ = ["__version__", "ChangeprovError", "InputError", "ConfigError", "StoreError", "SparkError"]
