"""The toy's configuration: there is none (one machine model), so configure() refuses every key.

A real ISA names its machine models here (x86_amx: the CPU models and their CPUID features; arm_sme: the
SVL and the features; ascend_cube: the chips) and completes a configuration with its defaults."""

from __future__ import annotations

from isasim.core.errors import ConfigError


def configure(name: str, config: dict | None) -> dict:
    if config:
        raise ConfigError(f"unknown {name} config key(s): {', '.join(sorted(map(repr, config)))} ({name} has none)")
    return {}
