"""Shared pieces of the register-database extractors: data model, corrections, TOML output.

Each family module (r5xx.py, vc4.py, evergreen.py, nvidia.py) exposes

    FAMILY: str            # database name, e.g. "r5xx"
    def extract(text: str) -> Database

where `text` is the document after the `[[text]]` corrections were applied. This module applies
`[[patch]]`, `[[drop]]`, `[[add]]`, `[[chipset]]`, `[[chipset_patch]]` and `[[instance]]`
corrections afterwards and writes deterministic TOML.
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
    # The field holds a bus address from this bit of the address up (CP_RB_BASE: 2).
    address_shift: int | None = None
    # The field holds the family's chipset id ([[chipset]] `id`), e.g. nVidia PMC_BOOT_0.
    chipset_id: bool = False
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
    # Chipset range of the layout (envytools notation, names from [[chipset]]): `GT215:GF100`.
    chipsets: str | None = None
    # Which units of a multi-instance block have it (a [[block.unit_class]] name): `V3_PLUS`.
    units: str | None = None
    alias_of: str | None = None
    io_address: int | None = None
    io_stride: int | None = None
    reset: int | None = None
    fields: list[Field] = dataclasses.field(default_factory=list)


@dataclass
class Instance:
    """One place a relative block sits in the register window (a falcon engine), or `count`
    numbered places `stride` apart (per-channel areas, indices `first` .. `first + count`)."""

    name: str
    base: int
    description: str
    source: str
    count: int | None = None
    stride: int | None = None
    first: int | None = None
    chipsets: str | None = None


@dataclass
class UnitClass:
    """A class of units of a relative block that a register may be limited to (falcon
    "v3+ units", "crypto units")."""

    name: str
    description: str


@dataclass
class Block:
    name: str
    description: str
    source: str
    base: int = 0
    relative: bool = False
    instances: list[Instance] = dataclasses.field(default_factory=list)
    unit_classes: list[UnitClass] = dataclasses.field(default_factory=list)


@dataclass
class PciIds:
    vendor: int
    first: int
    last: int
    name: str | None = None


@dataclass
class Chipset:
    """One chip of the family, in the order chipset ranges are written against."""

    name: str
    description: str
    source: str
    # The code the chip reports in a register (nVidia PMC_BOOT_0 chipset), where there is one.
    id: int | None = None
    # Physical address of the register window on SoCs without PCI BARs (V3D).
    mmio_base: int | None = None
    pci: list[PciIds] = dataclasses.field(default_factory=list)


@dataclass
class Database:
    family: str
    title: str
    document: str
    doc_label: str
    chipsets: list[Chipset] = dataclasses.field(default_factory=list)
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
    for kind in ("text", "patch", "add", "drop", "chipset", "chipset_patch", "instance"):
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


def _chipset_from_dict(d: dict) -> Chipset:
    pci = [PciIds(**p) for p in d.get("pci", [])]
    keys = {k: v for k, v in d.items() if k not in ("pci", "reason")}
    return Chipset(pci=pci, **keys)


def _selects(reg: Register, entry: dict) -> bool:
    """Whether a [[patch]] entry's optional selectors (`chipsets`, `units`, `offset`) match."""
    return all(getattr(reg, key) == entry[key] for key in ("chipsets", "units", "offset") if key in entry)


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
        regs = [r for r in regs if _selects(r, entry)]
        if not regs:
            raise ExtractError(f"patch correction selects no register: {entry}")
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

    for entry in corrections.get("chipset", []):
        db.chipsets.append(_chipset_from_dict(entry))

    for entry in corrections.get("chipset_patch", []):
        matches = [c for c in db.chipsets if c.name == entry["chipset"]]
        if not matches:
            raise ExtractError(f"chipset_patch matches no chipset: {entry['chipset']}")
        for chip in matches:
            for key, value in entry.get("set", {}).items():
                if not hasattr(chip, key):
                    raise ExtractError(f"chipset_patch of {chip.name}: unknown key {key}")
                setattr(chip, key, [PciIds(**p) for p in value] if key == "pci" else value)

    for entry in corrections.get("instance", []):
        blocks = [b for b in db.blocks if b.name == entry["block"]]
        if not blocks:
            raise ExtractError(f"instance correction names no block: {entry['block']}")
        keys = {k: v for k, v in entry.items() if k not in ("block", "reason")}
        blocks[0].instances.append(Instance(**keys))


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
    for c in db.chipsets:
        out += ["", "[[chipset]]", f"name = {_s(c.name)}"]
        if c.id is not None:
            out.append(f"id = {_hex(c.id)}")
        if c.mmio_base is not None:
            out.append(f"mmio_base = {_hex(c.mmio_base)}")
        out += [f"description = {_s(c.description)}", f"source = {_s(c.source)}"]
        for p in c.pci:
            out += ["", "[[chipset.pci]]", f"vendor = {_hex(p.vendor)}", f"first = {_hex(p.first)}", f"last = {_hex(p.last)}"]
            if p.name is not None:
                out.append(f"name = {_s(p.name)}")
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
        for u in b.unit_classes:
            out += ["", "[[block.unit_class]]", f"name = {_s(u.name)}", f"description = {_s(u.description)}"]
        for i in sorted(b.instances, key=lambda i: (i.base, i.name)):
            out += ["", "[[block.instance]]", f"name = {_s(i.name)}", f"base = {_hex(i.base)}"]
            if i.count is not None:
                out.append(f"count = {i.count}")
            if i.stride is not None:
                out.append(f"stride = {_hex(i.stride)}")
            if i.first is not None:
                out.append(f"first = {i.first}")
            if i.chipsets is not None:
                out.append(f"chipsets = {_s(i.chipsets)}")
            out += [f"description = {_s(i.description)}", f"source = {_s(i.source)}"]
    block_order = {b.name: i for i, b in enumerate(db.blocks)}
    regs = sorted(
        db.registers,
        key=lambda r: (block_order.get(r.block, 1 << 30), r.offset, r.name, r.chipsets or "", r.units or ""),
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
        for key in ("chipsets", "units", "alias_of"):
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
            if f.address_shift is not None:
                out.append(f"address_shift = {f.address_shift}")
            if f.chipset_id:
                out.append("chipset_id = true")
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
