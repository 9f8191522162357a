# SPDX-License-Identifier: Apache-2.0
"""The handshake matrix: a plan's suite selection against each library's SUITES list, then
every cell (library × suite × group × credential × payload × network variant) that applies
becomes a configuration; cells that cannot apply are counted, not silently dropped."""
from __future__ import annotations

import fnmatch
import functools
import itertools
import json
from typing import Any, Mapping, Sequence

from tlsbench.core import spec as specmod
from tlsbench.plan.configs import Configuration, Resolution
from tlsbench.plan.libraries import agent_name
from tlsbench.core import recommendations
from tlsbench.plan.model import ALL, LoadedPlan, SuiteSelection
from tlsbench.plan.network import NetworkPlan, Variant, variants
from tlsbench.plan.select import Catalog, select
from tlsbench.schema import ConfigRow

Suite = Mapping[str, Any]  # one entry of an agent's SUITES list (docs/protocol.md)
# Suite filters of a plan -> the SUITES entry key each one reads. `protocol` is the version
# a configuration runs: every backend pins a suite's highest version (its max_version).
METADATA_FILTERS = {"key_exchange": "key_exchange", "authentication": "authentication", "cipher": "cipher",
                    "mac": "mac", "min_version": "min_version", "max_version": "max_version",
                    "protocol": "max_version"}


def _names_key(text: str) -> str:
    """Names compare case-insensitively with '-' and '_' alike, so mbed TLS names
    (TLS-ECDHE-...) and IANA names (TLS_ECDHE_..., OpenSSL and wolfSSL) select the same
    suites. Not inside a pattern's [...] class, where '-' is a range."""
    return text.upper() if "[" in text else text.upper().replace("-", "_")


# Suite references that name a status of spec/recommendations.toml: `suites = "current"` measures
# what a new device may pick (recommended and other suites), never the obsolete ones.
BY_STATUS = {"recommended": {recommendations.RECOMMENDED},
             "current": {recommendations.RECOMMENDED, recommendations.OTHER},
             "obsolete": {recommendations.OBSOLETE}}


def suite_matches(ref: str | int, suite: Suite) -> bool:
    """A reference is "all", a status (BY_STATUS), an IANA id (int or "0x..."), a name or an
    fnmatch pattern."""
    if isinstance(ref, int):
        return suite["id"] == ref
    if ref.lower() == ALL:
        return True
    if ref.lower() in BY_STATUS:  # spec/recommendations.toml: "recommended", "current", "obsolete"
        return recommendations.load().status(suite).name in BY_STATUS[ref.lower()]
    if ref.lower().startswith("0x"):
        try:
            return suite["id"] == int(ref, 16)
        except ValueError:
            return False
    return fnmatch.fnmatchcase(_names_key(suite["name"]), _names_key(ref))


SUITES: Catalog[Suite, str | int] = Catalog(
    "suites", suite_matches, lambda suite: str(suite["name"]), lambda ref: str(ref).upper(),
    lambda where, names: f"suite of {where} (`tlsbench suites --library NAME` lists a library's; a device's "
                         "other builds: `tlsbench suites --device TARGET --library BUILD`)",
    lambda library, offered: f"(include minus exclude, then the metadata filters, leaves none of its suites); "
                             f"widen it or remove {library} from libraries (`tlsbench suites --library {library}` "
                             "lists its suites)")


def _metadata_problems(sel: SuiteSelection, suites: Sequence[Suite], where: str) -> list[str]:
    problems = []
    for name, key in METADATA_FILTERS.items():
        known = sorted({str(s.get(key, "")) for s in suites})
        for value in getattr(sel, name):
            if not any(fnmatch.fnmatchcase(k.upper(), value.upper()) for k in known):
                problems.append(f"suites.{name}: {value!r} matches no suite of {where}; they have: {', '.join(known)}")
    return problems


def _passes_filters(sel: SuiteSelection, suite: Suite) -> bool:
    return all(not getattr(sel, name) or any(fnmatch.fnmatchcase(str(suite.get(key, "")).upper(), v.upper())
                                             for v in getattr(sel, name))
               for name, key in METADATA_FILTERS.items())


def select_per_library(loaded: LoadedPlan, suites_by_library: Mapping[str, Sequence[Suite]]
                       ) -> dict[str, list[Suite]]:
    """Per library, its suites the plan selects, in the agent's order (plan/select.py)."""
    sel = loaded.plan.suites
    assert sel is not None
    return select(SUITES, sel.include, sel.exclude, suites_by_library, loaded.source,
                  keep=lambda suite: _passes_filters(sel, suite),
                  more_problems=lambda pooled, where: _metadata_problems(sel, pooled, where))


def select_suites(loaded: LoadedPlan, suites: Sequence[Suite]) -> list[Suite]:
    """The selection against one agent's SUITES (the plan's first library)."""
    return select_per_library(loaded, {loaded.plan.libraries[0]: suites})[loaded.plan.libraries[0]]


# ---------------------------------------------------------------------- configurations
TLS13 = "TLS1.3"
PSK = "psk"
# RUN options that mean something only with some suites and credentials (spec [options]): the
# cells they cannot apply to are counted, not run (an agent would refuse them one by one).
OPTION_NEEDS = {
    "PSK_ONLY": (lambda suite, cred, chosen: cred == PSK and suite["max_version"] == TLS13,
                 "PSK_ONLY needs the psk credential and a TLS 1.3 suite"),
    "RESUME_ID": (lambda suite, cred, chosen: "RESUME" in chosen and suite["max_version"] != TLS13,
                  "RESUME_ID needs RESUME and a TLS 1.2 suite"),
    "MUTUAL_AUTH": (lambda suite, cred, chosen: cred != PSK, "MUTUAL_AUTH needs a certificate credential"),
}


CID_NEEDS_DTLS = "CONNECTION_ID needs DTLS"


def options_misfit(chosen: Sequence[str], suite: Suite, cred: str) -> str | None:
    """Why a set of RUN options cannot apply to a suite and credential (None: it can)."""
    return next((why for option, (fits, why) in OPTION_NEEDS.items()
                 if option in chosen and not fits(suite, cred, chosen)), None)


def group_applies(key_exchange: str, group: int) -> bool:
    """Whether a suite's key exchange takes the group (spec [key_exchange])."""
    return specmod.load().group_applies(key_exchange, group)


def cell_name(library: str, suite: str, *fields: str) -> str:
    """A matrix cell that fell out before it became a configuration: the leading fields of
    the keys it would have had."""
    return "|".join((agent_name(library), suite, *fields))


def config_key(library: str, suite: str, grp: str, credential: str, transport: str, direction: str,
               total_bytes: int, record_size: int, options: Sequence[str] = (), variant: Variant | None = None) -> str:
    """The key names the library by its agent (openssl-3.5 for openssl@3.5): keys stay what
    they were before `name@version`, so stored experiments resume."""
    key = f"{agent_name(library)}|{suite}|{grp}|{credential}|{transport}|{direction}|{total_bytes}|{record_size}"
    key += "".join(f"|{o}" for o in sorted(options))  # no suffix without options: keys stay stable
    return key + (f"|net:{variant.key()}" if variant else "")


def network_options(net: NetworkPlan, variant: Variant) -> list[str]:
    """The spec [options] a network configuration sets (RUN option bits)."""
    wanted = {"NODELAY": variant.transport == "tcp" and not variant.nagle,
              "QUICKACK": variant.transport == "tcp" and net.quickack,
              "DTLS_COOKIES": variant.transport == "udp" and net.dtls.cookies}
    return [name for name, on in wanted.items() if on]


def network_columns(variant: Variant, library: str) -> tuple[str, str, str, str]:
    """network_json, device_role, peer_library, link_label of a config row."""
    described = variant.describe()
    return (json.dumps(described, sort_keys=True), variant.device_role, variant.peer_library or library,
            described["link_label"])


def resolve(loaded: LoadedPlan, suites_by_library: Mapping[str, Sequence[Suite]]) -> Resolution:
    """The plan's matrix (library × suite × group × credential × payload) against each
    library's SUITES. Reasons are prefixed with the library when the plan has several."""
    out = Resolution()
    if loaded.plan.suites is None:  # a plan of experiments only
        return out
    seen: set[str] = set()
    several = len(suites_by_library) > 1
    for library, chosen in select_per_library(loaded, suites_by_library).items():
        prefix = f"{library}: " if several else ""
        for suite in chosen:
            _resolve_suite(loaded, library, suite, prefix, out, seen)
    return out


def _resolve_suite(loaded: LoadedPlan, library: str, suite: Suite, prefix: str, out: Resolution,
                   seen: set[str]) -> None:
    """The cells of one suite of one library: group × credential × payload."""
    s, plan = specmod.load(), loaded.plan
    usable = list(suite.get("credentials", []))
    cell = functools.partial(cell_name, library, suite["name"])
    if not usable:
        out.skip(cell(), f"{prefix}not runnable in this agent: "
                         f"{suite.get('why_unsupported') or 'no usable credential in this agent'}")
        return
    for grp in plan.groups:
        if not group_applies(suite["key_exchange"], s.groups.value(grp)):
            out.skip(cell(grp), f"{prefix}group {grp} does not apply to {suite['key_exchange']} key exchange")
            continue
        for wanted in plan.credentials:
            cred = usable[0] if wanted == s.credentials.name(s.credentials.auto) else wanted
            if cred not in usable:
                out.skip(cell(grp, cred), f"{prefix}credential {cred} not usable by the suite")
                continue
            for chosen in plan.options:
                why = options_misfit(chosen, suite, cred)
                if why:
                    out.skip(cell(grp, cred, *sorted(chosen)), f"{prefix}{why}")
                    continue
                _add_cells(loaded, library, suite, (grp, cred, chosen), prefix, out, seen)


def _add_cells(loaded: LoadedPlan, library: str, suite: Suite, cell: tuple[str, str, Sequence[str]], prefix: str,
               out: Resolution, seen: set[str]) -> None:
    """The cells of one (suite, group, credential, option set): payload × network variant."""
    s, plan = specmod.load(), loaded.plan
    grp, cred, chosen = cell
    for pay, variant in itertools.product(plan.payload, variants(plan.network) if plan.network else [None]):
        transport = variant.transport if variant else plan.transport
        options = [*chosen, *(network_options(plan.network, variant) if variant else [])]
        key = config_key(library, suite["name"], grp, cred, transport, pay.direction,
                         pay.total_bytes, pay.record_size, options, variant)
        if variant and variant.protocol == "dtls" and not suite.get("dtls", True):
            out.skip(key, f"{prefix}suite not usable over DTLS")
            continue
        # DTLS is a udp variant, or a device's protocol (placed later: plan/resolve.py)
        if "CONNECTION_ID" in options and (variant.protocol != "dtls" if variant else plan.device is None):
            out.skip(key, f"{prefix}{CID_NEEDS_DTLS}")
            continue
        if key in seen:  # e.g. "auto" and the credential it resolves to
            continue
        seen.add(key)
        bits = sum(s.options.value(o) for o in options)
        row = ConfigRow(key, library, suite["id"], suite["name"], suite["key_exchange"],
                        suite["authentication"], suite["cipher"], suite["mac"],
                        suite["min_version"], suite["max_version"], grp, cred, transport,
                        pay.direction, pay.total_bytes, pay.record_size, plan.repetitions, bits,
                        *(network_columns(variant, library) if variant else ()))
        out.configs.append(Configuration(row, suite["id"], s.groups.value(grp), s.credentials.value(cred),
                                         s.directions.value(pay.direction),
                                         s.transports.value(transport), bits, variant))
