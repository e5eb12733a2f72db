"""nVidia register database from the envytools documentation (nvidia-hardware-envytools.txt).

What the document describes, and where:

* §2.10.x (falcon microprocessor): the IO space common to every falcon engine, as prose entries
  `MMIO 0x180 / I[0x06000]: CODE_INDEX` (host offset / falcon I[] address) followed by bit lists,
  and the "Common IO register list" table of §2.10.10 (Host, Falcon, Present on, Name). Offsets
  are relative to the engine's base, so the FALCON block is relative.
* §2.5.2 (PDAEMON): the PDAEMON-specific IO registers (host 0x400 and up), in the same entry
  syntax. PDAEMON sits at BAR0 0x10a000 ("BAR0 address" in its parameter list): absolute block.
* §2.8.3 (DMA submission): the channel control area table (addr, R/W, name): PFIFO_USER, relative
  to the channel's control area.
* PTIMER: the document has no PTIMER chapter; §2.10.11 names the addresses of TIME_LOW / TIME_HIGH
  ("Alias of PTIMER's TIME_LOW register [MMIO 0x9400]"). PMC has no register chapter at all; its
  registers come from corrections/nvidia.toml ([[add]], from public origins: envytools rnndb and hwdocs, Linux nouveau).
* PBUS, PFIFO: no register chapters either; their registers (envytools rnndb bus/pbus.xml,
  fifo/g80_pfifo.xml) are [[add]]s.

Chipsets: the §2.2.2 GPU list gives the order chipset ranges are written against ("NVxx:NVyy" is
left-inclusive, right-noninclusive in that order); the §2.2.3 comparison table gives each GPU's id
(the PMC_BOOT_0 chipset code) and PCI device IDs. Block instances: the "falcon parameters" of an
engine give its "BAR0 address" (PDAEMON, PDISPLAY's daemon) and §2.8.3 the G80 channel control
areas; the other falcon engines' bases come from corrections/nvidia.toml.

A register's "Present on" annotation is either a chipset range (`chipsets`) or, for the falcon
IO space, a class of falcon units (`units`: "v3+ units", "crypto units"): which registers an
engine has depends on its falcon version and options, not only on the chipset.

Every falcon entry is checked against the indexed host/falcon address relation of §2.10.10
(I[] address = host offset << 6, on the G98:GF119 engines this document describes); a mismatch
is an extraction error, resolved by a reviewed [[text]] correction.
"""

from __future__ import annotations

import re

import regdb
from regdb import Block, Database, ExtractError, Field, Register, Value, clean_ws

FAMILY = "nvidia"
DOCUMENT = "nvidia-hardware-envytools.txt"
LABEL = "nvidia-hardware-envytools"
TITLE = "nVidia Tesla / Fermi (G80 \u2026 GF100)"

PTIMER_BASE = 0x9000
# The BAR0 PMEM window (envytools rnndb nv_mmio.xml); the document has no chapter for it.
PMEM_BASE = 0x700000

# ---------------------------------------------------------------------------------------------
# Text helpers


def unescape(text: str) -> str:
    """Undo the markdown of the PDF conversion: escapes, bold, HTML entities, superscripts."""
    text = re.sub(r"\\([_*\[\]&$|#<>])", r"\1", text)
    text = text.replace("**", "")
    text = text.replace("&amp;", "&")
    text = re.sub(r"<sup>(\d+)</sup>", r"^\1", text)
    return text


SECTION_RE = re.compile(r"^(?:#+\s*)?(2\.\d+(?:\.\d+)?)\s+([A-Za-z].*)$")


def sections(lines: list[str]) -> list[tuple[int, str, str]]:
    """(first line, number, title) of every numbered chapter-2 heading, in document order."""
    out = []
    for i, line in enumerate(lines):
        m = SECTION_RE.match(line)
        if m:
            out.append((i, m.group(1), clean_ws(m.group(2))))
    return out


def section_text(lines: list[str], secs, number: str) -> str:
    """The text of section `number` (up to the next numbered heading), markdown undone."""
    for k, (start, num, _title) in enumerate(secs):
        if num == number:
            end = secs[k + 1][0] if k + 1 < len(secs) else len(lines)
            return unescape("\n".join(lines[start + 1 : end]))
    raise ExtractError(f"section {number} not found")


def to_int(s: str) -> int:
    return int(s, 16) if s.lower().startswith("0x") else int(s, 10)


# Chipset / falcon-version annotations, envytools style: [G80:GF100], [GT215-], [NV40+], [v3+ only].
CHIP = r"(?:NV|G|GT|GF|GK|GM|GP|MCP)\d+[A-Z]?"
VARIANT_RE = re.compile(rf"^(?:{CHIP}(?::{CHIP})?[-+]?|:{CHIP}|v\d+\+?(?: only)?)$")


# Table 18 "Present on" classes of falcon units, as database unit classes (§2.10.1 versions).
UNIT_CLASSES = {
    "v3+": ("V3_PLUS", "falcon units of version 3 and later (GT215+ engines, \u00a72.10.1)"),
    "v4+": ("V4_PLUS", "falcon units of version 4 and later (some engines of GF119+, \u00a72.10.1)"),
    "v5+": ("V5_PLUS", "falcon units of version 5 (some engines of GK208+, \u00a72.10.1)"),
    "v0, v3": (
        "V0_AND_V3",
        "falcon units of versions 0 and 3 only: the host-only registers of the indexed IO window "
        "(G98:GF119, \u00a72.10.10)",
    ),
    "crypto": ("CRYPTO", "units with the cryptographic coprocessor ('secretful' units, \u00a72.10.1)"),
    "UAS": ("UAS", "units with a unified address space (Table 18 'UAS units')"),
}
CHIP_RANGE_RE = re.compile(rf"^{CHIP}(?::{CHIP}|-)?$")


def presence(v: str | None) -> tuple[str | None, str | None]:
    """A normalised "present on" annotation as (chipsets, units)."""
    if v is None:
        return None, None
    if v in UNIT_CLASSES:
        return None, UNIT_CLASSES[v][0]
    if CHIP_RANGE_RE.match(v):
        return v, None
    raise ExtractError(f"unknown 'present on' annotation {v!r}")


def norm_variant(v: str) -> str:
    """`GF119+` -> `GF119-` (envytools open range); `v3+ only` / `v3+ units` -> `v3+`."""
    v = clean_ws(v)
    v = re.sub(r"\s+(?:only|units)$", "", v)
    if re.fullmatch(rf"{CHIP}\+", v):
        v = v[:-1] + "-"
    return v


WORD_RE = re.compile(r"^[A-Z][A-Z0-9_]*$")


def snake(words: str) -> str | None:
    """`write autoincrement` -> `WRITE_AUTOINCREMENT`; None when it does not make a name."""
    tokens = re.findall(r"[A-Za-z0-9]+", words)
    if not tokens or len(tokens) > 4:
        return None
    if tokens[-1].lower() == "flag" and len(tokens) > 1:
        tokens = tokens[:-1]
    name = "_".join(t.upper() for t in tokens)
    return name if WORD_RE.match(name) else None


def name_of(desc: str) -> tuple[str | None, str]:
    """Split a bit-list item into (NAME, rest). The doc writes `NAME description`, or only a
    lower-case description whose leading words then make the name."""
    desc = desc.strip()
    m = re.match(r"([A-Z][A-Z0-9_]+)(?=$|[\s.:,\[-])[.:]?\s*(.*)$", desc, re.S)
    if m and m.group(1) not in ("A", "XXX"):
        return m.group(1), m.group(2)
    if desc.startswith("???") or desc.startswith("XXX"):
        return None, desc
    head = re.split(r"[:.\[(,;]| - | if ", desc, maxsplit=1)[0]
    return snake(head), desc


# ---------------------------------------------------------------------------------------------
# Bit lists and value lists

BIT_RE = re.compile(r"(?:(?<=\s)|^)[Bb]its?\s+(\d+)(?:\s*-\s*(\d+))?:\s*")
VALUE_RE = re.compile(r"(?:(?<=\s)|^)(?:-\s+)?(\d+):\s+")
# `GT215:GF100: bit 0: ...` - one layout per chipset range inside one entry.
LAYOUT_RE = re.compile(rf"(?:(?<=\s)|^)({CHIP}(?::{CHIP})?\+?):\s+(?=[Bb]its?\s+\d)")


def access_marker(text: str) -> str | None:
    if re.search(r"\[RO\]|^\s*Read-only", text):
        return "r"
    if re.search(r"\[WO\]|^\s*Write-only", text):
        return "w"
    return None


def parse_values(text: str, width: int) -> tuple[list[Value], str]:
    """Enumerated values `0: NAME description` listed in a field's text; (values, text before)."""
    parts = VALUE_RE.split(text)
    head = parts[0]
    values: list[Value] = []
    seen_names: set[str] = set()
    seen_values: set[int] = set()
    for k in range(1, len(parts) - 1, 2):
        value, desc = int(parts[k]), clean_ws(parts[k + 1])
        name, _rest = name_of(desc)
        if name is None or desc.startswith("XXX"):
            continue  # unknown encodings (`0: XXX`) are not named
        if value >> width or name in seen_names or value in seen_values:
            return [], text  # not a clean enumeration of this field: keep none
        seen_names.add(name)
        seen_values.add(value)
        values.append(Value(name=name, value=value, description=desc))
    return values, head


def parse_fields(text: str, reg_access: str) -> list[Field]:
    """Fields from `bit N: NAME ...` / `bits A-B: NAME ...` items (envytools writes low-high)."""
    fields: list[Field] = []
    marks = list(BIT_RE.finditer(text))
    for k, m in enumerate(marks):
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) else lo
        lsb, msb = min(lo, hi), max(lo, hi)
        end = marks[k + 1].start() if k + 1 < len(marks) else len(text)
        body = text[m.end() : end]
        values, head = parse_values(body, msb - lsb + 1)
        head = re.split(r"\n\s*\n", head.strip(), maxsplit=1)[0]  # the item's own paragraph
        if head.strip().startswith(("???", "XXX")):
            continue  # `bit 1: ???`: unknown bits stay out of the field list
        name, rest = name_of(head)
        if name is not None and head.strip().startswith(name):
            # `RUNNING when 0, ...` / `TIMER - set whenever ...`: the description is the rest.
            head = re.sub(r"^[\s\-:]+", "", rest) or name
        if name is None:
            # A description that does not make a name (`bits 2-15: bits 2-15 of the physical
            # code address to poke`): a positional name, renamed by a reviewed correction.
            name = f"BITS_{lsb}_{msb}" if msb != lsb else f"BIT_{lsb}"
        access = access_marker(head.strip())
        if access == reg_access:
            access = None
        fields.append(
            Field(name=name, msb=msb, lsb=lsb, access=access, description=clean_ws(re.sub(r"[\u2022]|\s-\s*$", " ", head)), values=values)
        )
    # The same name twice with chipset tags (`MC_IDLE [GF100-]`, `MC_IDLE [GT215:GF100]`):
    # suffix the tag so each bit keeps a unique name.
    counts: dict[str, int] = {}
    for f in fields:
        counts[f.name] = counts.get(f.name, 0) + 1
    for f in fields:
        if counts[f.name] > 1:
            tag = re.search(r"\[([^\]]+)\]", f.description)
            if tag and VARIANT_RE.match(norm_variant(tag.group(1))):
                f.name = f"{f.name}_{re.sub(r'[^A-Z0-9]+', '_', norm_variant(tag.group(1)).upper()).strip('_')}"
    return fields


# ---------------------------------------------------------------------------------------------
# `MMIO 0x... / I[0x...]: NAME` entries

HEX = r"0x[0-9a-fA-F]+"
ENTRY_RE = re.compile(
    rf"MMIO\s+(?P<mmio>{HEX})(?:\s*\+\s*i\s*\*\s*(?P<mstride>{HEX}|\d+))?"
    rf"(?:\s*/\s*I\[(?P<io>{HEX})(?:\s*\+\s*i\s*\*\s*(?P<istride>{HEX}|\d+))?\])?"
    rf"(?:\s*,\s*i\s*<\s*(?P<count>\d+))?"
    rf"\s*(?::\s*|\[)(?P<name>[A-Z][A-Z0-9_]*)(?:\[i\])?\]?"
    rf"(?:[ \t]*\[(?P<tag>[^\]\n]+)\])?"
)


def description_of(text: str) -> str:
    """The first paragraph of an entry's prose before its bit list, as one line."""
    text = re.sub(r"```|[\u2022]", " ", text)
    paragraphs = [clean_ws(p) for p in re.split(r"\n\s*\n", text)]
    paragraphs = [p for p in paragraphs if p.strip(" -")]
    text = paragraphs[0] if paragraphs else ""
    text = re.sub(r"(?:\s*(?:-|Bits:))+$", "", text).strip()
    if len(text) > 320:
        cut = text.rfind(". ", 0, 320)
        text = text[: cut + 1] if cut > 0 else text[:320]
    return text


def intro_of(before: str) -> str:
    """The paragraph right before an entry, when it introduces it (`... register was introduced:`)."""
    before = before.rstrip().rstrip("#")  # an entry on a heading line: `# MMIO 0x120 ...`
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", before) if p.strip()]
    if not paragraphs:
        return ""
    last = clean_ws(paragraphs[-1].lstrip("#"))
    if last.endswith(":") and "MMIO 0x" not in last and not BIT_RE.search(last):
        return last
    return ""


def parse_entries(text: str, block: str, source: str, io_space: bool) -> list[Register]:
    """Every `MMIO ...: NAME` entry of one section, with the text up to the next entry or
    heading as its body (description, bit list, value lists)."""
    matches = list(ENTRY_RE.finditer(text))
    regs: list[Register] = []
    bodies: list[str] = []
    for k, m in enumerate(matches):
        end = matches[k + 1].start() if k + 1 < len(matches) else len(text)
        heading = re.search(r"\n#", text[m.end() : end])
        if heading:
            end = m.end() + heading.start()
        # `Todo:` notes are the authors' questions, not register facts.
        bodies.append(re.sub(r"(?m)^\s*Todo:.*$", "", text[m.end() : end]))

    # An entry with no text of its own, directly followed by another, shares that one's prose
    # (`MMIO 0x4c8 ...: RFIFO_PUT MMIO 0x4cc ...: RFIFO_GET` + one description of both).
    shared = [""] * len(matches)
    for k in range(len(matches) - 1, -1, -1):
        own = bodies[k].strip()
        if not own and k + 1 < len(matches):
            shared[k] = shared[k + 1]
        else:
            first = BIT_RE.search(bodies[k])
            layout = LAYOUT_RE.search(bodies[k])
            cut = min(x.start() for x in (first, layout) if x) if (first or layout) else len(bodies[k])
            shared[k] = bodies[k][:cut]

    for k, m in enumerate(matches):
        name = m.group("name")
        offset = to_int(m.group("mmio"))
        io = to_int(m.group("io")) if m.group("io") else None
        stride = to_int(m.group("mstride")) if m.group("mstride") else None
        io_stride = to_int(m.group("istride")) if m.group("istride") else None
        count = int(m.group("count")) if m.group("count") else None
        variant = None
        tag = m.group("tag")
        if tag and VARIANT_RE.match(norm_variant(tag)):
            variant = norm_variant(tag)
        if io_space:
            # §2.10.10: host falcon_base + X is falcon I[X << 6] (indexed IO addressing).
            if io is not None and io != offset << 6:
                raise ExtractError(f"{name}: I[{io:#x}] is not MMIO {offset:#x} << 6 - correct the text")
            if io_stride is not None and (stride is None or io_stride != stride << 6):
                raise ExtractError(f"{name}: I[] stride {io_stride:#x} does not match MMIO stride {stride}")
        body = bodies[k]
        pre = shared[k]
        desc = description_of(pre)
        access = "rw"
        if re.search(r"\bread[- ]only\b", pre, re.I):
            access = "r"
        elif re.search(r"\bwrite[- ]only\b|\bWO\b", pre, re.I):
            access = "w"
        reset = None
        r = re.search(rf"(?:set|initiali[sz]ed) to ({HEX}) on reset", body)
        if r:
            reset = int(r.group(1), 16)

        layouts = list(LAYOUT_RE.finditer(body))
        groups: list[tuple[str | None, str]] = []
        if len(layouts) >= 2:
            for j, lm in enumerate(layouts):
                lend = layouts[j + 1].start() if j + 1 < len(layouts) else len(body)
                groups.append((norm_variant(lm.group(1)), body[lm.end() : lend]))
        else:
            groups.append((variant, body))
        for gvariant, gbody in groups:
            fields = parse_fields(gbody, access)
            if not desc:
                desc = intro_of(text[: m.start()])
            if not desc and len(fields) == 1:
                desc = fields[0].description

            chipsets, units = presence(gvariant)
            regs.append(
                Register(
                    block=block,
                    name=name,
                    offset=offset,
                    description=desc,
                    source=source,
                    access=access,
                    count=count,
                    stride=stride,
                    chipsets=chipsets,
                    units=units,
                    io_address=io,
                    io_stride=io_stride if stride is not None else None,
                    reset=reset,
                    fields=fields,
                )
            )

    # "Both of these registers are read-only." closes a pair of entries (§2.10.11 TIME_LOW/HIGH).
    for k, m in enumerate(matches):
        if re.search(r"\bBoth of these registers are read-only", bodies[k]) and k >= 1:
            for r in regs:
                if r.name in (matches[k].group("name"), matches[k - 1].group("name")):
                    r.access = "r"
    return regs


# ---------------------------------------------------------------------------------------------
# §2.10.10 "Common IO register list" table

TABLE_ROW_RE = re.compile(
    r"^(?:[^\t0]*\t)?(?P<host>0x[0-9a-f]{3})\t(?P<io>0x[0-9a-f]{5}|-)\t(?P<present>[^\t]+)\t"
    r"(?P<name>[A-Z][A-Z0-9_]*)(?:\[(?P<index>\d+)\])?\t(?P<desc>[^\t]*)$"
)


def table_variant(present: str) -> str | None:
    present = clean_ws(present)
    if present == "all units":
        return None
    return norm_variant(present)


def parse_io_table(text: str) -> list[dict]:
    """Rows of the common IO register list that are internally consistent (I[] = host << 6,
    or host-only `-` rows in the 0xf00 host window); the OCR-scrambled rows are left out."""
    rows = []
    for line in text.splitlines():
        m = TABLE_ROW_RE.match(line)
        if not m:
            continue
        host = int(m.group("host"), 16)
        io = None if m.group("io") == "-" else int(m.group("io"), 16)
        if io is None and host < 0xF00:
            continue
        if io is not None and io != host << 6:
            continue
        desc = clean_ws(re.sub(r"\[falcon/[^\]]*\]", "", m.group("desc")))
        rows.append(
            {
                "host": host,
                "io": io,
                "variant": table_variant(m.group("present")),
                "name": m.group("name"),
                "index": int(m.group("index")) if m.group("index") else None,
                "desc": desc,
            }
        )
    return rows


def merge_io_table(regs: list[Register], rows: list[dict], source: str) -> list[Register]:
    """Table rows add the chipset annotation to prose registers at the same offset and become
    registers of their own where the prose has none (UC_CTRL, FIFO_*, CHANNEL_*, ...)."""
    by_offset: dict[int, Register] = {}
    for r in regs:
        by_offset.setdefault(r.offset, r)
    arrays: dict[str, list[dict]] = {}
    out: list[Register] = []
    prose_names = {r.name for r in regs}
    for row in rows:
        if row["name"] in prose_names and row["index"]:
            continue  # DATA_INDEX[n] / DATA[n], n > 0: the prose array describes them
        known = by_offset.get(row["host"])
        if known is not None:
            if known.chipsets is None and known.units is None:
                known.chipsets, known.units = presence(row["variant"])
            if not known.description:
                known.description = row["desc"]
            if known.name != row["name"]:
                known.description = clean_ws(f"{known.description} (Table 18 name: {row['name']}.)")
            continue
        if row["index"] is not None:
            arrays.setdefault(row["name"], []).append(row)
            continue
        chipsets, units = presence(row["variant"])
        out.append(
            Register(
                block="FALCON",
                name=row["name"],
                offset=row["host"],
                description=row["desc"],
                source=source,
                chipsets=chipsets,
                units=units,
                io_address=row["io"],
            )
        )
    for name, items in arrays.items():
        items.sort(key=lambda r: r["index"])
        if [r["index"] for r in items] != list(range(len(items))) or len(items) < 2:
            raise ExtractError(f"table array {name}: indices {[r['index'] for r in items]}")
        stride = items[1]["host"] - items[0]["host"]
        if any(b["host"] - a["host"] != stride for a, b in zip(items, items[1:])):
            raise ExtractError(f"table array {name}: uneven stride")
        chipsets, units = presence(items[0]["variant"])
        out.append(
            Register(
                block="FALCON",
                name=name,
                offset=items[0]["host"],
                description=items[0]["desc"],
                source=source,
                count=len(items),
                stride=stride,
                chipsets=chipsets,
                units=units,
                io_address=items[0]["io"],
                io_stride=stride << 6 if items[0]["io"] is not None else None,
            )
        )
    return out


# ---------------------------------------------------------------------------------------------
# §2.8.3 channel control area

USER_ROW_RE = re.compile(r"^(?P<addr>0x[0-9a-f]+)\t(?P<rw>R/W|R|W)\t(?P<name>[^\t]+)\t(?P<desc>.*)$")
FOOTNOTES = {"^2": "NV4-style DMA mode only", "^3": "IB mode only", "^1": "set by the kernel at channel setup"}


def parse_channel_area(text: str, source: str) -> list[Register]:
    start = text.find("Channel control area")
    if start < 0:
        raise ExtractError("§2.8.3: no channel control area")
    lines = text[start:].splitlines()
    regs: list[Register] = []
    current = None
    for line in lines[1:]:
        if line.startswith("On NV4:NV40"):
            break
        m = USER_ROW_RE.match(line)
        if m:
            current = None
            name = m.group("name").strip()
            if not WORD_RE.match(name):
                continue  # `0x50 R/W ??? GF100+ only`
            desc = clean_ws(m.group("desc"))
            current = Register(
                block="PFIFO_USER",
                name=name,
                offset=int(m.group("addr"), 16),
                description=desc,
                source=source,
                access={"R/W": "rw", "R": "r", "W": "w"}[m.group("rw")],
            )
            regs.append(current)
        elif current is not None and line.startswith("\t") and line.strip():
            current.description = clean_ws(current.description + " " + line)
    for r in regs:
        notes = [text for mark, text in FOOTNOTES.items() if mark in r.description]
        for mark in FOOTNOTES:
            r.description = clean_ws(r.description.replace(mark, ""))
        v = re.search(r"\b(nv|NV)(\d+)\+ only\b", r.description)
        if v:
            r.chipsets = f"NV{v.group(2)}-"
        if notes:
            r.description = f"{r.description} [{'; '.join(notes)}]"
    return regs


# ---------------------------------------------------------------------------------------------
# §2.2.2 GPU list (order) and §2.2.3 comparison table (GPU id, PCI IDs)

CHIP_TOKEN_RE = re.compile(r"\b(NV[0-9A-F]{1,2}T?|G[0-9]{2,3}|GT[0-9]{3}|GF[0-9]{3}|GK[0-9]{2,3}[A-Z]?|GM[0-9]{2,3}[A-Z]?|GP[0-9]{3}|GV[0-9]{3}|TU[0-9]{3}|MCP[0-9]{2}|C51|RSX)\b")
COMPARISON_HEADER = "Name\tGPU id\tGPU generation"
PCI_RANGE_RE = re.compile(r"0x([0-9a-f]{4})(?:-0x([0-9a-f]{4}))?")


def parse_gpu_order(text: str) -> list[str]:
    """The §2.2.2 list of every known GPU, in the order ranges are written against."""
    start = text.find("The full known GPU list")
    end = text.find("### NV1 family", start)
    if start < 0 or end < 0:
        raise ExtractError("\u00a72.2.2 GPU list not found")
    names: list[str] = []
    for line in text[start:end].splitlines()[1:]:
        if ":" not in line:
            continue
        for name in CHIP_TOKEN_RE.findall(line.split(":", 1)[1]):
            if name in names:
                raise ExtractError(f"\u00a72.2.2 lists {name} twice")
            names.append(name)
    if len(names) < 50:
        raise ExtractError(f"\u00a72.2.2 GPU list: only {len(names)} names")
    return names


def parse_comparison_table(text: str) -> dict[str, tuple[str, int | None, int | None, list[tuple[int, int]]]]:
    """§2.2.3 rows: name -> (generation, GPU id, PCI vendor, PCI device ID ranges)."""
    start = text.find("# 2.2.3 Comparison table")
    end = text.find("# 2.3 nVidia PCI id database", start)
    if start < 0 or end < 0:
        raise ExtractError("\u00a72.2.3 comparison table not found")
    rows = {}
    for line in text[start:end].splitlines():
        cells = line.split("\t")
        if len(cells) < 6 or line.startswith(COMPARISON_HEADER) or not CHIP_TOKEN_RE.fullmatch(cells[0]):
            continue
        gpu_id = int(cells[1], 16) if re.fullmatch(r"0x[0-9a-f]{3}", cells[1]) else None
        vendor = re.match(r"0x([0-9a-f]{4})", cells[5])
        ranges = []
        if len(cells) > 6:
            for m in PCI_RANGE_RE.finditer(cells[6]):
                first = int(m.group(1), 16)
                ranges.append((first, int(m.group(2), 16) if m.group(2) else first))
        rows[cells[0]] = (cells[2], gpu_id, int(vendor.group(1), 16) if vendor else None, ranges)
    return rows


def extract_chipsets(text: str) -> list[regdb.Chipset]:
    order = parse_gpu_order(text)
    table = parse_comparison_table(text)
    chips = []
    for name in order:
        generation, gpu_id, vendor, ranges = table.get(name, (None, None, None, []))
        family = f", {generation} family" if generation else ""
        pci = [regdb.PciIds(vendor=vendor, first=a, last=b) for a, b in ranges] if vendor else []
        chips.append(
            regdb.Chipset(
                name=name,
                description=f"{name}{family}",
                source=f"{LABEL} \u00a72.2.2 (order), \u00a72.2.3 (GPU id, PCI IDs)",
                id=gpu_id,
                pci=pci,
            )
        )
    return chips


# Engines whose "falcon parameters" give a BAR0 address: heading text -> instance name.
FALCON_ENGINES = {"PDAEMON: card management microprocesor": "PDAEMON", "PDISPLAY's monitoring engine": "PDISPLAY_DAEMON"}


def extract_falcon_instances(text: str) -> list[regdb.Instance]:
    """Every "falcon parameters" list with a "BAR0 address": the engine (named by the heading
    above it), its base and the chipsets of its first revision onwards."""
    out = []
    for m in re.finditer(r"(?m)^#+\s*falcon parameters\s*$", text):
        block = unescape(text[m.end() : m.end() + 600])
        base = re.search(r"BAR0 address:\s*(0x[0-9a-f]+)", block)
        first = re.search(rf"v0:\s*({CHIP})", block)
        if not base:
            continue
        headings = re.findall(r"(?m)^#+\s*(?:[\d.]+\s+)?(.+?)\s*$", unescape(text[: m.start()]))
        heading = next((h.strip("* ") for h in reversed(headings[-4:]) if h.strip("* ") in FALCON_ENGINES), None)
        if heading is None or not first:
            raise ExtractError(f"falcon parameters with a BAR0 address under an unknown heading: {headings[-3:]}")
        name = FALCON_ENGINES[heading]
        out.append(
            regdb.Instance(
                name=name,
                base=int(base.group(1), 16),
                chipsets=f"{first.group(1)}-",
                description=f"{name}'s falcon IO space (BAR0 address from its falcon parameters)",
                source=f"{LABEL} falcon parameters of {heading}",
            )
        )
    if {i.name for i in out} != set(FALCON_ENGINES.values()):
        raise ExtractError(f"falcon engines found: {[i.name for i in out]}")
    return out


def extract_user_areas(area_text: str, source: str) -> list[regdb.Instance]:
    """§2.8.3: where the G80 channel control areas are (channel 0 is PIO-only, elsewhere)."""
    m = re.search(
        r"channels (\d+)-(\d+) support DMA mode and have channel control areas at (0x[0-9a-f]+) \+ (0x[0-9a-f]+) \* channel ID",
        clean_ws(area_text),
    )
    if not m:
        raise ExtractError("\u00a72.8.3: G80 channel control area addresses not found")
    first, last = int(m.group(1)), int(m.group(2))
    return [
        regdb.Instance(
            name="USER_G80",
            base=int(m.group(3), 16),
            count=last - first + 1,
            stride=int(m.group(4), 16),
            first=first,
            chipsets="G80:GF100",
            description=f"channel control areas of G80:GF100 DMA channels {first}-{last}, indexed by channel ID "
            "(GF100 moved them to BAR1)",
            source=source,
        )
    ]


# ---------------------------------------------------------------------------------------------


def extract(text: str) -> Database:
    lines = text.splitlines()
    secs = sections(lines)
    cite = lambda num: f"{LABEL} \u00a7{num}"  # noqa: E731

    db = Database(family=FAMILY, title=TITLE, document=DOCUMENT, doc_label=LABEL)
    db.chipsets = extract_chipsets(text)
    falcon_instances = extract_falcon_instances(text)
    pdaemon_base = next(i.base for i in falcon_instances if i.name == "PDAEMON")
    db.blocks = [
        Block(
            name="PMC",
            description="Master control: GPU identification, engine enables, interrupt status "
            "(BAR0 0x000000:0x001000, \u00a72.4.1; the document has no PMC register chapter)",
            source=cite("2.4.1"),
            base=0x0,
        ),
        Block(
            name="PBUS",
            description="Bus control (BAR0 0x001000:0x002000). The document has no PBUS chapter; its "
            "registers come from envytools rnndb bus/pbus.xml",
            source="envytools rnndb bus/pbus.xml",
            base=0x1000,
        ),
        Block(
            name="PFIFO",
            description="Command submission (G80:GF100 layout): interrupts, the channel table, "
            "CACHE1 (the current channel's pusher and puller state). The document describes PFIFO's "
            "user-visible side (\u00a72.8) but not its registers; they come from envytools rnndb "
            "fifo/g80_pfifo.xml",
            source="envytools rnndb fifo/g80_pfifo.xml; behaviour nvidia-hardware-envytools \u00a72.8",
            base=0x2000,
        ),
        Block(
            name="PTIMER",
            description="Wall-clock timer. Base 0x9000 is envytools' PTIMER range; the document only "
            "gives the TIME_LOW/TIME_HIGH addresses (\u00a72.10.11)",
            source=cite("2.10.11"),
            base=PTIMER_BASE,
        ),
        Block(
            name="RAMFC",
            description="A channel's RAMFC (G84+: a 0x100-byte object in memory that CHAN_TABLE "
            "points at): the pusher and puller state PFIFO saves while the channel is not running "
            "(\u00a72.8.1 'RAMFC: area of VRAM storing the above'). Word offsets from envytools rnndb "
            "fifo/g80_pfifo.xml G80_RAMFC; no BAR0 instance: it is written through PMEM",
            source=cite("2.8.1"),
            relative=True,
        ),
        Block(
            name="PMEM",
            description="The 1 MiB BAR0 window onto VRAM (or system memory) at the address "
            "PBUS.PMEM_WINDOW selects (envytools rnndb nv_mmio.xml, bus/pbus.xml): how channel "
            "structures are written before any VM exists",
            source=cite("2.7.8"),
            base=PMEM_BASE,
        ),
        Block(
            name="PFIFO_USER",
            description="Channel control area (USER): one per channel; its offsets count from the "
            "channel's area (instances: the G80 areas in BAR0)",
            source=cite("2.8.3"),
            relative=True,
            instances=extract_user_areas(section_text(lines, secs, "2.8.3"), cite("2.8.3")),
        ),
        Block(
            name="FALCON",
            description="falcon IO space common to every falcon engine; its offsets count from the "
            "engine's base (the instances); io_address is the falcon I[] address (host offset << 6, "
            "indexed addressing)",
            source=cite("2.10.10"),
            relative=True,
            instances=falcon_instances,
            unit_classes=[regdb.UnitClass(name=n, description=d) for n, d in UNIT_CLASSES.values()],
        ),
        Block(
            name="PDAEMON",
            description="PDAEMON-specific IO registers (GT215 layout; I[] addresses are those of "
            "the indexed IO space, GT215:GF119)",
            source=cite("2.5.2"),
            base=pdaemon_base,
        ),
    ]

    # falcon: every §2.10.x section with entries.
    falcon: list[Register] = []
    falcon_secs = sorted({num for _, num, _ in secs if num.startswith("2.10.")}, key=lambda n: int(n.split(".")[2]))
    io_table: list[dict] = []
    for num in falcon_secs:
        body = section_text(lines, secs, num)
        falcon += parse_entries(body, "FALCON", cite(num), io_space=True)
        if "Common IO register list" in body:
            io_table = parse_io_table(body)
    if not io_table:
        raise ExtractError("§2.10.10 common IO register list not found")
    falcon += merge_io_table(falcon, io_table, cite("2.10.10"))
    db.registers += falcon

    # PTIMER: the time registers the falcon aliases name ("[MMIO 0x9400]").
    t11 = section_text(lines, secs, "2.10.11")
    for m in re.finditer(r"Alias of PTIMER's ([A-Z][A-Z0-9_]*) register \[MMIO (0x[0-9a-f]+)\]", t11):
        addr = int(m.group(2), 16)
        db.registers.append(
            Register(
                block="PTIMER",
                name=m.group(1),
                offset=addr - PTIMER_BASE,
                description=f"PTIMER time, {'low' if 'LOW' in m.group(1) else 'high'} word "
                "(aliased read-only into every falcon IO space)",
                source=cite("2.10.11"),
            )
        )

    # PDAEMON.
    db.registers += parse_entries(section_text(lines, secs, "2.5.2"), "PDAEMON", cite("2.5.2"), io_space=True)

    # PFIFO channel control area.
    db.registers += parse_channel_area(section_text(lines, secs, "2.8.3"), cite("2.8.3"))

    for r in db.registers:
        if not regdb.NAME_RE.match(r.name):
            raise ExtractError(f"bad register name {r.name!r}")
    return db
