"""Shared pieces of the register-database extractors: data model, corrections, TOML output.

Each family module (r5xx.py, vc4.py, evergreen.py, nvidia.py) exposes

    FAMILY: str            # database name, e.g. "r5xx"
    def extract(text: str) -> Database

where `text` is the document after the `[[text]]` corrections were applied. This module applies
`[[patch]]`, `[[drop]]` and `[[add]]` corrections afterwards and writes deterministic TOML.
Standard library only (Python 3.11+).
"""

from __future__ import annotations

import dataclasses
import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

REGDB_DIR = Path(__file__).resolve().parent.parent
REPO_ROOT = REGDB_DIR.parent.parent
DOCS_DIR = REPO_ROOT.parent / "shared" / "docs"

NAME_RE = re.compile(r"^[A-Z][A-Z0-9_]*$")


@dataclass
class Value:
    name: str
    value: int
    description: str = ""


@dataclass
class Field:
    name: str
    msb: int
    lsb: int
    access: str | None = None
    reset: int | None = None
    description: str = ""
    values: list[Value] = dataclasses.field(default_factory=list)


@dataclass
class Register:
    block: str
    name: str
    offset: int
    description: str
    source: str
    width: int = 32
    access: str = "rw"
    count: int | None = None
    stride: int | None = None
    variant: str | None = None
    alias_of: str | None = None
    io_address: int | None = None
    io_stride: int | None = None
    reset: int | None = None
    fields: list[Field] = dataclasses.field(default_factory=list)


@dataclass
class Block:
    name: str
    description: str
    source: str
    base: int = 0
    relative: bool = False


@dataclass
class Database:
    family: str
    title: str
    document: str
    doc_label: str
    blocks: list[Block] = dataclasses.field(default_factory=list)
    registers: list[Register] = dataclasses.field(default_factory=list)


class ExtractError(Exception):
    pass


# ---------------------------------------------------------------------------------------------
# Corrections


def load_corrections(family: str) -> dict:
    path = REGDB_DIR / "corrections" / f"{family}.toml"
    if not path.exists():
        return {}
    with path.open("rb") as f:
        data = tomllib.load(f)
    for kind in ("text", "patch", "add", "drop"):
        for entry in data.get(kind, []):
            if not entry.get("reason"):
                raise ExtractError(f"{path}: every [[{kind}]] correction needs a reason: {entry}")
    return data


def apply_text_corrections(text: str, corrections: dict) -> str:
    for entry in corrections.get("text", []):
        find, replace = entry["find"], entry["replace"]
        if find not in text:
            raise ExtractError(f"text correction no longer matches the document: {find!r}")
        text = text.replace(find, replace)
    return text


def _field_from_dict(d: dict) -> Field:
    values = [Value(**v) for v in d.get("value", [])]
    keys = {k: v for k, v in d.items() if k != "value"}
    return Field(values=values, **keys)


def _register_from_dict(d: dict) -> Register:
    fields = [_field_from_dict(f) for f in d.get("field", [])]
    keys = {k: v for k, v in d.items() if k not in ("field", "reason")}
    return Register(fields=fields, **keys)


def apply_register_corrections(db: Database, corrections: dict) -> None:
    by_name: dict[str, list[Register]] = {}
    for reg in db.registers:
        by_name.setdefault(reg.name, []).append(reg)

    for entry in corrections.get("drop", []):
        regs = by_name.get(entry["register"])
        if not regs:
            raise ExtractError(f"drop correction matches no register: {entry['register']}")
        for reg in regs:
            db.registers.remove(reg)

    for entry in corrections.get("patch", []):
        regs = by_name.get(entry["register"])
        if not regs:
            raise ExtractError(f"patch correction matches no register: {entry['register']}")
        if "variant" in entry:
            regs = [r for r in regs if r.variant == entry["variant"]]
        for reg in regs:
            for key, value in entry.get("set", {}).items():
                if key == "field":
                    reg.fields = [_field_from_dict(f) for f in value]
                elif not hasattr(reg, key):
                    raise ExtractError(f"patch of {reg.name}: unknown key {key}")
                else:
                    setattr(reg, key, value)
            for fpatch in entry.get("field_patch", []):
                matches = [f for f in reg.fields if f.name == fpatch["field"]]
                if not matches:
                    raise ExtractError(f"field_patch of {reg.name}: no field {fpatch['field']}")
                for fld in matches:
                    for key, value in fpatch.get("set", {}).items():
                        if key == "value":
                            fld.values = [Value(**v) for v in value]
                        else:
                            setattr(fld, key, value)
            drop_fields = set(entry.get("drop_fields", []))
            if drop_fields:
                reg.fields = [f for f in reg.fields if f.name not in drop_fields]

    for entry in corrections.get("add", []):
        db.registers.append(_register_from_dict(entry))


# ---------------------------------------------------------------------------------------------
# Output


def _s(text: str) -> str:
    """A TOML basic string (JSON string escapes are valid TOML)."""
    return json.dumps(text, ensure_ascii=False)


def _hex(v: int) -> str:
    return f"0x{v:x}"


def to_toml(db: Database) -> str:
    out: list[str] = [
        "# GENERATED by hal/regdb/extract/extract.py from the document named below,",
        "# with the reviewed corrections in hal/regdb/corrections/. Do not edit by hand.",
        "",
        "[meta]",
        f"family = {_s(db.family)}",
        f"title = {_s(db.title)}",
        f"document = {_s(db.document)}",
        f"doc_label = {_s(db.doc_label)}",
    ]
    for b in db.blocks:
        out += [
            "",
            "[[block]]",
            f"name = {_s(b.name)}",
            f"description = {_s(b.description)}",
            f"base = {_hex(b.base)}",
            f"relative = {'true' if b.relative else 'false'}",
            f"source = {_s(b.source)}",
        ]
    block_order = {b.name: i for i, b in enumerate(db.blocks)}
    regs = sorted(
        db.registers,
        key=lambda r: (block_order.get(r.block, 1 << 30), r.offset, r.name, r.variant or ""),
    )
    for r in regs:
        out += ["", "[[register]]", f"block = {_s(r.block)}", f"name = {_s(r.name)}"]
        out.append(f"offset = {_hex(r.offset)}")
        out.append(f"width = {r.width}")
        out.append(f"access = {_s(r.access)}")
        for key in ("count",):
            if getattr(r, key) is not None:
                out.append(f"{key} = {getattr(r, key)}")
        for key in ("stride", "io_address", "io_stride", "reset"):
            if getattr(r, key) is not None:
                out.append(f"{key} = {_hex(getattr(r, key))}")
        for key in ("variant", "alias_of"):
            if getattr(r, key) is not None:
                out.append(f"{key} = {_s(getattr(r, key))}")
        out.append(f"description = {_s(r.description)}")
        out.append(f"source = {_s(r.source)}")
        for f in sorted(r.fields, key=lambda f: (f.lsb, f.msb, f.name)):
            out += ["", "[[register.field]]", f"name = {_s(f.name)}", f"msb = {f.msb}", f"lsb = {f.lsb}"]
            if f.access is not None:
                out.append(f"access = {_s(f.access)}")
            if f.reset is not None:
                out.append(f"reset = {_hex(f.reset)}")
            out.append(f"description = {_s(f.description)}")
            for v in sorted(f.values, key=lambda v: (v.value, v.name)):
                out += [
                    "",
                    "[[register.field.value]]",
                    f"name = {_s(v.name)}",
                    f"value = {v.value}",
                    f"description = {_s(v.description)}",
                ]
    return "\n".join(out) + "\n"


def clean_ws(text: str) -> str:
    """Collapse tabs/newlines/multiple spaces left by the PDF extraction."""
    return re.sub(r"\s+", " ", text).strip()
