"""The toy world: a synthetic family of languages with gold annotation, in the real formats.

Public API (the workflow calls exactly these; see docs/toyworld.md):

    paths = output_paths(spec)        # relative paths generate() writes (cheap, no generation)
    written = generate(spec, out_dir) # writes them all under out_dir, returns their paths
    DEMO_SPEC                         # the demo study's spec (config data.toyworld.preset: demo)
    resolve_spec(section)             # a config section (preset + overrides) -> full spec
    TINY_SPEC                         # a small spec for tests (about a second)
    SPEC_SCHEMA                       # JSON schema (draft 2020-12) of a spec
    validate_spec(spec)               # schema + consistency checks; ValueError names key and fix
"""

from .api import build, generate, output_paths
from .demo import DEMO_SPEC, PRESETS, TINY_SPEC, resolve_spec
from .schema import SPEC_SCHEMA, validate_spec

__all__ = [
    "DEMO_SPEC",
    "PRESETS",
    "SPEC_SCHEMA",
    "TINY_SPEC",
    "build",
    "generate",
    "output_paths",
    "resolve_spec",
    "validate_spec",
]
