# SPDX-License-Identifier: Apache-2.0
"""One selection rule for everything a plan picks from what the agents offer: suites from
their SUITES lists, experiments from their HELLO `experiments` (a Catalog says how each
kind is matched, named and explained).

Every library is matched against its own list (names may differ between libraries; IANA
ids, metadata and experiment names do not). Every include/exclude reference must match an
item of at least one library, and every library must keep at least one item: a typo, or a
library that would silently contribute nothing, is an error, not an empty run."""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Callable, Generic, Mapping, Sequence, TypeVar

from tlsbench.plan.model import PlanError

Item = TypeVar("Item")
Ref = TypeVar("Ref")


@dataclass(frozen=True)
class Catalog(Generic[Item, Ref]):
    """How one kind of offered item is selected and how a failed selection is explained."""

    section: str  # the plan section errors point at: "suites", "experiments"
    matches: Callable[[Ref, Item], bool]  # a reference (name, pattern, id) against one item
    name: Callable[[Item], str]
    close_key: Callable[[Ref], str]  # a reference as compared with the names for "close matches"
    unmatched: Callable[[str, str], str]  # (where, names) -> the tail of a line about a reference matching nothing
    empty: Callable[[str, int], str]  # (library, items offered) -> why its selection is empty and what to do


def agents_phrase(libraries: Sequence[str] | Mapping[str, object]) -> str:
    """Where a selection found nothing, named (a device's build says which it is: the target's
    default may not be the library the user had in mind): "mbedtls@2.28", or "any of the
    agents (a, b)"."""
    names = list(libraries)
    return names[0] if len(names) == 1 else f"any of the agents ({', '.join(names)})"


def _unmatched(catalog: Catalog[Item, Ref], field: str, refs: Sequence[Ref], pooled: Sequence[Item],
               where: str) -> list[str]:
    names = sorted({catalog.name(item) for item in pooled})
    problems = []
    for ref in refs:
        if not any(catalog.matches(ref, item) for item in pooled):
            close = difflib.get_close_matches(catalog.close_key(ref), names, n=3, cutoff=0.5)
            hint = f"; close matches: {', '.join(close)}" if close else ""
            problems.append(f"{catalog.section}.{field}: {ref!r} matches no {catalog.unmatched(where + hint, ', '.join(names))}")
    return problems


def select(catalog: Catalog[Item, Ref], include: Sequence[Ref], exclude: Sequence[Ref],
           offers: Mapping[str, Sequence[Item]], source: str, keep: Callable[[Item], bool] = lambda item: True,
           more_problems: Callable[[Sequence[Item], str], list[str]] = lambda pooled, where: []
           ) -> dict[str, list[Item]]:
    """Per library, its items that match an include reference and no exclude reference and
    that `keep` keeps, in the agent's order; PlanError (of plan `source`) listing every
    reference that matches nothing anywhere (`more_problems` adds the kind's own), else
    every library left with nothing."""
    pooled = [item for items in offers.values() for item in items]
    where = agents_phrase(offers)
    problems = (_unmatched(catalog, "include", include, pooled, where)
                + _unmatched(catalog, "exclude", exclude, pooled, where) + more_problems(pooled, where))
    if problems:
        raise PlanError(source, problems)
    chosen = {library: [item for item in items
                        if any(catalog.matches(ref, item) for ref in include)
                        and not any(catalog.matches(ref, item) for ref in exclude) and keep(item)]
              for library, items in offers.items()}
    empty = [library for library, items in chosen.items() if not items]
    if empty:
        raise PlanError(source, [f"{catalog.section}: the selection is empty for library {library} "
                                 f"{catalog.empty(library, len(offers[library]))}" for library in empty])
    return chosen
