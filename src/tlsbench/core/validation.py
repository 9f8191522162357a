# SPDX-License-Identifier: Apache-2.0
"""Building blocks shared by the models of user files (plan.py, network/plan.py,
energy/profiles.py), and their error messages: one line per mistake, naming the field."""
from __future__ import annotations

import difflib
import os
from typing import Annotated, Any, Callable, Mapping, Sequence

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from tlsbench.core import spec as specmod


class Strict(BaseModel):
    # strict: TOML has real types, so "100" for an integer is a mistake, not a conversion.
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


# A path a user wrote in a file: `~` and `~user` mean a home folder there as in a shell (which
# never sees the file), never a folder named `~`.
UserPath = Annotated[str, Field(min_length=1), AfterValidator(os.path.expanduser)]


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


# ---------------------------------------------------------------------- error messages
def dotted(loc: Sequence[str | int], raw: Mapping[str, Any], whole: str) -> str:
    """('payload', 0, 'record_size') -> 'payload.record_size' when payload was one table,
    'payload[0].record_size' when it was an array of tables. Parts the file does not have
    (union branch names such as 'str' or 'int') are left out; `whole` names the file itself."""
    parts: list[str] = []
    node: Any = raw
    for item in loc:
        if isinstance(item, int):
            if isinstance(node, list) and parts:
                parts[-1] += f"[{item}]"
                node = node[item] if item < len(node) else None
            continue  # else a shorthand single value wrapped into a list: no index to show
        if isinstance(node, dict):
            parts.append(item)
            node = node.get(item)
    return ".".join(parts) or whole


def inner_model(ann: Any) -> type[BaseModel] | None:
    """The model inside an annotation: `M`, `list[M]`, `M | None`."""
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return ann
    return next((m for a in getattr(ann, "__args__", ()) if (m := inner_model(a)) is not None), None)


def model_at(root: type[BaseModel], loc: Sequence[str | int]) -> type[BaseModel]:
    """The model class whose fields a location's last part belongs to."""
    model = root
    for item in loc[:-1]:
        if isinstance(item, int):
            continue
        field = model.model_fields.get(item)
        if field is None:
            break
        model = inner_model(field.annotation) or model
    return model


def problem(err: Mapping[str, Any], root: type[BaseModel], raw: Mapping[str, Any], whole: str) -> str:
    """One pydantic error as a line: the dotted field, the value and what is allowed."""
    loc = err["loc"]
    path = dotted(loc, raw, whole)
    if err["type"] == "extra_forbidden":
        allowed = list(model_at(root, loc).model_fields)
        close = difflib.get_close_matches(str(loc[-1]), allowed, n=2)
        hint = f"; did you mean {' or '.join(close)}?" if close else ""
        return f"{path}: unknown field{hint} (allowed: {', '.join(allowed)})"
    if err["type"] == "missing":
        return f"{path}: required field is missing"
    msg = str(err["msg"]).removeprefix("Value error, ")
    if isinstance(err["input"], dict):  # a whole-table check: the message names the fields
        return f"{path}: {msg}"
    return f"{path}: {err['input']!r} is not valid: {msg}"
