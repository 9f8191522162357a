# SPDX-License-Identifier: Apache-2.0
"""Building blocks shared by the plan's models (plan.py, network/plan.py)."""
from __future__ import annotations

from typing import Any, Callable

from pydantic import BaseModel, ConfigDict

from tlsbench import spec as specmod


class Strict(BaseModel):
    # strict: TOML has real types, so "100" for an integer is a mistake, not a conversion.
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


def as_list(value: Any) -> Any:
    """`x = "a"` and `x = ["a"]` mean the same."""
    return [value] if isinstance(value, (str, int, float, bool, dict)) else value


def spec_name(table: str) -> Callable[[str], str]:
    """A validator accepting only the names of one spec/protocol.toml section."""

    def check(value: str) -> str:
        names = getattr(specmod.load(), table).names
        if value not in names:
            raise ValueError(f"allowed: {', '.join(names)}")
        return value

    return check


def no_duplicates(value: list[Any]) -> list[Any]:
    dups = sorted({str(v) for v in value if value.count(v) > 1})
    if dups:
        raise ValueError(f"listed twice: {', '.join(dups)}")
    return value
