"""VideoCore IV V3D: broadcom-videocore-iv-3d.txt, Section 10 "V3D Registers".

Table 48 (V3D Register Address Map) gives every register's offset, name, description and size.
The register description tables that follow (Table 49 "V3D_CTnCS Register Description" ...
Table 93) give the fields. A per-thread / per-counter table (V3D_CTnXX, V3D_PCTRn, V3D_PCTRSn)
applies to every Table 48 register it describes; the database keeps one register per Table 48
row, each carrying the fields of its description table.

The parser is strict: every line inside Table 48 and inside a description table must be a row,
a continuation line, a header, a heading or blank, every row's bits must tile the register
exactly (fields + reserved rows = 32 bits, no overlap), and every Table 48 register must get
exactly one description table. OCR damage that breaks these rules is repaired by the reviewed
[[text]] corrections in corrections/vc4.toml, not guessed here.

Appendix B, Table 95 ("Base Addresses for V3D Registers") lists the products and the bus address
of their V3D registers: those are the family's chipsets. The V3D block is absolute: its offsets
count from the start of the V3D register window, wherever a platform maps it (the window's CPU
address per chip is the chipset's `mmio_base`, from corrections/vc4.toml).
"""

from __future__ import annotations

import re

import regdb

FAMILY = "vc4"
DOCUMENT = "broadcom-videocore-iv-3d.txt"
DOC_LABEL = "broadcom-videocore-iv-3d"
BLOCK = "V3D"
SECTION = f"{DOC_LABEL} §10"

SECTION_START = "# **Section 10: V3D Registers**"
SECTION_END = "# **Section 11:"
TABLE48_END = "# **V3D Register Definitions**"

# Description tables that describe registers Table 48 does not list. Their registers (offsets
# from outside the document) are supplied by [[add]] entries in corrections/vc4.toml.
ORPHAN_TABLES = {"V3D_DBQITC", "V3D_DBQITE"}

# Per-thread tables: Table 48 spells the CTnRA0 pair V3D_CT00RA0 / V3D_CT01RA0 (the same spelling
# as Broadcom's and Linux's headers); every other CTn table maps to CT0xx / CT1xx.
THREAD_NAMES = {"V3D_CTnRA0": ["V3D_CT00RA0", "V3D_CT01RA0"]}

TYPES = {"R": "r", "W": "w", "R/W": "rw"}
RESERVED_NAMES = {"_", "-"}

CAPTION_RE = re.compile(r"^(?:#+\s*)?(?:\*\*)?Table (\d+):\s*(.*?)(?:\*\*)?\s*$")
REG_CAPTION_RE = re.compile(r"^V3D\\?_(\w+) Register Description( \(Cont\.\))?$")
T48_ROW_RE = re.compile(r"^(0x[0-9a-f]{5})\t(V3D_[A-Z0-9_]+)\t([^\t]+)\t(8|16|32)$")
BITS_RE = re.compile(r"^(\d+)(?::(\d+))?$")
# A name spanning several per-bit fields: ICCS0_to_ICCS3, CTCLR0-CTCLR15, IC_QPU0_to_IC_QPU15.
RANGE_NAME_RE = re.compile(r"^([A-Z][A-Z0-9_]*?)(\d+)(?:_TO_|-)\1(\d+)$")
# "0 = Stopped", "0=half size", "(0 = not supported, 1 = supported)"; not "0 => 16K".
VALUE_RE = re.compile(r"(?:^|(?<=[\s(,]))(\d+)\s*=(?!>)\s*")


class Row:
    def __init__(self, msb: int, lsb: int, name: str, desc: list[str], access: str | None,
                 reset: str | None, line: str):
        self.msb, self.lsb, self.name = msb, lsb, name
        self.desc = desc  # description lines (first = the cell of the row itself)
        self.access, self.reset, self.line = access, reset, line

    @property
    def reserved(self) -> bool:
        return self.name in RESERVED_NAMES


class DescTable:
    def __init__(self, number: int, name: str):
        self.number, self.name = number, name
        self.rows: list[Row] = []
        self.whole_register = False  # Table 85 layout: no Bit(s) column, one field


def _err(msg: str) -> regdb.ExtractError:
    return regdb.ExtractError(f"vc4: {msg}")


def _section(text: str) -> list[str]:
    start = text.find(SECTION_START)
    end = text.find(SECTION_END, start)
    if start < 0 or end < 0:
        raise _err("Section 10 not found")
    return text[start:end].split("\n")


# ---------------------------------------------------------------------------------------------
# Table 48


def parse_table48(lines: list[str]) -> tuple[list[tuple[int, str, str, int]], int]:
    """Rows of Table 48 and the index of the first line after it."""
    rows = []
    i = 0
    while not lines[i].startswith("Table 48: V3D Registers"):
        i += 1
    while i < len(lines) and not lines[i].startswith(TABLE48_END):
        line = lines[i].rstrip()
        i += 1
        if not line or line.startswith("Table 48: V3D Registers") or line.startswith("Address Offs"):
            continue
        m = T48_ROW_RE.match(line)
        if not m:
            raise _err(f"unexpected line in Table 48: {line!r}")
        rows.append((int(m.group(1), 16), m.group(2), m.group(3).strip(), int(m.group(4))))
    if i >= len(lines):
        raise _err("end of Table 48 not found")
    return rows, i


# ---------------------------------------------------------------------------------------------
# Register description tables


def _cells(line: str) -> list[str]:
    cells = [c.strip() for c in line.split("\t")]
    while cells and not cells[-1]:
        cells.pop()
    return cells


def _split_row(cells: list[str], line: str) -> tuple[list[str], str | None, str | None]:
    """(description cells, type, reset) of the cells after Bit(s) and Field Name.

    The Type column is found from the right, because some OCR'd rows lose the (empty)
    Description cell (Table 91 Cont.) or gain an extra empty one (Table 92 Cont.).
    """
    type_at = [k for k, c in enumerate(cells) if c in TYPES]
    if not type_at:
        return [c for c in cells if c], None, None
    k = type_at[-1]
    after = cells[k + 1:]
    if len(after) > 1:
        raise _err(f"cells after Reset: {line!r}")
    desc = [c for c in cells[:k] if c]
    return desc, cells[k], (after[0] if after else None)


def parse_desc_tables(lines: list[str]) -> dict[str, DescTable]:
    tables: dict[str, DescTable] = {}
    cur: DescTable | None = None
    last_row: Row | None = None
    for raw in lines:
        line = raw.rstrip()
        cap = CAPTION_RE.match(line)
        if cap:
            m = REG_CAPTION_RE.match(cap.group(2).strip())
            last_row = None
            if not m:
                cur = None  # some other table (Table 82: performance counter sources)
                continue
            name = "V3D_" + m.group(1)
            number = int(cap.group(1))
            if m.group(2):
                cur = tables.get(name)
                if cur is None or cur.number != number:
                    raise _err(f"continuation of unknown table: {line!r}")
            else:
                if name in tables:
                    raise _err(f"table for {name} appears twice")
                cur = tables[name] = DescTable(number, name)
            continue
        if not line.strip():
            continue
        if line.startswith("#"):
            cur, last_row = None, None  # a heading ends the table; prose may follow
            continue
        if cur is None:
            continue  # prose between tables
        if line.startswith("Synops"):
            continue
        if line.startswith("Bit(s)\tField Name"):
            continue
        if line.startswith("Field Name\tDescription"):
            cur.whole_register = True  # Table 85: no Bit(s) column
            continue
        cells = _cells(line)
        if cur.whole_register:
            if cells and cells[0]:
                desc, typ, reset = _split_row(cells[1:], line)
                if typ is None:
                    raise _err(f"no Type in {line!r}")
                last_row = Row(31, 0, cells[0], desc, TYPES[typ], reset, line)
                cur.rows.append(last_row)
            else:
                raise _err(f"unexpected line in {cur.name} table: {line!r}")
            continue
        m = BITS_RE.match(cells[0]) if cells else None
        if m:
            msb = int(m.group(1))
            lsb = int(m.group(2)) if m.group(2) is not None else msb
            name = cells[1] if len(cells) > 1 else ""
            desc, typ, reset = _split_row(cells[2:], line)
            row = Row(msb, lsb, name, desc, TYPES[typ] if typ else None, reset, line)
            if not row.reserved and typ is None:
                raise _err(f"no Type column in {cur.name} row: {line!r}")
            if not name:
                raise _err(f"no Field Name in {cur.name} row: {line!r}")
            cur.rows.append(row)
            last_row = row
        elif cells and cells[0] == "":
            # Continuation line: more description, and sometimes the tail of a field name the
            # PDF wrapped ("UCCS0_to_UCC" + "S3", "CTCLR0-" + "CTCLR15").
            if last_row is None:
                raise _err(f"continuation line without a row in {cur.name}: {line!r}")
            rest = cells[1:]
            if rest and rest[0]:
                if last_row.reserved:
                    raise _err(f"name continuation of a reserved row: {line!r}")
                last_row.name += rest[0]
            more = [c for c in rest[1:] if c]
            if any(c.upper() in TYPES for c in more):
                raise _err(f"Type cell in a continuation line: {line!r}")
            last_row.desc += more
        else:
            raise _err(f"unexpected line in {cur.name} table: {line!r}")
    return tables


# ---------------------------------------------------------------------------------------------
# Fields


def _join(parts: list[str]) -> str:
    out = ""
    for p in parts:
        p = regdb.clean_ws(p)
        if not p:
            continue
        if out and out[-1] not in ".:;," and not p.startswith("("):
            out += "."
        out = f"{out} {p}" if out else p
    return out


def _value_name(text: str) -> str | None:
    text = re.sub(r"\([^)]*\)", " ", text)
    name = re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").upper()
    return name if regdb.NAME_RE.match(name) else None


def _values(desc_lines: list[str], width: int) -> list[regdb.Value]:
    """A clear value list in the description ("0 = Stopped" / "1 = Running"), or nothing."""
    if any(re.match(r"^If\b.*:$", d) for d in desc_lines):
        return []  # values that depend on another field (CTSUBS): text only
    found: list[tuple[int, str]] = []
    for d in desc_lines:
        ms = list(VALUE_RE.finditer(d))
        for j, m in enumerate(ms):
            end = ms[j + 1].start() if j + 1 < len(ms) else len(d)
            text = d[m.end():end]
            # "(0 = not supported, 1 = supported)": stop at the ")" closing the list.
            depth = 0
            for k, ch in enumerate(text):
                depth += {"(": 1, ")": -1}.get(ch, 0)
                if depth < 0:
                    text = text[:k]
                    break
            text = text.strip().rstrip(",;").strip()
            found.append((int(m.group(1)), text))
    if len(found) < 2:
        return []
    values = []
    for v, text in found:
        name = _value_name(text)
        if name is None or v >> width:
            return []
        values.append(regdb.Value(name, v, text))
    if len({v.value for v in values}) != len(values) or len({v.name for v in values}) != len(values):
        return []
    return values


def _field(row: Row, table: DescTable, reg_name: str) -> regdb.Field:
    name = re.sub(r"\s+", "", row.name).upper()
    desc_lines = [regdb.clean_ws(d) for d in row.desc if regdb.clean_ws(d)]
    width = row.msb - row.lsb + 1
    per_bit = RANGE_NAME_RE.match(name)
    if per_bit:
        # One bit per slice / QPU / counter: named after the common prefix, the doc's range
        # name kept in the description.
        base, lo, hi = per_bit.group(1), int(per_bit.group(2)), int(per_bit.group(3))
        if hi - lo + 1 != width or lo != 0:
            raise _err(f"{reg_name}: range name {row.name!r} does not match bits {row.msb}:{row.lsb}")
        desc_lines.insert(0, f"Bits {base}{lo}..{base}{hi}: bit n is {base}n")
        name = base
    if not regdb.NAME_RE.match(name):
        raise _err(f"{reg_name}: invalid field name {row.name!r} in Table {table.number}")
    if table.name in ("V3D_SQRSV0", "V3D_SQRSV1") and name.startswith("QPURSV"):
        # Table 62 prints the bit legend once, after the QPURSV0 row; it applies to every
        # QPURSVn field of V3D_SQRSV0 and V3D_SQRSV1.
        desc_lines = desc_lines[:1] + [
            "B[0] set: Do not use for User Programs",
            "B[1] set: Do not use for Fragment Shaders",
            "B[2] set: Do not use for Vertex Shaders",
            "B[3] set: Do not use for Coordinate Shaders",
        ]
    if table.name == "V3D_PCTRSn":
        desc_lines.append("The count source IDs (0-29) are listed in Table 82")
    reset = None
    if row.reset is not None:
        m = re.fullmatch(r"(\d+)(\*?)", row.reset)
        if m:
            reset = int(m.group(1))
            if m.group(2):
                desc_lines.append(
                    f"Reset {reset} is the reference configuration's value; it varies with the configuration"
                )
            if reset >> width:
                raise _err(f"{reg_name}.{name}: reset {reset} does not fit {width} bits")
        elif row.reset != '"V3D"':  # IDENT0.IDSTR: a string, numeric value set by a [[patch]]
            raise _err(f"{reg_name}.{name}: unparsed reset {row.reset!r}")
    values = [] if per_bit else _values(desc_lines, width)
    return regdb.Field(
        name=name,
        msb=row.msb,
        lsb=row.lsb,
        access=row.access,
        reset=reset,
        description=_join(desc_lines),
        values=values,
    )


def _check_tiling(table: DescTable) -> None:
    seen = 0
    for row in table.rows:
        if row.msb < row.lsb or row.msb > 31:
            raise _err(f"{table.name}: bad bit range in {row.line!r}")
        mask = ((1 << (row.msb - row.lsb + 1)) - 1) << row.lsb
        if seen & mask:
            raise _err(f"{table.name}: overlapping bits in {row.line!r}")
        seen |= mask
    if seen != 0xFFFFFFFF:
        raise _err(f"{table.name}: rows cover {seen:#010x}, not all 32 bits")


def _tables_for(t48_names: list[str], tables: dict[str, DescTable]) -> dict[str, DescTable]:
    """Table 48 register name -> its description table."""
    out: dict[str, DescTable] = {}
    used: set[str] = set()
    names = set(t48_names)
    for tname, table in tables.items():
        if tname in ORPHAN_TABLES:
            continue
        if tname in THREAD_NAMES:
            targets = THREAD_NAMES[tname]
        elif tname.startswith("V3D_CTn"):
            targets = [tname.replace("CTn", f"CT{n}") for n in range(2)]
        elif tname.endswith("n"):
            targets = [f"{tname[:-1]}{n}" for n in range(16)]  # V3D_PCTRn, V3D_PCTRSn
        else:
            targets = [tname]
        for t in targets:
            if t not in names:
                raise _err(f"Table {table.number} ({tname}) describes {t}, which Table 48 lacks")
            if t in out:
                raise _err(f"{t} has two description tables")
            out[t] = table
        used.add(tname)
    missing = [n for n in t48_names if n not in out]
    if missing:
        raise _err(f"Table 48 registers without a description table: {missing}")
    orphans = set(tables) - used
    if orphans != ORPHAN_TABLES:
        raise _err(f"description tables without a Table 48 register: {sorted(orphans)}")
    return out


# ---------------------------------------------------------------------------------------------


TABLE95 = "Table 95: Base Addresses for V3D Registers"
TABLE95_ROW = re.compile(r"^(BCM\d+)\t(0x[0-9a-f]{8})$")


def parse_base_addresses(text: str) -> list[regdb.Chipset]:
    """Appendix B, Table 95: one chipset per product, with the bus address of its V3D block."""
    start = text.rfind(TABLE95)
    if start < 0:
        raise _err("Appendix B Table 95 not found")
    chips = []
    for line in text[start + len(TABLE95) :].splitlines():
        m = TABLE95_ROW.match(line.strip())
        if m:
            chips.append(
                regdb.Chipset(
                    name=m.group(1),
                    description=f"{m.group(1)}: V3D registers at bus address {m.group(2)}",
                    source=f"{DOC_LABEL} Appendix B, Table 95",
                )
            )
        elif chips and line.strip():
            break
    if not chips:
        raise _err("Table 95 has no rows")
    return chips


def extract(text: str) -> regdb.Database:
    lines = _section(text)
    t48, after = parse_table48(lines)
    names = [r[1] for r in t48]
    if len(set(names)) != len(names) or len({r[0] for r in t48}) != len(t48):
        raise _err("duplicate name or offset in Table 48")
    tables = parse_desc_tables(lines[after:])
    for table in tables.values():
        if not table.rows:
            raise _err(f"Table {table.number} ({table.name}) has no rows")
        _check_tiling(table)
    by_reg = _tables_for(names, tables)

    db = regdb.Database(
        family=FAMILY,
        title="VideoCore IV V3D (Raspberry Pi 1-3)",
        document=DOCUMENT,
        doc_label=DOC_LABEL,
        chipsets=parse_base_addresses(text),
        blocks=[
            regdb.Block(
                name=BLOCK,
                description="V3D 3D pipeline registers; offsets count from the start of the V3D "
                "register window (4 KiB; its CPU address per chip is `Chipset::mmio_base`)",
                source=SECTION,
                base=0,
            )
        ],
    )
    for offset, name, desc, size in t48:
        table = by_reg[name]
        fields = [_field(row, table, name) for row in table.rows if not row.reserved]
        accesses = {f.access for f in fields}
        access = "r" if accesses == {"r"} else "w" if accesses == {"w"} else "rw"
        db.registers.append(
            regdb.Register(
                block=BLOCK,
                name=name,
                offset=offset,
                width=size,
                access=access,
                description=regdb.clean_ws(desc).rstrip("."),
                source=f"{SECTION}, Table 48, Table {table.number}",
                fields=fields,
            )
        )
    return db
