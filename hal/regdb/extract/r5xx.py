"""Radeon R5xx register database from amd-r5xx-acceleration.txt §11 (Registers).

Every register of §11.1 (Command Processor) … §11.12 (Z Buffer) is an entry of the form

    CP:CP_RB_CNTL · [R/W] · 32 bits · Access: 8/16/32 · MMReg:0x704
    DESCRIPTION: Ring Buffer Control
    Field Name	Bits	Default	Description
    RB_BUFSZ	5:0	0x0	Ring Buffer Size. …

The text is an OCR of the PDF: Cyrillic look-alike letters, LaTeX fragments (`\\cdot`, `$`),
words split by tabs, page-break junk (copyright lines, repeated header fragments) and table rows
whose description wraps onto following lines. This module normalises what can be normalised
mechanically and reports everything else as an ExtractError, to be fixed by a reviewed
`[[text]]` correction in corrections/r5xx.toml.

    python3 hal/regdb/extract/r5xx.py      # extract (with corrections) and print a summary
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import regdb  # noqa: E402
from regdb import Block, Database, ExtractError, Field, Register, Value  # noqa: E402

FAMILY = "r5xx"
DOCUMENT = "amd-r5xx-acceleration.txt"
TITLE = "Radeon R5xx (R520/RV515/RV530/RV560/RV570/R580)"
DOC_LABEL = "amd-r5xx-acceleration"

# Blocks for registers the document omits (filled by [[add]] corrections).
EXTRA_BLOCKS = [
    Block(
        name="RBBM",
        description="Register backbone (bus interface), registers the document omits",
        source="Linux radeon (r100.c, r300_reg.h, rs600d.h)",
    ),
]

# Cyrillic (and Greek) letters the OCR substituted for Latin look-alikes.
LOOKALIKES = str.maketrans(
    {
        "А": "A", "В": "B", "С": "C", "Е": "E", "Н": "H", "І": "I", "К": "K", "М": "M",
        "О": "O", "Р": "P", "Т": "T", "Х": "X", "У": "Y", "Ү": "Y", "Ѕ": "S", "Ј": "J",
        "а": "a", "с": "c", "е": "e", "і": "i", "о": "o", "р": "p", "х": "x", "у": "y",
        "ѕ": "s", "ј": "j", "Α": "A", "Β": "B", "Ε": "E", "Η": "H", "Ι": "I", "Κ": "K",
        "Μ": "M", "Ν": "N", "Ο": "O", "Ρ": "P", "Τ": "T", "Χ": "X", "Υ": "Y", "Ζ": "Z",
    }
)

SECTION_RE = re.compile(r"^11\.(\d+)\s+([A-Z][A-Za-z ]+?)\s*$")
HEADER_RE = re.compile(r"([A-Z][A-Z0-9]*):([A-Z][A-Z0-9_\[\]\-]*?)(?=·|\[[RWF\]]|$)")
MMREG_RE = re.compile(r"MMReg:(0x[0-9a-fA-F]+)(?:-(0x[0-9a-fA-F]+))?")
BITS_RE = re.compile(r"^(\d+)(?::(\d+))?$")
DEFAULT_RE = re.compile(r"^(none|0x[0-9a-fA-F]+|\d+)$")
FIELD_NAME_RE = re.compile(r"^([A-Z][A-Z0-9_]*)\s*((?:\([^)]*\)\s*)*)$")
JUNK_LINE_RE = re.compile(
    r"^(?:\s*|[\s\-|]+|.*©\s*2008 Advanced Micro Devices.*|Field Name\s+Bits\s+Default\s+Description\s*)$"
)
ARRAY_RE = re.compile(r"^([A-Z][A-Z0-9_]*?)_?\[(\d+)-(\d+)\](_[A-Z0-9_]+)?$")

# Register arrays whose instances are not evenly spaced, each instance list written out.
# VAP_VTX_AOS_ADDR[0-15] (0x20c8-0x2120) and VAP_VTX_AOS_ATTR[01-1415] (0x20c4-0x2118) share
# 24 dwords: one attribute word for each pair of arrays, then the pair's two addresses
# (ATTR01, ADDR0, ADDR1, ATTR23, ADDR2, ADDR3, …). The only layout consistent with both ranges.
SPLIT_ARRAYS = {
    "VAP_VTX_AOS_ADDR": [
        ("VAP_VTX_AOS_ADDR_EVEN", 0x20C8, 8, 12, "arrays 0, 2, … 14 (ADDRn for even n at 0x20c8 + 6n)"),
        ("VAP_VTX_AOS_ADDR_ODD", 0x20CC, 8, 12, "arrays 1, 3, … 15 (ADDRn for odd n at 0x20c4 + 6(n+1))"),
    ],
}
# Pair-named arrays: VAP_VTX_AOS_ATTR[01-1415] is 8 registers (arrays 0&1 … 14&15).
PAIR_ARRAYS = {"VAP_VTX_AOS_ATTR": 8}

# Registers the document gives two addresses (`MMReg:0x1d98, MMReg:0x2098`): the first is the
# register, the second an `_ALT` register with the same layout.
ALT_SUFFIX = "_ALT"

# The fragment shader instruction memory: each instruction is six words at 0x9000/0x9800/0xa000/
# 0xa800/0xb000/0xb800 + 4*n; texture and flow-control instructions reinterpret the ALU words
# (§8.3 Instruction Words). The ALU view is the register, the others alias it.
ALIASES = {
    "US_TEX_INST": "US_ALU_RGB_ADDR",
    "US_TEX_ADDR": "US_ALU_ALPHA_ADDR",
    "US_FC_INST": "US_ALU_ALPHA_ADDR",
    "US_TEX_ADDR_DXDY": "US_ALU_RGB_INST",
    "US_FC_ADDR": "US_ALU_RGB_INST",
}


def normalise(text: str) -> str:
    text = text.translate(LOOKALIKES)
    text = text.replace("\\cdot", "·").replace("•", "·").replace("\u00a0", " ")
    text = text.replace("$", "")
    text = re.sub(r"</?[ui]>", "", text)
    return text


def section_title(title: str) -> str:
    title = re.sub(r"\s+Registers$", "", title.strip())
    return title


class Entry:
    def __init__(self, header: str, section: int, lineno: int):
        self.header = header
        self.section = section
        self.lineno = lineno
        self.lines: list[str] = []


def split_entries(text: str) -> tuple[list[Entry], dict[int, str]]:
    lines = text.split("\n")
    start = next((i for i, l in enumerate(lines) if re.match(r"^11\. Registers\s*$", l)), None)
    if start is None:
        raise ExtractError("§11 Registers not found")
    entries: list[Entry] = []
    sections: dict[int, str] = {}
    section = 0
    i = start + 1
    while i < len(lines):
        line = lines[i]
        m = SECTION_RE.match(line)
        if m:
            n = int(m.group(1))
            if n <= section or n > 12:
                break  # end of §11.12 (or a §12 heading)
            section = n
            sections[n] = section_title(m.group(2))
            i += 1
            continue
        if "MMReg:" in line:
            header = line
            # A range split over two lines: `MMReg:0x2504-` / `0x257c`.
            if re.search(r"MMReg:0x[0-9a-fA-F]+-\s*$", header):
                j = i + 1
                while j < len(lines) and not lines[j].strip():
                    j += 1
                header = header.rstrip() + lines[j].strip()
                i = j
            entries.append(Entry(header, section, i + 1))
            i += 1
            continue
        if entries and section:
            entries[-1].lines.append(line)
        i += 1
    return entries, sections


def parse_header(e: Entry, prefixes: set[str]) -> dict:
    raw = e.header
    # Text run onto the header line after the MMReg (`MMReg:0x4208DESCRIPTION: …`).
    desc_inline = ""
    m = re.search(r"DESCRIPTION:", raw)
    if m:
        desc_inline = raw[m.start():]
        raw = raw[: m.start()]
    compact = re.sub(r"\s+", "", raw)
    # Page-break junk repeats the start of the header: take the last `PREFIX:NAME`.
    heads = list(HEADER_RE.finditer(compact))
    if not heads:
        raise ExtractError(f"line {e.lineno}: cannot parse register header {e.header!r}")
    h = heads[-1]
    prefix, name = h.group(1), h.group(2)
    # `CP:CP_ME_CNTL · [F<TAB>CP:CP_ME_CNTL · [R/W]`: the truncated access `[F` runs into the
    # repeated header; the prefix is the longest tail that starts some header line.
    while prefix not in prefixes and len(prefix) > 1:
        prefix = prefix[1:]
    if prefix not in prefixes:
        raise ExtractError(f"line {e.lineno}: unknown block prefix in {e.header!r}")
    rest = compact[h.end():]
    if "R/W" in rest or "R/V" in rest:
        access = "rw"
    elif "[R]" in rest:
        access = "r"
    elif "[W]" in rest:
        access = "w"
    else:
        raise ExtractError(f"line {e.lineno}: no access in header {e.header!r}")
    wm = re.search(r"·(8|16|32)bits", rest)
    width = int(wm.group(1)) if wm else 32
    offsets = [(int(a, 16), int(b, 16) if b else None) for a, b in MMREG_RE.findall(compact)]
    if not offsets:
        raise ExtractError(f"line {e.lineno}: no MMReg offset in {e.header!r}")
    return dict(prefix=prefix, name=name, access=access, width=width, offsets=offsets, desc_inline=desc_inline)


def is_junk(line: str) -> bool:
    return bool(JUNK_LINE_RE.match(line))


def junk_fragment(s: str) -> bool:
    """A cell fragment that carries no text (OCR specks)."""
    s = s.strip()
    return not s or not re.search(r"[A-Za-z0-9]", s) or len(s) <= 2 or bool(re.match(r"^[\d.\-]{1,4}$", s))


class RowError(Exception):
    pass


def parse_row(line: str):
    """A table row `NAME [(Access: X)]<TAB>bits<TAB>default<TAB>description`, or None."""
    if line.startswith(("\t", " ")):
        return None
    cells = line.split("\t")
    if len(cells) < 2:
        return None
    name_cell = cells[0].strip()
    m = FIELD_NAME_RE.match(name_cell)
    if not m:
        return None
    name, notes = m.group(1), m.group(2)
    bits_cell = cells[1].strip()
    rest = [c for c in cells[2:]]
    # `31 0x0`: bits and default merged by the OCR.
    bm = re.match(r"^(\d+(?:\s*:\s*\d+)?)\s+(none|0x[0-9a-fA-F]+)$", bits_cell)
    if bm:
        bits_cell = bm.group(1)
        rest = [bm.group(2)] + rest
    bits_cell = re.sub(r"\s+", "", bits_cell)
    bits = BITS_RE.match(bits_cell)
    if not bits:
        if re.match(r"^[\d.:\-]+$", bits_cell) or name_cell.isupper():
            raise RowError(f"field row with unparseable bits: {line!r}")
        return None
    msb = int(bits.group(1))
    lsb = int(bits.group(2)) if bits.group(2) is not None else msb
    default = None
    desc_cells = rest
    if rest and DEFAULT_RE.match(rest[0].strip()):
        d = rest[0].strip()
        default = None if d == "none" else int(d, 16) if d.startswith("0x") else int(d)
        desc_cells = rest[1:]
    elif rest and rest[0].strip() == "":
        desc_cells = rest[1:]
    elif rest and not re.search(r"[a-z]", rest[0]):
        raise RowError(f"field row with unparseable default {rest[0]!r}: {line!r}")
    access = None
    am = re.search(r"\(Access:\s*(R/W|R|W)\)", notes)
    if am:
        access = {"R": "r", "W": "w", "R/W": "rw"}[am.group(1)]
    desc = " ".join(c.strip() for c in desc_cells if not junk_fragment(c))
    return dict(name=name, msb=max(msb, lsb), lsb=min(msb, lsb), reset=default, access=access, desc=desc)


def parse_body(e: Entry, desc_inline: str, errors: list[str]) -> tuple[str, list[dict]]:
    desc_parts: list[str] = []
    fields: list[dict] = []
    in_table = False
    pending_access_note = None
    lines = list(e.lines)
    if desc_inline:
        # `DESCRIPTION: … Field Name Bits Default Description` on one line.
        head, _, tail = desc_inline.partition("Field Name")
        desc_parts.append(head.split("DESCRIPTION:")[-1])
        if tail:
            in_table = True
    for line in lines:
        if is_junk(line):
            if re.match(r"^Field Name", line.strip()):
                in_table = True
            continue
        if line.startswith("Field Name") or re.match(r"^Field Name\s", line):
            in_table = True
            continue
        if line.lstrip().startswith("DESCRIPTION:") and not in_table:
            # Page-break junk: `DESCRIPTION: Command Stread<TAB>DESCRIPTION: Command Stream …`.
            text = line.split("DESCRIPTION:")[-1]
            desc_parts = [text]
            continue
        if not in_table:
            try:
                row = parse_row(line)
            except RowError:
                row = None
            if row is None:
                desc_parts.append(line)
                continue
            in_table = True  # a table without its `Field Name` header line
        try:
            row = parse_row(line)
        except RowError as err:
            errors.append(f"entry at line {e.lineno}: {err}")
            continue
        if row:
            fields.append(row)
            continue
        if re.match(r"^Reserved\t", line):
            # `Reserved<TAB>bits<TAB>…Set to 0`: not a field
            fields.append(None)
            continue
        # Continuation of the previous field's description (or name notes like `(Access: W)`).
        cells = [c for c in line.split("\t")]
        if (
            len(cells) >= 3
            and cells[0].strip()
            and re.match(r"^[\d.:\-]+$", cells[1].strip())
            and not re.match(r"^\(", cells[0].strip())
        ):
            errors.append(f"entry at line {e.lineno}: garbled field row? {line!r}")
        note = re.match(r"^\s*\(Access:\s*(R/W|R|W)\)", line)
        if note and fields and fields[-1] is not None:
            fields[-1]["access"] = {"R": "r", "W": "w", "R/W": "rw"}[note.group(1)]
        text = " ".join(c.strip() for c in cells if not junk_fragment(c))
        if note:
            text = re.sub(r"^\(Access:\s*(R/W|R|W)\)\s*", "", text)
        if fields and fields[-1] is not None and text:
            fields[-1]["desc"] += " " + text
    description = regdb.clean_ws(" ".join(desc_parts))
    return description, [f for f in fields if f is not None]


# ---------------------------------------------------------------------------------------------
# Enumerated values

VALUE_NAME_MAX_WORDS = 8


# Operators become words when they stand alone (`Result / 2`, `A1+A0`); `1/2 size`, `INC/DEC`
# and `XY00->RGBA` keep them as plain separators.
OPERATORS = [(" <= ", " LE "), (" >= ", " GE "), (" < ", " LT "), (" > ", " GT "), (" * ", " MUL "),
             (" / ", " DIV "), ("+", " PLUS ")]


def value_name(text: str, full: bool = False) -> str | None:
    """UPPER_SNAKE name from a value's text: its words up to the first explanation separator
    (`:`, `. `, `(`, `;`, `=`), or all of its words when `full` (to tell apart `Increment:
    New value++ (clamp)` from `Increment: New value++ (wrap)`)."""
    t = text.strip()
    if not full:
        t = re.split(r":|\.(?:\s|$)|\(|;|=|\bDefault\b", t)[0]
    t = t.replace("'", "")
    t = re.sub(r"(?<=\d)\.(?=\d)", "_", t)
    for op, word in OPERATORS:
        t = re.sub(r"(?<=\w)" + re.escape(op) + r"(?=\w)", word, t)
    words = re.findall(r"[A-Za-z0-9]+", t)
    if not words:
        return None
    name = "_".join(words[:VALUE_NAME_MAX_WORDS]).upper()
    if not re.match(r"^[A-Z0-9][A-Z0-9_]*$", name):
        return None
    return name


def parse_values(desc: str, width: int) -> list[Value]:
    """`POSSIBLE VALUES: 00 - Text 01 - Text …`, `0 = Text 1 = Text`, `0=>Text, 1=>Text`."""
    items: list[tuple[int, str]] = []
    pv = re.search(r"POSSIBLE VALUES:", desc)
    if pv:
        body = desc[pv.end():]
        # Items are `00 - Text`; the OCR sometimes glues them (`(repeat)01 - Mirror02 - Clamp`).
        toks = list(re.finditer(r"(?:(?:(?<=\s)|(?<=^)|(?<=[.:]))(\d{1,3})|(?<![\d.])(\d{2})) - ", body))
        for i, t in enumerate(toks):
            end = toks[i + 1].start() if i + 1 < len(toks) else len(body)
            items.append((int(t.group(1) or t.group(2)), body[t.end():end].strip()))
    else:
        # A list of `N = Text` / `N= Text` / `N => Text` items (not `Default = 0`, not `3,5,7=`).
        toks = list(re.finditer(r"(?:(?<=\s)|(?<=^)|(?<=[(]))(\d{1,3})\s*(=>|=)\s*(?![\d\s]*$)", desc))
        if len(toks) < 2:
            return []
        if re.search(r"\d\s*[,\-]\s*\d+\s*=", desc):
            return []  # multi-valued items (`3,5,7= …`, `9-14= …`): not a plain list
        for i, t in enumerate(toks):
            end = toks[i + 1].start() if i + 1 < len(toks) else len(desc)
            items.append((int(t.group(1)), desc[t.end():end].strip()))
    texts: dict[int, str] = {}
    reserved: set[int] = set()
    if any(re.search(r"\d - ", text) for _, text in items):
        return []  # items glued beyond recognition (`HALF_REGION_003 - HALF_REGION_104`)
    for v, text in items:
        text = re.sub(r"\s*Default\s*=.*$", "", text).strip().rstrip(",")
        name = value_name(text)
        if name is None:
            return []
        if v in texts or v in reserved:
            continue  # an OCR-repeated item, often garbled: keep the first reading
        if name == "RESERVED":
            reserved.add(v)
            continue
        if v >> width:
            return []  # does not fit: not a value list of this field
        texts[v] = text
    if len(texts) < 2 and not pv:
        return []
    names = {v: value_name(t) for v, t in texts.items()}
    # Same short name for two values: use all of their words, then the value as a last resort.
    colliding = [v for v in names if list(names.values()).count(names[v]) > 1]
    for v in colliding:
        names[v] = value_name(texts[v], full=True) or names[v]
    seen: set[str] = set()
    values = []
    for v in sorted(texts):
        name = names[v]
        if name in seen or list(names.values()).count(name) > 1 and any(
            names[o] == name for o in texts if o < v
        ):
            name = f"{name}_{v}"
        seen.add(name)
        values.append(Value(name=name, value=v, description=regdb.clean_ws(texts[v])))
    return values


# ---------------------------------------------------------------------------------------------


def array_shape(name: str, start: int, end: int | None, lineno: int):
    """(base name, count, stride) for array/aperture entries; (name, None, None) otherwise."""
    m = ARRAY_RE.match(name)
    if end is None:
        if m:
            raise ExtractError(f"line {lineno}: array {name} without an offset range")
        return name, None, None
    if not m:
        # An aperture: a range of dwords under one name.
        return name, (end - start) // 4 + 1, 4
    base = m.group(1) + (m.group(4) or "")
    base = base.rstrip("_")
    lo, hi = int(m.group(2)), int(m.group(3))
    if base in PAIR_ARRAYS:
        count = PAIR_ARRAYS[base]
    else:
        count = hi - lo + 1
    if base in SPLIT_ARRAYS:
        return base, count, None
    if count < 2 or (end - start) % (count - 1):
        raise ExtractError(f"line {lineno}: {name}: range {start:#x}-{end:#x} does not hold {count} instances")
    return base, count, (end - start) // (count - 1)


def extract(text: str) -> Database:
    text = normalise(text)
    entries, sections = split_entries(text)
    db = Database(family=FAMILY, title=TITLE, document=DOCUMENT, doc_label=DOC_LABEL)
    blocks: dict[str, Block] = {}
    seen: dict[tuple[str, str], Register] = {}
    errors: list[str] = []
    prefixes = {m.group(1) for e in entries if (m := re.match(r"^\s*([A-Z][A-Z0-9]*):", e.header))}
    for e in entries:
        try:
            h = parse_header(e, prefixes)
        except ExtractError as err:
            errors.append(str(err))
            continue
        source = f"{DOC_LABEL} §11.{e.section}"
        prefix = h["prefix"]
        if prefix not in blocks:
            blocks[prefix] = Block(name=prefix, description=sections[e.section], source=source)
            db.blocks.append(blocks[prefix])
        description, rows = parse_body(e, h["desc_inline"], errors)
        start, end = h["offsets"][0]
        try:
            name, count, stride = array_shape(h["name"], start, end, e.lineno)
        except ExtractError as err:
            errors.append(str(err))
            continue
        if not regdb.NAME_RE.match(name):
            errors.append(f"line {e.lineno}: invalid register name {name!r} in {e.header!r}")
            continue
        fields = []
        for r in rows:
            fields.append(
                Field(
                    name=r["name"],
                    msb=r["msb"],
                    lsb=r["lsb"],
                    access=r["access"] if r["access"] and r["access"] != h["access"] else None,
                    reset=r["reset"],
                    description=regdb.clean_ws(r["desc"]),
                    values=parse_values(regdb.clean_ws(r["desc"]), r["msb"] - r["lsb"] + 1),
                )
            )
        regs = []
        if name in SPLIT_ARRAYS:
            for sub, off, cnt, strd, what in SPLIT_ARRAYS[name]:
                regs.append(
                    Register(
                        block=prefix, name=sub, offset=off, count=cnt, stride=strd,
                        description=f"{description} ({name}[0-15], {what})",
                        source=source, width=h["width"], access=h["access"], fields=fields,
                    )
                )
        else:
            regs.append(
                Register(
                    block=prefix, name=name, offset=start, count=count, stride=stride,
                    description=description, source=source, width=h["width"], access=h["access"],
                    fields=fields, alias_of=ALIASES.get(name),
                )
            )
            for extra, _ in h["offsets"][1:]:
                regs.append(
                    Register(
                        block=prefix, name=name + ALT_SUFFIX, offset=extra,
                        description=f"{description} (second address of {name})",
                        source=source, width=h["width"], access=h["access"],
                        fields=[Field(**{**f.__dict__, "values": list(f.values)}) for f in fields],
                    )
                )
        for reg in regs:
            key = (reg.block, reg.name)
            if key in seen:
                old = seen[key]
                if (old.offset, old.count, [(f.name, f.msb, f.lsb) for f in old.fields]) != (
                    reg.offset, reg.count, [(f.name, f.msb, f.lsb) for f in reg.fields]
                ):
                    errors.append(f"{reg.name} listed twice with different contents (line {e.lineno})")
                continue  # the document repeats the entry (SU_TEX_WRAP_PS3)
            seen[key] = reg
            db.registers.append(reg)
    if errors:
        raise ExtractError("\n  ".join([f"{len(errors)} problems:"] + errors))
    for b in EXTRA_BLOCKS:
        db.blocks.append(Block(name=b.name, description=b.description, source=b.source))
    return db


# ---------------------------------------------------------------------------------------------
# Summary / self-check (run this file directly)


def check(db: Database) -> list[str]:
    problems = []
    for r in db.registers:
        fs = sorted(r.fields, key=lambda f: f.lsb)
        names = set()
        for f in fs:
            if not regdb.NAME_RE.match(f.name):
                problems.append(f"{r.name}.{f.name}: invalid field name")
            if f.name in names:
                problems.append(f"{r.name}.{f.name}: duplicate field")
            names.add(f.name)
            if f.msb >= r.width:
                problems.append(f"{r.name}.{f.name}: bits {f.msb}:{f.lsb} outside {r.width}-bit register")
            if f.reset is not None and f.reset >> (f.msb - f.lsb + 1):
                problems.append(f"{r.name}.{f.name}: reset {f.reset:#x} does not fit {f.msb}:{f.lsb}")
            if f.access and r.access != "rw" and f.access != r.access:
                problems.append(f"{r.name}.{f.name}: access {f.access} in {r.access} register")
        for a, b in zip(fs, fs[1:]):
            if b.lsb <= a.msb:
                problems.append(f"{r.name}: fields {a.name} {a.msb}:{a.lsb} and {b.name} {b.msb}:{b.lsb} overlap")
    by_addr: dict[tuple[str, int], list[Register]] = {}
    for r in db.registers:
        for i in range(r.count or 1):
            by_addr.setdefault((r.block, r.offset + i * (r.stride or 0)), []).append(r)
    for (blk, off), regs in sorted(by_addr.items()):
        if len(regs) > 1:
            roots = {r.alias_of or r.name for r in regs}
            if len(roots) > 1:
                problems.append(f"{blk}+{off:#x}: {', '.join(r.name for r in regs)} share the address")
    return problems


def main() -> int:
    import extract as driver  # the family-independent driver (applies the corrections)

    text = driver.build(FAMILY)
    import tomllib

    data = tomllib.loads(text)
    regs = data.get("register", [])
    fields = [f for r in regs for f in r.get("field", [])]
    enums = [f for f in fields if f.get("value")]
    corr = regdb.load_corrections(FAMILY)
    print(
        f"r5xx: {len(regs)} registers, {len({r['name'] for r in regs})} distinct names, "
        f"{len(fields)} fields, {len(enums)} enumerated fields; corrections: "
        + ", ".join(f"{k} {len(corr.get(k, []))}" for k in ("text", "patch", "drop", "add"))
    )
    # Re-run the checks on the corrected database.
    db = Database(family=FAMILY, title=TITLE, document=DOCUMENT, doc_label=DOC_LABEL)
    for r in regs:
        db.registers.append(regdb._register_from_dict(r))
    problems = check(db)
    for p in problems:
        print("  problem:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
