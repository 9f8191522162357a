#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Generate the agent's C headers and the tables of docs/protocol.md from spec/*.toml.

    genspec.py header LABELS.toml PROTOCOL.toml OUT_DIR   -> OUT_DIR/spec_gen.h, layout_gen.h
    genspec.py docs PROTOCOL.toml DOC.md [--check]        -> rewrites DOC.md's generated tables

Stdlib only (tomllib), so building the agent needs no Python packages. The host tool reads
the same files (tlsbench.core.spec); the CRC-32s baked in here let it refuse an agent built from
other specs. spec_gen.h: enumerations, label and name tables, layout sizes and offsets, group
families. layout_gen.h: pack/unpack of the layouts the agent has C structs for (protocol.c
includes it), and compile-time checks that those structs hold every field at its size.
"""
import argparse
import re
import sys
import tomllib
import zlib
from dataclasses import dataclass
from pathlib import Path

# ---------------------------------------------------------------- layouts

# spec type -> (bytes, C type); bytesN is N raw bytes.
SCALARS = {"u8": (1, "uint8_t"), "u16": (2, "uint16_t"), "u32": (4, "uint32_t"), "u64": (8, "uint64_t"),
           "i32": (4, "int32_t")}
# The agent's C type of each layout; frame_header has none (protocol.c reads it field by
# field as bytes arrive), record is shipped as the memory image of tb_record.
C_TYPES = {"run_request": "tb_run_request", "rep_header": "tb_rep_result", "record": "tb_record"}
MEMORY_IMAGE = {"record"}


class SpecError(Exception):
    """The spec contradicts itself (e.g. an offset that is not where the field starts)."""


@dataclass(frozen=True)
class Field:
    name: str
    type: str
    offset: int
    size: int
    doc: str

    @property
    def reserved(self) -> bool:
        return self.name == "reserved"

    @property
    def is_bytes(self) -> bool:
        return self.type.startswith("bytes")


@dataclass(frozen=True)
class Layout:
    name: str
    size: int
    meaning: str
    fields: tuple[Field, ...]


def field_size(layout: str, raw: dict) -> int:
    t = raw["type"]
    if t in SCALARS:
        return SCALARS[t][0]
    if re.fullmatch(r"bytes[1-9][0-9]*", t):
        return int(t[5:])
    raise SpecError(f"[layout.{layout}] {raw['name']}: unknown type {t!r} (u8 u16 u32 u64 i32 bytesN)")


def parse_layout(name: str, raw: dict) -> Layout:
    """Offsets must follow from order and sizes, the total must be `size`, names unique."""
    fields, at, seen = [], 0, set()
    for entry in raw["fields"]:
        size = field_size(name, entry)
        if entry["offset"] != at:
            raise SpecError(f"[layout.{name}] {entry['name']}: offset {entry['offset']}, but the fields "
                            f"before it end at {at}")
        if entry["name"] in seen and entry["name"] != "reserved":
            raise SpecError(f"[layout.{name}] {entry['name']}: declared twice")
        seen.add(entry["name"])
        fields.append(Field(entry["name"], entry["type"], at, size, entry.get("doc", "")))
        at += size
    if at != raw["size"]:
        raise SpecError(f"[layout.{name}] size {raw['size']}, but its fields take {at} bytes")
    return Layout(name, raw["size"], raw.get("meaning", ""), tuple(fields))


def layouts(proto: dict) -> list[Layout]:
    return [parse_layout(name, raw) for name, raw in proto.get("layout", {}).items()]


# ---------------------------------------------------------------- spec_gen.h

def c_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def c_ident(name: str) -> str:
    return re.sub(r"[^A-Z0-9]+", "_", name.upper()).strip("_")


def enum_block(prefix: str, items: dict[str, int]) -> list[str]:
    return [f"#define {prefix}_{c_ident(k)} {v}" for k, v in items.items()]


def name_table(func: str, items: dict[str, int]) -> list[str]:
    """value -> name, NULL when unknown."""
    lines = [f"static inline const char *{func}(unsigned v) {{", "    switch (v) {"]
    lines += [f"    case {v}: return {c_string(k)};" for k, v in items.items()]
    lines += ["    default: return 0;", "    }", "}"]
    return lines


def layout_constants(layout: Layout) -> list[str]:
    prefix = f"TB_{c_ident(layout.name)}"
    out = [f"#define {prefix}_SIZE {layout.size}"]
    out += [f"#define {prefix}_OFFSET_{c_ident(f.name)} {f.offset}" for f in layout.fields if not f.reserved]
    return out


def group_families(proto: dict) -> list[str]:
    """[group_family] as bits and a range lookup; [key_exchange] as a table; [credential_group]."""
    families = proto["group_family"]
    bit = {name: 1 << i for i, name in enumerate(families)}
    groups = proto["group"]
    out = [f"#define TB_GROUP_FAMILY_{c_ident(name)} {bit[name]}u" for name in families]
    out += ["", "/* [group_family]: the family bit of a group value, 0 for none. */",
            "static inline unsigned tb_group_family(unsigned group) {"]
    out += [f"    if (group >= {f['first']} && group <= {f['last']}) return TB_GROUP_FAMILY_{c_ident(name)};"
            for name, f in families.items()]
    out += ["    return 0;", "}", "",
            "/* [key_exchange]: the groups a suite's key exchange takes and what group 0 means. */",
            "typedef struct tb_key_exchange_groups {",
            "    const char *key_exchange; /* SUITES key_exchange, compared case-insensitively */",
            "    unsigned families;        /* TB_GROUP_FAMILY_* bits */",
            "    uint16_t default_group;   /* what group 0 means (0: none, or the credential's) */",
            "    uint8_t by_credential;    /* the group is the credential's key's (tb_credential_group) */",
            "    const char *takes;        /* what fits, for refusals */",
            "} tb_key_exchange_groups;", "",
            "static inline const tb_key_exchange_groups *tb_key_exchange_table(unsigned *count) {",
            "    static const tb_key_exchange_groups table[] = {"]
    for name, k in proto["key_exchange"].items():
        fams = " | ".join(f"TB_GROUP_FAMILY_{c_ident(f)}" for f in k["families"]) or "0"
        by_cred = k["default"] == "credential"
        default = 0 if by_cred else groups[k["default"]]
        out.append(f"        {{{c_string(name)}, {fams}, {default}, {int(by_cred)}, {c_string(k['takes'])}}},")
    out += ["    };", "    *count = sizeof table / sizeof table[0];", "    return table;", "}", "",
            "/* [credential_group]: the group of a credential's key, 0 when it has none. */"]
    creds = proto["credential"]
    out += name_switch("tb_credential_group", "uint16_t",
                       {creds[c]: groups[g] for c, g in proto.get("credential_group", {}).items()})
    return out


def name_switch(func: str, ctype: str, cases: dict[int, int]) -> list[str]:
    lines = [f"static inline {ctype} {func}(unsigned v) {{", "    switch (v) {"]
    lines += [f"    case {k}: return {v};" for k, v in cases.items()]
    lines += ["    default: return 0;", "    }", "}"]
    return lines


def spec_header(labels_raw: bytes, protocol_raw: bytes) -> str:
    labels = tomllib.loads(labels_raw.decode())
    proto = tomllib.loads(protocol_raw.decode())
    categories = list(labels["categories"])
    out = [
        "/* Generated by agent/tools/genspec.py from spec/labels.toml and spec/protocol.toml. */",
        "/* Do not edit: change the spec and rebuild. */",
        "#ifndef TLSBENCH_SPEC_GEN_H",
        "#define TLSBENCH_SPEC_GEN_H",
        "#include <stdint.h>",
        "",
        f"#define TB_LABELS_CRC32 {zlib.crc32(labels_raw)}u",
        f"#define TB_PROTOCOL_CRC32 {zlib.crc32(protocol_raw)}u",
        f"#define TB_PROTOCOL_VERSION {proto['protocol']['version']}",
        f"#define TB_FRAME_MAGIC 0x{proto['protocol']['magic']:04X}u",
        f"#define TB_MAX_PAYLOAD {proto['protocol']['max_payload']}u",
        "",
    ]
    out += enum_block("TB_KIND", labels["kinds"])
    out += enum_block("TB_PEER", labels["peers"])
    out += [f"#define TB_CAT_{c_ident(c)} {i}" for i, c in enumerate(categories)]
    out += ["", "enum tb_label {"]
    out += [f"    TB_L_{l['name']} = {l['id']}," for l in labels["label"]]
    out += ["};", ""]
    out += enum_block("TB_FRAME", {k: v["value"] for k, v in proto["frame"].items()})
    out += enum_block("TB_STATUS", {k: v["value"] for k, v in proto["status"].items()})
    out += enum_block("TB_FLAG", {k: 1 << v["bit"] for k, v in proto["flags"].items()})
    options = {k: 1 << v["bit"] for k, v in proto.get("options", {}).items()}
    out += enum_block("TB_OPTION", options)
    out += [f"#define TB_OPTIONS_KNOWN 0x{sum(options.values()):02X}u"]
    for section in ("direction", "credential", "transport", "group", "role", "protocol_kind"):
        out += enum_block(f"TB_{section.upper()}", proto[section])
    out += enum_block("TB_COLLECT", {k: v["value"] for k, v in proto["collect"].items()})
    out += [f"#define TB_NET_{c_ident(k)} {v}u" for k, v in proto["network"].items()]
    out += ["", "/* Byte layouts ([layout.*]): sizes and field offsets. */"]
    for layout in layouts(proto):
        out += layout_constants(layout)
    out += [""]
    out += name_table("tb_label_name", {l["name"]: l["id"] for l in labels["label"]})
    out += name_table("tb_peer_name", labels["peers"])
    out += name_table("tb_kind_name", labels["kinds"])
    out += name_table("tb_status_name", {k: v["value"] for k, v in proto["status"].items()})
    out += name_table("tb_option_name", options)  # one bit's name
    for section in ("direction", "credential", "transport", "group", "role", "protocol_kind"):
        out += name_table(f"tb_{section}_name", proto[section])
    out += name_table("tb_collect_name", {k: v["value"] for k, v in proto["collect"].items()})
    out += [""] + group_families(proto)
    out += ["", "#endif", ""]
    return "\n".join(out)


# ---------------------------------------------------------------- layout_gen.h

def member_checks(layout: Layout, ctype: str) -> list[str]:
    """Every field is a member of the C struct, of the field's size (and, for a memory
    image, at the field's offset)."""
    out = []
    for f in layout.fields:
        if f.reserved:
            continue
        where = f" && offsetof({ctype}, {f.name}) == {f.offset}" if layout.name in MEMORY_IMAGE else ""
        out.append(f"_Static_assert(sizeof(((const {ctype} *)0)->{f.name}) == {f.size}{where},")
        out.append(f"               {c_string(f'{ctype}.{f.name}: {f.type} at {f.offset} in [layout.{layout.name}]')});")
    if layout.name in MEMORY_IMAGE:
        out.append(f"_Static_assert(sizeof({ctype}) == {layout.size}, {c_string(f'{ctype} is the wire image of [layout.{layout.name}]')});")
    return out


def pack_lines(f: Field) -> str:
    if f.is_bytes:
        return f"    memcpy(out + {f.offset}, v->{f.name}, {f.size});"
    value = f"(uint32_t)v->{f.name}" if f.type == "i32" else f"v->{f.name}"
    return f"    tb_wire_put(out + {f.offset}, {value}, {f.size});"


def unpack_lines(f: Field) -> str:
    if f.is_bytes:
        return f"    memcpy(v->{f.name}, in + {f.offset}, {f.size});"
    ctype = SCALARS[f.type][1]
    cast = f"({ctype})(uint32_t)" if f.type == "i32" else f"({ctype})"
    return f"    v->{f.name} = {cast}tb_wire_get(in + {f.offset}, {f.size});"


def codec(layout: Layout, ctype: str) -> list[str]:
    fn = f"tb_{layout.name}"
    size = f"TB_{c_ident(layout.name)}_SIZE"
    named = [f for f in layout.fields if not f.reserved]
    reserved = [f for f in layout.fields if f.reserved]
    out = [f"/* [layout.{layout.name}] <-> {ctype}: {layout.meaning} */",
           f"static inline void {fn}_pack(const {ctype} *v, uint8_t out[{size}]) {{",
           f"    memset(out, 0, {size}); /* reserved fields */"]
    out += [pack_lines(f) for f in named]
    out += ["}", "", f"static inline void {fn}_unpack(const uint8_t in[{size}], {ctype} *v) {{",
            "    memset(v, 0, sizeof *v);"]
    out += [unpack_lines(f) for f in named]
    out += ["}", "", "/* The offset of the first reserved field that is not 0, or -1. */",
            f"static inline int {fn}_reserved_nonzero(const uint8_t in[{size}]) {{"]
    if not reserved:
        out += ["    (void)in;"]
    for f in reserved:
        out += [f"    for (unsigned i = 0; i < {f.size}; i++)",
                f"        if (in[{f.offset} + i] != 0)", f"            return {f.offset};"]
    out += ["    return -1;", "}", ""]
    return out


def layout_header(protocol_raw: bytes) -> str:
    proto = tomllib.loads(protocol_raw.decode())
    out = [
        "/* Generated by agent/tools/genspec.py from spec/protocol.toml [layout.*]. */",
        "/* Do not edit: change the spec and rebuild. Included by protocol.c only. */",
        "#ifndef TLSBENCH_LAYOUT_GEN_H",
        "#define TLSBENCH_LAYOUT_GEN_H",
        "#include <stddef.h>",
        "#include <stdint.h>",
        "#include <string.h>",
        '#include "tlsbench/protocol.h"',
        "",
        "/* Little-endian integers of n bytes. */",
        "static inline uint64_t tb_wire_get(const uint8_t *p, size_t n) {",
        "    uint64_t v = 0;",
        "    for (size_t i = n; i-- > 0;)",
        "        v = v << 8 | p[i];",
        "    return v;",
        "}",
        "",
        "static inline void tb_wire_put(uint8_t *p, uint64_t v, size_t n) {",
        "    for (size_t i = 0; i < n; i++, v >>= 8)",
        "        p[i] = (uint8_t)v;",
        "}",
        "",
    ]
    for layout in layouts(proto):
        ctype = C_TYPES.get(layout.name)
        if not ctype:
            continue
        out += member_checks(layout, ctype) + [""]
        if layout.name not in MEMORY_IMAGE:
            out += codec(layout, ctype)
    out += ["#endif", ""]
    return "\n".join(out)


# ---------------------------------------------------------------- docs tables

# A generated table in a Markdown file: <!-- spec:NAME --> ... <!-- /spec:NAME -->.
MARKER = re.compile(r"(<!-- spec:([a-z_.]+) -->\n)(.*?)(<!-- /spec:\2 -->)", re.S)


def type_text(f: Field) -> str:
    return f"{f.size} bytes" if f.is_bytes else f.type


def layout_table(layout: Layout) -> str:
    rows = ["| offset | type | name | meaning |", "|-------:|------|------|---------|"]
    rows += [f"| {f.offset} | {type_text(f)} | `{f.name}` | {f.doc} |" for f in layout.fields]
    return "\n".join(rows) + "\n"


def key_exchange_table(proto: dict) -> str:
    families = proto["group_family"]
    rows = ["| key exchange | groups it takes | group 0 (default) means |", "|---|---|---|"]
    for name, k in proto["key_exchange"].items():
        ranges = ", ".join(f"{f} ({families[f]['first']}-{families[f]['last']})" for f in k["families"])
        default = "the credential's key's group" if k["default"] == "credential" else k["default"]
        rows.append(f"| {name} | {ranges or 'only the default'} | {default} |")
    rows.append("| any other (RSA, PSK, ...) | no group | none |")
    return "\n".join(rows) + "\n"


def doc_tables(proto: dict) -> dict[str, str]:
    tables = {f"layout.{l.name}": layout_table(l) for l in layouts(proto)}
    tables["key_exchange"] = key_exchange_table(proto)
    return tables


def render_docs(protocol_raw: bytes, doc: str) -> tuple[str, list[str]]:
    """The doc with every generated table rewritten, and the names of those that changed."""
    tables = doc_tables(tomllib.loads(protocol_raw.decode()))
    changed: list[str] = []

    def replace(m: re.Match) -> str:
        name = m.group(2)
        if name not in tables:
            raise SpecError(f"the doc asks for table {name!r}; the spec has: {', '.join(tables)}")
        if m.group(3) != tables[name]:
            changed.append(name)
        return m.group(1) + tables[name] + m.group(4)

    return MARKER.sub(replace, doc), changed


# ---------------------------------------------------------------- command line

def cmd_header(args: argparse.Namespace) -> int:
    labels_raw, protocol_raw = args.labels.read_bytes(), args.protocol.read_bytes()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / "spec_gen.h").write_text(spec_header(labels_raw, protocol_raw))
    (args.out_dir / "layout_gen.h").write_text(layout_header(protocol_raw))
    return 0


def cmd_docs(args: argparse.Namespace) -> int:
    text = args.doc.read_text()
    new, changed = render_docs(args.protocol.read_bytes(), text)
    if args.check:
        if changed:
            print(f"{args.doc}: generated tables out of date: {', '.join(changed)}; "
                  f"run agent/tools/genspec.py docs {args.protocol} {args.doc}", file=sys.stderr)
            return 1
        return 0
    if new != text:
        args.doc.write_text(new)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    h = sub.add_parser("header", help="write spec_gen.h and layout_gen.h")
    h.add_argument("labels", type=Path)
    h.add_argument("protocol", type=Path)
    h.add_argument("out_dir", type=Path)
    h.set_defaults(run=cmd_header)
    d = sub.add_parser("docs", help="rewrite (or --check) a Markdown file's generated tables")
    d.add_argument("protocol", type=Path)
    d.add_argument("doc", type=Path)
    d.add_argument("--check", action="store_true", help="exit 1 when a table is out of date")
    d.set_defaults(run=cmd_docs)
    args = ap.parse_args()
    try:
        return args.run(args)
    except SpecError as exc:
        print(f"genspec: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
